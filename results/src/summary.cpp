#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include <fmt/format.h>

#include "scalebench/exec_path.hpp"
#include "scalebench/report.hpp"
#include "scalebench/stats.hpp"
#include "summary_util.hpp"

namespace sb::results {
namespace detail {

std::string canonical_path(const std::string& path) {
  const auto p = parse_exec_path(path);
  return p ? std::string(to_string(*p)) : path;
}

std::string case_device(const json& c) {
  const std::string d = str(c, "device");
  if (d == "cpu" || d == "gpu") return d;
  const auto p = parse_exec_path(str(c, "path"));
  if (p) return device_of(*p) == Device::gpu ? "gpu" : "cpu";
  return d;
}

std::string params_text(const json& params) {
  std::string out;
  if (!params.is_object()) return out;
  for (const auto& [k, v] : params.items()) {
    if (!out.empty()) out += ',';
    out += k + '=' + (v.is_string() ? v.get<std::string>() : v.dump());
  }
  return out;
}

std::string case_label(const json& c) {
  const std::string id = str(c, "id");
  if (!id.empty()) return id;
  return fmt::format("{}/{}/{}", str(c, "workload"), str(c, "path"), params_text(sub(c, "params")));
}

bool validation_failed(const json& c) {
  const json& v = sub(c, "validation");
  if (!v.is_array()) return false;
  return std::any_of(v.begin(), v.end(), [](const json& e) {
    return e.is_object() && e.contains("pass") && e["pass"].is_boolean() && !e["pass"].get<bool>();
  });
}

double rate_unit_scale(const std::string& unit) {
  std::string u;
  for (char ch : unit)
    if (!std::isspace(static_cast<unsigned char>(ch))) u += static_cast<char>(std::tolower(ch));
  for (const char* suffix : {"/s", "ps"}) {
    const std::string s(suffix);
    if (u.size() > s.size() && u.compare(u.size() - s.size(), s.size(), s) == 0) {
      u.resize(u.size() - s.size());
      break;
    }
  }
  for (const char* base : {"bytes", "byte", "flops", "flop", "b"}) {
    const std::string b(base);
    if (u.size() >= b.size() && u.compare(u.size() - b.size(), b.size(), b) == 0) {
      u.resize(u.size() - b.size());
      break;
    }
  }
  static const std::map<std::string, double> prefixes{{"", 1.0},
                                                      {"k", 1e3},
                                                      {"m", 1e6},
                                                      {"g", 1e9},
                                                      {"t", 1e12},
                                                      {"p", 1e15},
                                                      {"ki", 1024.0},
                                                      {"mi", 1048576.0},
                                                      {"gi", 1073741824.0},
                                                      {"ti", 1099511627776.0}};
  const auto it = prefixes.find(u);
  return it != prefixes.end() ? it->second : 1.0;
}

}  // namespace detail

namespace {

using json = nlohmann::json;
using detail::kNaN;
using detail::num;
using detail::str;
using detail::sub;

/// Median of the ceilings of one kind (in base units per second), NaN when none.
double ceiling_of(const json& ceilings, const std::string& kind) {
  std::vector<double> v;
  if (!ceilings.is_array()) return kNaN;
  for (const auto& c : ceilings) {
    if (str(c, "kind") != kind) continue;
    const double x = num(c, "value") * detail::rate_unit_scale(str(c, "unit"));
    if (std::isfinite(x) && x > 0) v.push_back(x);
  }
  return median(v);
}

struct Throughput {
  double value = kNaN;
  std::string unit;
};

Throughput throughput_of(const json& c, double median_s) {
  const json& work = sub(c, "work");
  const double units = num(work, "units");
  if (std::isfinite(units) && units > 0 && std::isfinite(median_s) && median_s > 0)
    return {units / median_s, str(work, "unit", "units") + "/s"};
  const json& metrics = sub(c, "metrics");
  const double t = num(metrics, "throughput");
  if (std::isfinite(t)) return {t, str(metrics, "throughput_unit")};
  return {};
}

struct Efficiency {
  double value = kNaN;
  std::string ceiling;
};

Efficiency efficiency_of(const json& c, const json& ceilings, double median_s, double workers) {
  const json& work = sub(c, "work");
  const std::string bound = str(work, "bound");
  const double bytes = num(work, "bytes");
  const double flops = num(work, "flops");
  const bool by_bytes = bound == "bytes" || (bound.empty() && bytes > 0);
  const bool by_flops = !by_bytes && (bound == "flops" || (bound.empty() && flops > 0));
  if (!(by_bytes || by_flops) || !std::isfinite(median_s) || median_s <= 0) return {};
  const double amount = by_bytes ? bytes : flops;
  if (!std::isfinite(amount) || amount <= 0) return {};
  const bool gpu = detail::case_device(c) == "gpu";
  const std::string kind =
      gpu ? (by_bytes ? "copy_bandwidth" : "fp64_gemm") : (by_bytes ? "stream_triad" : "dgemm");
  const double per_device = ceiling_of(ceilings, kind);
  if (!std::isfinite(per_device)) return {};
  const double ceiling = per_device * std::max(1.0, workers);
  return {amount / median_s / ceiling, kind};
}

std::string reference_key(const json& c) {
  return str(c, "workload") + '\n' + sub(c, "params").dump();
}

}  // namespace

nlohmann::json summarize(const nlohmann::json& model) {
  const json& cases = sub(model, "cases");
  const json& ceilings = sub(sub(model, "system"), "ceilings");
  json rows = json::array();
  if (!cases.is_array()) return rows;

  struct Row {
    std::vector<double> totals;
    double median = kNaN;
    Throughput tp;
  };
  std::vector<Row> pre(cases.size());
  std::map<std::string, double> single_cpu, single_gpu;  // reference throughput per key
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const json& c = cases[i];
    pre[i].totals = detail::phase_times(c, "total");
    pre[i].median = median(pre[i].totals);
    pre[i].tp = throughput_of(c, pre[i].median);
    if (str(c, "status") != "ok" || !std::isfinite(pre[i].tp.value) || pre[i].tp.value <= 0)
      continue;
    const std::string path = detail::canonical_path(str(c, "path"));
    if (path == "single-cpu") single_cpu.emplace(reference_key(c), pre[i].tp.value);
    if (path == "single-gpu") single_gpu.emplace(reference_key(c), pre[i].tp.value);
  }

