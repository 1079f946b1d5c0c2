#include "suite_file.hpp"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "scalebench/compare.hpp"
#include "scalebench/error.hpp"
#include "scalebench/input_file.hpp"
#include "scalebench/printable.hpp"

namespace sb {
namespace {

std::string where(const std::string& name, const toml::node& n) {
  const auto& src = n.source();
  return src.begin ? fmt::format("{}:{}", name, src.begin.line) : name;
}

std::string value_text(const std::string& name, const toml::node& n, const std::string& key) {
  if (auto s = n.value<std::string>(); s && n.is_string()) return *s;
  if (n.is_integer()) return std::to_string(*n.value<std::int64_t>());
  if (n.is_floating_point()) return fmt::format("{}", *n.value<double>());
  if (n.is_boolean()) return *n.value<bool>() ? "true" : "false";
  throw UsageError(fmt::format("{}: '{}' must be a string or a number", where(name, n), key));
}

std::vector<std::string> string_list(const std::string& name, const toml::node& n,
                                     const std::string& key) {
  const auto* arr = n.as_array();
  if (arr == nullptr)
    throw UsageError(fmt::format("{}: '{}' must be a list of strings", where(name, n), key));
  std::vector<std::string> out;
  for (const auto& e : *arr) {
    if (!e.is_string())
      throw UsageError(fmt::format("{}: '{}' must be a list of strings", where(name, e), key));
    out.push_back(*e.value<std::string>());
  }
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s;
}

int int_value(const std::string& name, const toml::node& n, const std::string& key) {
  if (!n.is_integer())
    throw UsageError(fmt::format("{}: '{}' must be an integer", where(name, n), key));
  const auto v = *n.value<std::int64_t>();
  if (v < 0 || v > 1000000)
    throw UsageError(fmt::format("{}: '{}' = {} is out of range", where(name, n), key, v));
  return static_cast<int>(v);
}

double number_value(const std::string& name, const toml::node& n, const std::string& key) {
  if (!n.is_number())
    throw UsageError(fmt::format("{}: '{}' must be a number", where(name, n), key));
  return *n.value<double>();
}

/// A [baseline] or [current] table: the items of `--baseline KEY=VALUE` (ab_request.hpp).
void read_side(const std::string& name, const toml::node& node, const std::string& key,
               AbSideRequest& side) {
  const auto* t = node.as_table();
  if (t == nullptr)
    throw UsageError(fmt::format("{}: [{}] must be a table", where(name, node), key));
  const std::string folder = std::filesystem::path(name).parent_path().string();
  const std::string what = fmt::format("{}: [{}]", name, key);
  side.given = true;
  for (const auto& [k, v] : *t) {
    const std::string item(k.str());
    if (item == "rank" || item == "mpiexec" || item == "label") {
      if (!v.is_string())
        throw UsageError(fmt::format("{}: '{}' must be a string", where(name, v), item));
      add_side_item(side, item + "=" + *v.value<std::string>(), what, folder);
    } else if (item == "plugins") {
      for (const auto& p : string_list(name, v, item))
        add_side_item(side, "plugin=" + p, what, folder);
    } else if (item == "env" || item == "params") {
      const auto* tt = v.as_table();
      if (tt == nullptr)
        throw UsageError(
            fmt::format("{}: '{}' must be a table (e.g. {} = {{ {} }})", where(name, v), item, item,
                        item == "env" ? "NCCL_ALGO = \"Tree\"" : "\"subset-mean.n\" = 21000"));
      for (const auto& [ek, ev] : *tt)
        add_side_item(side,
                      fmt::format("{}:{}={}", item == "env" ? "env" : "param", ek.str(),
                                  value_text(name, ev, std::string(ek.str()))),
                      what, folder);
    } else {
      throw UsageError(fmt::format(
          "{}: unknown key '{}' in [{}] (known: label, rank, plugins, mpiexec, env, params)",
          where(name, v), item, key));
    }
  }
}

void read_ab_key(const std::string& name, const std::string& key, const toml::node& v,
                 AbRequest& ab);

/// The [ab] table: how the turns run and the gate's options.
void read_ab(const std::string& name, const toml::node& node, AbRequest& ab) {
  const auto* t = node.as_table();
  if (t == nullptr) throw UsageError(fmt::format("{}: [ab] must be a table", where(name, node)));
  for (const auto& [k, v] : *t) {
    const std::string key(k.str());
    try {
      read_ab_key(name, key, v, ab);
    } catch (const UsageError& e) {
      const std::string what = e.what();
      if (what.rfind(name, 0) == 0) throw;
      throw UsageError(fmt::format("{}: [ab] {}: {}", where(name, v), key, what));
    }
  }
}

void read_ab_key(const std::string& name, const std::string& key, const toml::node& v,
                 AbRequest& ab) {
  if (key == "block") {
    ab.block = parse_ab_block(value_text(name, v, key));
  } else if (key == "seed") {
    if (!v.is_integer() || *v.value<std::int64_t>() < 0)
      throw UsageError(fmt::format("{}: 'seed' must be a non-negative integer", where(name, v)));
    ab.seed = static_cast<std::uint64_t>(*v.value<std::int64_t>());
  } else if (key == "threshold") {
    ab.threshold = results::parse_threshold(value_text(name, v, key));
  } else if (key == "alpha") {
    const double a = number_value(name, v, key);
    if (!(a > 0 && a < 1))
      throw UsageError(fmt::format("{}: 'alpha' must lie between 0 and 1", where(name, v)));
    ab.alpha = a;
  } else if (key == "on_noisy") {
    ab.on_noisy = value_text(name, v, key);
    (void)results::parse_noisy_policy(ab.on_noisy);
  } else {
    throw UsageError(
        fmt::format("{}: unknown key '{}' in [ab] (known: block, seed, threshold, alpha, on_noisy)",
                    where(name, v), key));
  }
}

/// Whether `s` holds a control character (other than a tab): never part of a name, path or
/// value, and a NUL would cut every message that quotes it short.
bool has_control(const std::string& s) {
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t') || u == 0x7f) return true;
  }
  return false;
}

/// Refuses a key or string anywhere in the file that holds a control character, quoting it
/// escaped (printable.hpp) with its line.
void refuse_control_characters(const std::string& name, const toml::node& n,
                               const std::string& key) {
  if (has_control(key))
    throw UsageError(
        fmt::format("{}: the key '{}' holds a control character", where(name, n), one_line(key)));
  if (const auto* t = n.as_table()) {
    for (const auto& [k, v] : *t) refuse_control_characters(name, v, std::string(k.str()));
  } else if (const auto* a = n.as_array()) {
    for (const auto& e : *a) refuse_control_characters(name, e, key);
  } else if (n.is_string()) {
    const std::string v = *n.value<std::string>();
    if (has_control(v))
      throw UsageError(fmt::format("{}: '{}' = \"{}\" holds a control character", where(name, n),
                                   one_line(key), one_line(v)));
  }
}

}  // namespace

