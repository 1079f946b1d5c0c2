/// The run at a glance for the top of the table, Markdown and HTML formats: status and case
/// tally, hosts and their CPU/GPU models, scheduler and job, when; and the ceilings that the
/// efficiency column used.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "format_util.hpp"
#include "formats.hpp"
#include "scalebench/report.hpp"
#include "summary_util.hpp"

namespace sb::results::detail {
namespace {

/// Seconds since the epoch of "YYYY-MM-DDTHH:MM:SSZ"; NaN when it is not that.
double utc_seconds(const std::string& t) {
  std::tm tm{};
  if (std::sscanf(t.c_str(), "%d-%d-%dT%d:%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec) != 6)
    return kNaN;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return static_cast<double>(timegm(&tm));
}

std::string duration_text(double s) {
  if (!std::isfinite(s) || s < 0) return {};
  const auto t = static_cast<long long>(std::llround(s));
  if (t < 60) return fmt::format("{} s", t);
  if (t < 3600) return fmt::format("{} min {} s", t / 60, t % 60);
  return fmt::format("{} h {} min", t / 3600, (t % 3600) / 60);
}

/// "a, b and 2 more" of distinct values in first-seen order, with "N x " counts when repeated.
std::string counted(const std::vector<std::string>& items) {
  std::vector<std::pair<std::string, int>> n;
  for (const auto& i : items) {
    auto it = std::find_if(n.begin(), n.end(), [&](const auto& p) { return p.first == i; });
    if (it == n.end()) {
      n.emplace_back(i, 1);
    } else {
      ++it->second;
    }
  }
  std::string out;
  for (const auto& [k, c] : n)
    out += (out.empty() ? "" : ", ") + (c > 1 ? fmt::format("{} \xC3\x97 {}", c, k) : k);
  return out;
}

}  // namespace

Headline headline_of(const json& model) {
  Headline h;
  const json& a = sub(model, "attrs");
  h.status = str(a, "status", "unknown");
  if (h.status.empty()) h.status = "unknown";
  const json& cases = sub(model, "cases");
  for (const auto& c : cases.is_array() ? cases : json::array()) {
    ++h.cases;
    const std::string s = str(c, "status");
    if (s == "ok") {
      ++h.ok;
    } else if (s == "failed") {
      ++h.failed;
    } else if (s == "skipped") {
      ++h.skipped;
    } else if (s == "timeout") {
      ++h.timeout;
    } else {
      ++h.other;
    }
  }
  h.tally = fmt::format("{} ok, {} failed, {} skipped", h.ok, h.failed, h.skipped);
  if (h.timeout > 0) h.tally += fmt::format(", {} timed out", h.timeout);
  if (h.other > 0) h.tally += fmt::format(", {} other", h.other);
  h.tally += fmt::format(" ({} case{})", h.cases, h.cases == 1 ? "" : "s");
  if (const auto never = never_run_cases(model); !never.empty())
    h.tally += fmt::format("; {} of {} planned never ran", never.size(), sub(model, "plan").size());

  const json& sys = sub(model, "system");
  const json& nodes = sub(sys, "nodes");
  std::vector<std::string> hosts, cpus;
  for (const auto& n : nodes.is_array() ? nodes : json::array()) {
    hosts.push_back(str(n, "host", "?"));
    std::string cpu = str(n, "cpu_model", "unknown CPU");
    std::vector<std::string> facts;
    if (const double c = num(n, "cores"); std::isfinite(c))
      facts.push_back(fmt::format("{} cores", static_cast<long long>(c)));
    if (const double m = num(n, "memory_bytes"); std::isfinite(m)) facts.push_back(human_bytes(m));
    if (!facts.empty()) cpu += " (" + facts[0] + (facts.size() > 1 ? ", " + facts[1] : "") + ")";
    cpus.push_back(cpu);
  }
  if (hosts.size() == 1) {
    h.hosts = hosts.front();
  } else if (!hosts.empty()) {
    std::string list;
    for (std::size_t i = 0; i < hosts.size() && i < 4; ++i) list += (i ? ", " : "") + hosts[i];
    if (hosts.size() > 4) list += ", ...";
    h.hosts = fmt::format("{} nodes: {}", hosts.size(), list);
  }
  h.cpus = counted(cpus);
  std::vector<std::string> gpus;
  const json& g = sub(sys, "gpus");
  for (const auto& d : g.is_array() ? g : json::array()) {
    std::string name = str(d, "name", "GPU");
    if (const double m = num(d, "memory_bytes"); std::isfinite(m))
      name += " (" + human_bytes(m) + ")";
    gpus.push_back(name);
  }
  h.gpus = counted(gpus);

  const std::string sched = str(a, "scheduler");
  const std::string job = str(a, "job_id");
  h.job = "scheduler " + (sched.empty() ? std::string("unknown") : sched);
  if (!job.empty()) h.job += ", job " + job;
  h.preset = str(a, "preset");
  const std::string start = str(a, "start_utc"), end = str(a, "end_utc");
  if (!start.empty()) {
    h.when = start;
    if (!end.empty()) {
      // the end's date is said again only when it differs
      const bool same_day = end.size() > 11 && start.compare(0, 11, end, 0, 11) == 0;
      h.when += " .. " + (same_day ? end.substr(11) : end);
      const std::string d = duration_text(utc_seconds(end) - utc_seconds(start));
      if (!d.empty()) h.when += " (" + d + ")";
    }
  }
  return h;
}

std::string ceilings_used(const json& model, const json& summary) {
  const json& ceilings = sub(sub(model, "system"), "ceilings");
  std::map<std::string, std::string> used;  // kind -> unit
  for (const auto& r : summary.is_array() ? summary : json::array()) {
    const std::string k = str(r, "ceiling");
    if (!k.empty()) used.emplace(k, str(r, "ceiling_unit"));
  }
  std::vector<std::string> parts;
  std::string cached;  // the oldest date of a cached ceiling
  for (const char* k :
       {"stream_triad", "dgemm", "philox_simd", "copy_bandwidth", "fp64_gemm", "philox"}) {
    const auto it = used.find(k);
    if (it == used.end()) continue;
    const bool gpu = std::string(k) == "copy_bandwidth" || std::string(k) == "fp64_gemm" ||
                     std::string(k) == "philox";
    std::set<int> threads;
    for (const auto& c : ceilings.is_array() ? ceilings : json::array()) {
      if (str(c, "kind") != k) continue;
      if (!gpu && num(c, "threads") > 0) threads.insert(static_cast<int>(num(c, "threads")));
      if (str(c, "source") == "cached" && (cached.empty() || str(c, "measured_utc") < cached))
        cached = str(c, "measured_utc");
    }
    if (gpu || threads.size() < 2) {
      parts.push_back(fmt::format("{} {} per {}", k,
                                  human_rate(ceiling_median(ceilings, k), it->second),
                                  gpu ? "GPU" : "CPU worker"));
      continue;
    }
    std::string per;
    for (const int t : threads)
      per +=
          fmt::format("{}{} ({} thread{})", per.empty() ? "" : ", ",
                      human_rate(ceiling_median(ceilings, k, t), it->second), t, t == 1 ? "" : "s");
    parts.push_back(fmt::format("{} {}", k, per));
  }
  if (parts.empty()) return {};
  std::string out = "ceilings used: ";
  for (std::size_t i = 0; i < parts.size(); ++i) out += (i ? ", " : "") + parts[i];
  if (!cached.empty()) out += fmt::format(" (cached, measured {})", cached.substr(0, 10));
  return out;
}

}  // namespace sb::results::detail