  for (std::size_t i = 0; i < cases.size(); ++i) {
    const json& c = cases[i];
    const Row& p = pre[i];
    const double workers = num(c, "workers", 1.0);
    auto speedup = [&](const std::map<std::string, double>& ref) {
      const auto it = ref.find(reference_key(c));
      return (it == ref.end() || !std::isfinite(p.tp.value)) ? kNaN : p.tp.value / it->second;
    };
    const Efficiency eff = efficiency_of(c, ceilings, p.median, workers);
    json row;
    row["case"] = detail::case_label(c);
    row["workload"] = str(c, "workload");
    row["path"] = detail::canonical_path(str(c, "path"));
    row["workers"] = static_cast<std::int64_t>(num(c, "workers", 0.0));
    row["status"] = str(c, "status", "unknown");
    row["repeats"] = static_cast<std::int64_t>(p.totals.size());
    row["median_s"] = p.median;
    row["min_s"] = min_of(p.totals);
    row["max_s"] = max_of(p.totals);
    row["stddev_s"] = stddev(p.totals);
    row["throughput"] = p.tp.value;
    row["throughput_unit"] = p.tp.unit;
    row["speedup_vs_single_cpu"] = speedup(single_cpu);
    row["speedup_vs_single_gpu"] = speedup(single_gpu);
    row["efficiency"] = eff.value;
    row["ceiling"] = eff.ceiling;
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace sb::results