void load_suite_text(const std::string& text, const std::string& name, RunRequest& req) {
  toml::table tbl;
  bool auto_limits = false;  // min_repeats, max_repeats, max_time, target_spread
  try {
    tbl = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    throw UsageError(
        fmt::format("{}:{}: {}", name, e.source().begin.line, one_line(e.description())));
  }
  refuse_control_characters(name, tbl, "");
  for (const auto& [k, node] : tbl) {
    const std::string key(k.str());
    if (key == "preset") {
      if (!node.is_string())
        throw UsageError(fmt::format("{}: 'preset' must be a string", where(name, node)));
      req.preset = *node.value<std::string>();
    } else if (key == "repeats") {
      if (node.is_string() && *node.value<std::string>() == "auto") {
        req.auto_repeats = true;
      } else {
        if (!node.is_integer())
          throw UsageError(
              fmt::format("{}: 'repeats' must be an integer or \"auto\"", where(name, node)));
        req.repeats = int_value(name, node, key);
        req.auto_repeats = false;
      }
    } else if (key == "min_repeats" || key == "max_repeats" || key == "max_time" ||
               key == "target_spread") {
      auto_limits = true;
      if (key == "min_repeats") req.min_repeats = int_value(name, node, key);
      if (key == "max_repeats") req.max_repeats = int_value(name, node, key);
      if (key == "max_time") req.max_time_s = number_value(name, node, key);
      if (key == "target_spread") req.target_spread = number_value(name, node, key);
      req.min_repeats_set = req.min_repeats_set || key == "min_repeats";
      req.max_repeats_set = req.max_repeats_set || key == "max_repeats";
      req.max_time_set = req.max_time_set || key == "max_time";
      req.target_spread_set = req.target_spread_set || key == "target_spread";
    } else if (key == "warmup") {
      req.warmup = int_value(name, node, key);
    } else if (key == "paths") {
      req.paths = parse_paths(join(string_list(name, node, key)));
    } else if (key == "workloads") {
      req.workloads = string_list(name, node, key);
    } else if (key == "plugins") {
      const std::filesystem::path folder = std::filesystem::path(name).parent_path();
      for (const auto& p : string_list(name, node, key)) {
        if (p.empty())
          throw UsageError(fmt::format("{}: 'plugins' holds an empty path", where(name, node)));
        const std::filesystem::path path(p);
        req.plugins.push_back(path.is_absolute() ? p : (folder / path).string());
      }
    } else if (key == "params") {
      const auto* t = node.as_table();
      if (t == nullptr)
        throw UsageError(fmt::format("{}: [params] must be a table", where(name, node)));
      for (const auto& [pk, pv] : *t)
        req.suite_params.push_back(std::string(pk.str()) + "=" +
                                   value_text(name, pv, std::string(pk.str())));
    } else if (key == "case") {
      const auto* arr = node.as_array();
      if (arr == nullptr)
        throw UsageError(fmt::format("{}: 'case' must be [[case]] tables", where(name, node)));
      for (const auto& c : *arr) {
        const auto* ct = c.as_table();
        if (ct == nullptr)
          throw UsageError(fmt::format("{}: 'case' must be [[case]] tables", where(name, c)));
        CaseRequest cr;
        for (const auto& [ck, cv] : *ct) {
          const std::string ckey(ck.str());
          if (ckey == "workload" && cv.is_string()) {
            cr.workload = *cv.value<std::string>();
          } else if (ckey == "preset" && cv.is_string()) {
            cr.preset = *cv.value<std::string>();
          } else if (ckey == "paths") {
            cr.paths = parse_paths(join(string_list(name, cv, ckey)));
          } else if (ckey == "params" && cv.is_table()) {
            for (const auto& [pk, pv] : *cv.as_table())
              cr.params.push_back(std::string(pk.str()) + "=" +
                                  value_text(name, pv, std::string(pk.str())));
          } else {
            throw UsageError(
                fmt::format("{}: unknown or mistyped key '{}' in [[case]]", where(name, cv), ckey));
          }
        }
        if (cr.workload.empty())
          throw UsageError(fmt::format("{}: [[case]] needs a workload", where(name, c)));
        req.cases.push_back(std::move(cr));
      }
    } else if (key == "baseline" || key == "current") {
      read_side(name, node, key, key == "baseline" ? req.ab.baseline : req.ab.current);
    } else if (key == "ab") {
      read_ab(name, node, req.ab);
    } else {
      throw UsageError(
          fmt::format("{}: unknown key '{}' (known: preset, repeats, min_repeats, max_repeats, "
                      "max_time, target_spread, warmup, paths, workloads, params, case, plugins, "
                      "baseline, current, ab)",
                      where(name, node), key));
    }
  }
  if (auto_limits && !req.auto_repeats)
    throw UsageError(fmt::format(
        "{}: min_repeats, max_repeats, max_time and target_spread apply to repeats = \"auto\" "
        "only",
        name));
}

void load_suite(const std::string& path, RunRequest& req) {
  // A regular file of at most 16 MiB: a FIFO, /dev/zero or a folder is refused at once.
  load_suite_text(read_input_file(path, "suite file", std::size_t{16} << 20), path, req);
}

}  // namespace sb
