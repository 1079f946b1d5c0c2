// Reference files (references.hpp).
#include "scalebench/references.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>
#include <tuple>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "scalebench/input_file.hpp"

#include "scalebench/error.hpp"
#include "scalebench/stats.hpp"
#include "summary_util.hpp"

namespace sb::results {
namespace {

constexpr std::size_t kMaxReferenceFileBytes = 64u << 20;

using json = nlohmann::json;

std::string where(const std::string& name, const toml::node& n) {
  const auto& src = n.source();
  return src.begin ? fmt::format("{}:{}", name, src.begin.line) : name;
}

double number(const std::string& name, const toml::node& n, const char* key) {
  if (!n.is_number())
    throw UsageError(fmt::format("{}: '{}' must be a number", where(name, n), key));
  return *n.value<double>();
}

Reference read_entry(const std::string& name, const toml::table& t) {
  Reference r;
  r.file = name;
  bool has_case = false, has_median = false, has_bandwidth = false;
  for (const auto& [k, v] : t) {
    const std::string key(k.str());
    if (key == "model" && v.is_string()) {
      r.model = *v.value<std::string>();
    } else if (key == "case" && v.is_string()) {
      const std::string text = *v.value<std::string>();
      if (text == "link/host-to-device" || text == "link/device-to-host") {
        r.workload = "link";
        r.path = text.substr(5);
        has_case = true;
        continue;
      }
      const auto a = text.find('/');
      const auto b = a == std::string::npos ? a : text.find('/', a + 1);
      if (b == std::string::npos)
        throw UsageError(
            fmt::format("{}: case '{}' is not workload/path/parameters", where(name, v), text));
      r.workload = text.substr(0, a);
      r.path = detail::canonical_path(text.substr(a + 1, b - a - 1));
      r.params = text.substr(b + 1);
      has_case = true;
    } else if (key == "median_s") {
      r.median_s = number(name, v, "median_s");
      if (!(r.median_s > 0) || !std::isfinite(r.median_s))
        throw UsageError(fmt::format("{}: median_s must be above 0", where(name, v)));
      has_median = true;
    } else if (key == "bytes_per_s") {
      r.bytes_per_s = number(name, v, "bytes_per_s");
      if (!(r.bytes_per_s > 0) || !std::isfinite(r.bytes_per_s))
        throw UsageError(fmt::format("{}: bytes_per_s must be above 0", where(name, v)));
      has_bandwidth = true;
    } else if (key == "tolerance") {
      r.tolerance = number(name, v, "tolerance");
      if (!(r.tolerance >= 0 && r.tolerance <= 10))
        throw UsageError(
            fmt::format("{}: tolerance must lie between 0 and 10 (a fraction: "
                        "0.1 is 10%)",
                        where(name, v)));
    } else if (key == "source" && v.is_string()) {
      r.source = *v.value<std::string>();
    } else {
      throw UsageError(fmt::format(
          "{}: unknown or mistyped key '{}' in [[reference]] (known: model, case, median_s, "
          "bytes_per_s, tolerance, source)",
          where(name, v), key));
    }
  }
  const bool link = r.workload == "link";
  if (link ? has_median : has_bandwidth)
    throw UsageError(fmt::format(
        "{}: {}", where(name, t),
        link ? "a link/... reference takes bytes_per_s, not median_s"
             : "bytes_per_s is for link/host-to-device and link/device-to-host references"));
  if (r.model.empty() || !has_case || (link ? !has_bandwidth : !has_median))
    throw UsageError(fmt::format(
        "{}: a [[reference]] needs model, case and median_s (a link/... case: bytes_per_s)",
        where(name, t)));
  return r;
}

/// A TOML basic string: quotes, backslashes and control characters escaped.
std::string toml_string(const std::string& text) {
  std::string out = "\"";
  for (const char ch : text) {
    const auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (u < 0x20 || u == 0x7f) {
      out += fmt::format("\\u{:04x}", u);
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

}  // namespace

void read_references_text(const std::string& text, const std::string& name, ReferenceSet& set) {
  toml::table tbl;
  try {
    tbl = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    throw UsageError(fmt::format("{}:{}: {}", name, e.source().begin.line, e.description()));
  }
  for (const auto& [k, node] : tbl) {
    const std::string key(k.str());
    const auto* arr = node.as_array();
    if (key != "reference" || arr == nullptr)
      throw UsageError(
          fmt::format("{}: unknown key '{}' (a reference file holds [[reference]] "
                      "tables)",
                      where(name, node), key));
    for (const auto& e : *arr) {
      const auto* t = e.as_table();
      if (t == nullptr)
        throw UsageError(
            fmt::format("{}: 'reference' must be [[reference]] tables", where(name, e)));
      set.entries.push_back(read_entry(name, *t));
    }
  }
  set.files.push_back(name);
}

void read_references(const std::string& path, ReferenceSet& set) {
  // Never a FIFO or a device (input_file.hpp); a missing file: "cannot read reference file ...".
  read_references_text(read_input_file(path, "reference file", kMaxReferenceFileBytes), path, set);
}

std::string reference_path(const std::string& record_path) {
  const std::string p = detail::canonical_path(record_path);
  return p == "each-gpu" ? "single-gpu" : p;
}

const Reference* find_reference(const ReferenceSet& set, const std::string& model,
                                const std::string& workload, const std::string& path,
                                const std::string& params) {
  if (model.empty()) return nullptr;
  const std::string want = reference_path(path);
  for (const auto& r : set.entries)
    if (r.workload == workload && reference_path(r.path) == want && r.params == params &&
        fnmatch(r.model.c_str(), model.c_str(), 0) == 0)
      return &r;
  return nullptr;
}

std::string make_references(const json& model, double min_tolerance,
                            const std::string& report_name) {
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  std::map<Key, std::vector<double>> groups;
  for (const auto& c : detail::sub(model, "cases")) {
    const std::string path = reference_path(detail::str(c, "path"));
    const std::string dmodel = detail::str(c, "device_model");
    const double med = detail::num(detail::sub(c, "metrics"), "median_s");
    if (detail::str(c, "status") != "ok" || dmodel.empty() || !(med > 0) ||
        (path != "single-gpu" && path != "each-node"))
      continue;
    groups[{dmodel, path, detail::str(c, "workload"),
            detail::params_text(detail::sub(c, "params"))}]
        .push_back(med);
  }
  // Host links: per GPU model and direction, every GPU's bandwidth.
  std::map<std::pair<std::string, std::string>, std::vector<double>> links;
  for (const auto& l : detail::sub(detail::sub(model, "system"), "host_links")) {
    const double bw = detail::num(l, "bytes_per_s");
    if (bw > 0 && !detail::str(l, "model").empty())
      links[{detail::str(l, "model"), detail::str(l, "direction")}].push_back(bw);
  }
  if (groups.empty() && links.empty())
    throw UsageError(fmt::format(
        "{} holds no ok single-gpu, each-gpu or each-node case with a device model: nothing to "
        "make references from",
        report_name));
  const json& a = detail::sub(model, "attrs");
  std::string out = fmt::format(
      "# scalebench reference figures (docs/acceptance.md), made by `scalebench report "
      "--make-references` from\n# {} (scalebench {}, git {}, {}).\n# median_s: the median over "
      "the devices of each device's median time; tolerance: the larger of\n# {:.0f}% and three "
      "times the devices' robust spread (1.4826 MAD / median).\n",
      report_name, detail::str(a, "scalebench_version", "?"), detail::str(a, "git_sha", "?"),
      detail::str(a, "start_utc", "?"), 100.0 * min_tolerance);
  for (const auto& [key, values] : groups) {
    const auto& [dmodel, path, workload, params] = key;
    const double med = median(values);
    std::vector<double> dev;
    for (double v : values) dev.push_back(std::abs(v - med));
    const double spread = values.size() >= 3 ? 1.4826 * median(dev) / med : 0.0;
    const double tol = std::ceil(100.0 * std::max(min_tolerance, 3.0 * spread) - 1e-9) / 100.0;
    // Written by hand, in the order docs/acceptance.md shows the keys.
    out += fmt::format(
        "\n[[reference]]\nmodel = {}\ncase = {}\nmedian_s = {:.6g}\ntolerance = {:.2f}\nsource = "
        "{}\n",
        toml_string(dmodel), toml_string(workload + "/" + path + "/" + params), med, tol,
        toml_string(fmt::format("{}: {} device(s), {}", report_name, values.size(),
                                detail::str(a, "start_utc", "?"))));
  }
  for (const auto& [key, values] : links) {
    const auto& [dmodel, direction] = key;
    const double med = median(values);
    std::vector<double> dev;
    for (double v : values) dev.push_back(std::abs(v - med));
    const double spread = values.size() >= 3 ? 1.4826 * median(dev) / med : 0.0;
    const double tol =
        std::ceil(100.0 * std::max(std::max(min_tolerance, 0.15), 3.0 * spread) - 1e-9) / 100.0;
    out += fmt::format(
        "\n[[reference]]\nmodel = {}\ncase = {}\nbytes_per_s = {:.4g}\ntolerance = {:.2f}\n"
        "source = {}\n",
        toml_string(dmodel), toml_string("link/" + direction), med, tol,
        toml_string(fmt::format("{}: {} GPU(s), {}", report_name, values.size(),
                                detail::str(a, "start_utc", "?"))));
  }
  return out;
}

}  // namespace sb::results
