#include "case_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>

#include <fmt/format.h>

#include "scalebench/plugins.hpp"

namespace sb {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

double number(const json& j, const char* key, double fallback = NAN) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string text(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// Seconds since the epoch of "YYYY-MM-DDTHH:MM:SS.mmmZ"; NaN when it is not that.
double utc_seconds(const std::string& t) {
  std::tm tm{};
  double sec = 0;
  if (std::sscanf(t.c_str(), "%d-%d-%dT%d:%d:%lf", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &sec) != 6)
    return NAN;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  tm.tm_sec = 0;
  return static_cast<double>(timegm(&tm)) + sec;
}

bool numeric(const std::string& v) {
  if (v.empty()) return false;
  char* end = nullptr;
  (void)std::strtod(v.c_str(), &end);
  return end != nullptr && *end == '\0';
}

/// The parameters that are not numbers ("query=by-key"), which a scaled estimate must share.
std::string non_numeric(const json& params) {
  std::string out;
  if (!params.is_object()) return out;
  for (const auto& [k, v] : params.items()) {
    const std::string s = v.is_string() ? v.get<std::string>() : v.dump();
    if (!numeric(s)) out += k + "=" + s + ",";
  }
  return out;
}

std::string non_numeric(const Params& p) {
  std::string out;
  for (const auto& [k, v] : p.items())
    if (!numeric(v)) out += k + "=" + v + ",";
  return out;
}

/// Work units of a planned case (built-in workloads: their scheduler is plain C++).
double work_units(const CaseSpec& spec) {
  if (plugin_of(spec.workload) != nullptr) return NAN;
  try {
    const Workload& w = find_workload(spec.workload);
    return w.make_scheduler(spec)->work().units;
  } catch (const std::exception&) {
    return NAN;
  }
}

/// Timed repeats the case will take: the fixed count, or under --repeats auto what the past
/// case took, within the rule's limits.
int planned_repeats(const CaseSpec& spec, int past) {
  const RepeatRule r = spec.repeat_rule();
  if (!r.adaptive()) return r.max_repeats;
  return std::clamp(past > 0 ? past : r.min_repeats, r.min_repeats, r.max_repeats);
}

double case_seconds(const CaseSpec& spec, double median, double overhead, int past_repeats) {
  const RepeatRule r = spec.repeat_rule();
  double timed = planned_repeats(spec, past_repeats) * median;
  if (r.adaptive() && r.max_time_s > 0)
    timed = std::min(timed, std::max(r.max_time_s, r.min_repeats * median));
  // Warm-up: the repeats asked for, and more until those after the first took kMinWarmupS.
  const double warm = spec.warmup == 0 ? 0.0 : std::max(spec.warmup * median, median + kMinWarmupS);
  return std::max(0.0, overhead) + warm + timed;
}

}  // namespace

CaseEstimator::CaseEstimator(const std::vector<json>& reports, std::string host) {
  for (const auto& model : reports) {
    const json& attrs = model.value("attrs", json::object());
    if (text(attrs, "host") != host) continue;
    ++reports_;
    const json& sys = model.value("system", json::object());
    if (ceilings_.empty() && sys.contains("ceilings") && sys["ceilings"].is_array())
      ceilings_ = sys["ceilings"];
    for (const auto& c : model.value("cases", json::array())) {
      if (text(c, "status") != "ok" || c.contains("device_id")) continue;
      const json& m = c.value("metrics", json::object());
      Past p;
      p.id = text(c, "id");
      p.workload = text(c, "workload");
      p.path = text(c, "path");
      p.rest = non_numeric(c.value("params", json::object()));
      p.workers = static_cast<int>(number(c, "workers", 1));
      p.median_s = number(m, "median_s");
      p.units = number(c.value("work", json::object()), "units");
      const json& reps = c.value("repeats", json::array());
      p.repeats = reps.is_array() ? static_cast<int>(reps.size()) : 0;
      p.warmup = static_cast<int>(number(c, "warmup", 0));
      const double wall = utc_seconds(text(c, "ended_utc")) - utc_seconds(text(c, "started_utc"));
      double repeats_s = 0;
      for (const auto& r : reps.is_array() ? reps : json::array())
        repeats_s += number(r, "total", 0);
      p.overhead_s =
          std::isfinite(wall) ? std::max(0.0, wall - repeats_s - p.warmup * p.median_s) : 0.0;
      if (std::isfinite(p.median_s) && p.median_s > 0) past_.push_back(std::move(p));
    }
  }
}

CaseEstimate CaseEstimator::estimate(const CaseSpec& spec, const CaseForecast& f) const {
  CaseEstimate e;
  if (f.outcome != CaseForecast::Outcome::run) {
    e.seconds = 0;
    e.method = "not run";
    return e;
  }
  const std::string path(to_string(spec.path));
  for (const auto& p : past_)
    if (p.id == spec.id && p.workers == f.workers) {
      e.seconds = case_seconds(spec, p.median_s, p.overhead_s, p.repeats);
      e.method = "measured";
      return e;
    }
  const double units = work_units(spec);
  const std::string rest = non_numeric(spec.params);
  const Past* best = nullptr;
  double best_gap = INFINITY;
  if (std::isfinite(units) && units > 0)
    for (const auto& p : past_) {
      if (p.workload != spec.workload || p.path != path || p.workers != f.workers ||
          p.rest != rest || !(p.units > 0))
        continue;
      const double gap = std::abs(std::log(units / p.units));
      if (gap < best_gap) {
        best_gap = gap;
        best = &p;
      }
    }
  if (best != nullptr) {
    const double ratio = units / best->units;
    e.seconds = case_seconds(spec, best->median_s * ratio, best->overhead_s, best->repeats);
    e.method = "scaled";
    return e;
  }
  // The ceilings: bytes or flops of one repeat at this machine's measured rates.
  if (plugin_of(spec.workload) == nullptr && !ceilings_.empty()) {
    try {
      const Work w = find_workload(spec.workload).make_scheduler(spec)->work();
      const bool gpu = device_of(spec.path) == Device::gpu;
      const bool by_bytes = w.bound == Work::Bound::bytes;
      const std::string kind =
          gpu ? (by_bytes ? "copy_bandwidth" : "fp64_gemm") : (by_bytes ? "stream_triad" : "dgemm");
      double rate = 0;
      for (const auto& c : ceilings_)
        if (text(c, "kind") == kind && (gpu || number(c, "threads", 0) == f.threads ||
                                        number(c, "threads", 0) == 0 || rate == 0)) {
          const std::string unit = text(c, "unit");
          const double scale = unit.rfind("G", 0) == 0 ? 1e9 : unit.rfind("M", 0) == 0 ? 1e6 : 1;
          rate = std::max(rate, number(c, "value", 0) * scale);
        }
      const double amount = by_bytes ? w.bytes : w.flops;
      if (rate > 0 && amount > 0) {
        const double median = amount / (rate * std::max(1, f.workers));
        e.seconds = case_seconds(spec, median, 0, 0);
        e.method = "ceiling";
      }
    } catch (const std::exception&) {
    }
  }
  return e;
}

std::vector<fs::path> estimate_sources(const fs::path& folder, const std::vector<fs::path>& extra,
                                       std::size_t max) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& p : extra)
    if (!p.empty() && fs::is_regular_file(p, ec)) out.push_back(p);
  std::vector<std::pair<fs::file_time_type, fs::path>> found;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.extension() != ".h5" || p.filename() == "latest.h5" || it->is_symlink(ec)) continue;
    if (!it->is_regular_file(ec)) continue;
    found.emplace_back(it->last_write_time(ec), p);
  }
  std::sort(found.begin(), found.end(),
            [](const auto& a, const auto& b) { return a.first > b.first; });
  for (std::size_t i = 0; i < found.size() && i < max; ++i)
    if (std::find(out.begin(), out.end(), found[i].second) == out.end())
      out.push_back(found[i].second);
  return out;
}

std::string estimate_text(const CaseEstimate& e) {
  if (e.method == "not run") return "-";
  if (!e.known() || !std::isfinite(e.seconds)) return "?";
  const double s = e.seconds;
  std::string t;
  if (s < 1e-3) {
    t = "<1 ms";
  } else if (s < 1) {
    t = fmt::format("{:.0f} ms", s * 1e3);
  } else if (s < 100) {
    t = fmt::format("{:.1f} s", s);
  } else if (s < 3600) {
    t = fmt::format("{}m{:02}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
  } else {
    t = fmt::format("{}h{:02}m", static_cast<int>(s) / 3600, (static_cast<int>(s) % 3600) / 60);
  }
  return (e.method == "ceiling" ? ">=" : "~") + t;
}

}  // namespace sb
