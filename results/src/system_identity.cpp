#include "scalebench/system_identity.hpp"

#include <cstdint>
#include <map>
#include <set>
#include <string>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "summary_util.hpp"

namespace sb::results {
namespace {

using json = nlohmann::json;
using detail::str;
using detail::sub;

/// Text of a scalar (numbers without a trailing ".0"); "" for anything else.
std::string text_of(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    return d == static_cast<double>(static_cast<long long>(d))
               ? std::to_string(static_cast<long long>(d))
               : fmt::format("{:g}", d);
  }
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  return "";
}

/// Sorted distinct values of `key` over the rows of a table ("" when none has it).
std::string distinct(const json& rows, const char* key) {
  std::set<std::string> vals;
  if (rows.is_array())
    for (const auto& r : rows)
      if (r.is_object() && r.contains(key) && !text_of(r[key]).empty())
        vals.insert(text_of(r[key]));
  return fmt::format("{}", fmt::join(vals, ", "));
}

std::size_t rows_of(const json& v) {
  return v.is_array() ? v.size() : 0;
}

struct Field {
  std::string what;
  std::string value;  ///< "" = not known
  bool hardware;
};

std::vector<Field> fields(const json& model) {
  const json& sys = sub(model, "system");
  const json& attrs = sub(model, "attrs");
  const json& nodes = sub(sys, "nodes");
  const json& gpus = sub(sys, "gpus");
  std::vector<Field> f;
  const bool known = rows_of(nodes) > 0;
  f.push_back({"node count", known ? std::to_string(rows_of(nodes)) : "", true});
  f.push_back({"CPU model", distinct(nodes, "cpu_model"), true});
  f.push_back({"cores per node", distinct(nodes, "cores"), true});
  f.push_back({"GPU count", known ? std::to_string(rows_of(gpus)) : "", true});
  f.push_back({"GPU model", distinct(gpus, "name"), true});
  f.push_back({"GPU driver", distinct(gpus, "driver"), false});
  f.push_back({"scalebench version", str(attrs, "scalebench_version"), false});
  f.push_back({"build type", str(attrs, "build_type"), false});
  const json& versions = sub(sys, "versions");
  if (versions.is_object())
    for (const auto& [k, v] : versions.items()) f.push_back({k + " version", text_of(v), false});
  return f;
}

}  // namespace

std::string hardware_description(const json& model) {
  const json& sys = sub(model, "system");
  const json& nodes = sub(sys, "nodes");
  const json& gpus = sub(sys, "gpus");
  if (rows_of(nodes) == 0) return "unknown machine";
  const std::size_t n = rows_of(nodes);
  std::string out = fmt::format("{} node{}: {} cores, {}", n, n == 1 ? "" : "s",
                                distinct(nodes, "cores"), distinct(nodes, "cpu_model"));
  const std::size_t g = rows_of(gpus);
  out += g == 0 ? "; no GPU"
                : fmt::format("; {} GPU{}: {}", g, g == 1 ? "" : "s", distinct(gpus, "name"));
  return out;
}

std::string hardware_fingerprint(const json& model) {
  std::uint64_t h = 0xCBF29CE484222325ULL;
  for (unsigned char ch : hardware_description(model)) {
    h ^= ch;
    h *= 0x100000001B3ULL;
  }
  return fmt::format("{:012x}", h & 0xFFFFFFFFFFFFULL);
}

std::vector<SystemDifference> system_differences(const json& baseline, const json& current) {
  const std::vector<Field> b = fields(baseline);
  const std::vector<Field> c = fields(current);
  std::map<std::string, std::pair<std::string, std::string>> soft;
  std::vector<SystemDifference> out;
  for (std::size_t i = 0; i < b.size() && b[i].hardware; ++i) {
    if (b[i].value == c[i].value) continue;
    out.push_back({b[i].what, b[i].value.empty() ? "-" : b[i].value,
                   c[i].value.empty() ? "-" : c[i].value,
                   !b[i].value.empty() && !c[i].value.empty()});
  }
  std::vector<std::string> order;
  const auto note = [&](const std::vector<Field>& fs, bool is_base) {
    for (const auto& x : fs) {
      if (x.hardware) continue;
      if (soft.find(x.what) == soft.end()) order.push_back(x.what);
      (is_base ? soft[x.what].first : soft[x.what].second) = x.value;
    }
  };
  note(b, true);
  note(c, false);
  for (const auto& what : order) {
    const auto& [bv, cv] = soft[what];
    if (bv == cv) continue;
    out.push_back({what, bv.empty() ? "-" : bv, cv.empty() ? "-" : cv, false});
  }
  return out;
}

}  // namespace sb::results
