// A history run from a report model, and the in-memory store's add (history.hpp).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <string>
#include <tuple>

#include "scalebench/history.hpp"
#include "scalebench/stats.hpp"
#include "scalebench/system_identity.hpp"
#include "scalebench/utc_time.hpp"
#include "summary_util.hpp"

namespace sb::results {
namespace {

using json = nlohmann::json;
using detail::str;
using detail::sub;

HistoryCase history_case(const json& c) {
  HistoryCase h;
  h.workload = str(c, "workload");
  h.path = detail::canonical_path(str(c, "path"));
  h.params = detail::params_text(sub(c, "params"));
  h.key = h.workload + "/" + h.path + (h.params.empty() ? "" : "/" + h.params);
  h.device = str(c, "device_id");
  if (!h.device.empty()) h.key += "/" + h.device;
  h.status = str(c, "status", "ok");
  const json& reps = sub(c, "repeats");
  if (reps.is_array())
    for (const auto& r : reps) {
      const double t = detail::num(r, "total");
      if (std::isfinite(t) && !detail::marked_repeat(r)) h.totals.push_back(t);
    }
  if (h.totals.empty() && reps.is_array())  // every repeat marked: all count, as in the run
    for (const auto& r : reps)
      if (std::isfinite(detail::num(r, "total"))) h.totals.push_back(detail::num(r, "total"));
  h.repeats = h.totals.size();
  h.fast_s = fastest_third_mean(h.totals);
  h.median_s = median(h.totals);
  return h;
}

long long count(const json& attrs, const char* key) {
  const double v = detail::num(attrs, key, 0);
  return std::isfinite(v) && v > 0 ? static_cast<long long>(v) : 0;
}

}  // namespace

HistoryRun history_run(const json& report, const std::string& report_name,
                       const std::string& commit) {
  const json& attrs = sub(report, "attrs");
  HistoryRun r;
  r.commit = commit.empty() ? str(attrs, "git_sha", "unknown") : commit;
  r.time_utc = str(attrs, "start_utc");
  const json& nodes = sub(sub(report, "system"), "nodes");
  if (nodes.is_array() && !nodes.empty()) r.host = str(nodes[0], "host");
  r.machine = hardware_fingerprint(report);
  r.machine_text = hardware_description(report);
  r.scalebench_version = str(attrs, "scalebench_version");
  r.preset = str(attrs, "preset");
  r.scheduler = str(attrs, "scheduler");
  r.job_id = str(attrs, "job_id");
  r.nodes = count(attrs, "nodes");
  r.workers = count(attrs, "workers");
  r.status = str(attrs, "status");
  r.report = std::filesystem::path(report_name).filename().string();
  const json& cases = sub(report, "cases");
  if (cases.is_array()) {
    std::map<std::string, bool> seen;  // a repeated case: the first one counts, as in compare
    for (const auto& c : cases) {
      HistoryCase h = history_case(c);
      if (seen.emplace(h.key, true).second) r.cases.push_back(std::move(h));
    }
  }
  return r;
}

std::vector<std::pair<std::string, std::string>> history_params(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string piece =
        text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t eq = piece.find('=');
    if (eq == std::string::npos && !out.empty()) {
      out.back().second += "," + piece;
    } else if (eq == std::string::npos) {
      out.emplace_back(piece, "");
    } else {
      out.emplace_back(piece.substr(0, eq), piece.substr(eq + 1));
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

bool add_history_run(HistoryStore& store, HistoryRun run) {
  long long next = 1;
  for (const auto& r : store.runs) {
    if (r.commit == run.commit && r.time_utc == run.time_utc && r.host == run.host &&
        r.machine == run.machine)
      return false;
    next = std::max(next, r.id + 1);
  }
  run.id = next;
  if (run.added_utc.empty()) run.added_utc = utc_now();
  const auto later = std::upper_bound(
      store.runs.begin(), store.runs.end(), run, [](const HistoryRun& a, const HistoryRun& b) {
        return std::tie(a.time_utc, a.id) < std::tie(b.time_utc, b.id);
      });
  store.runs.insert(later, std::move(run));
  return true;
}

}  // namespace sb::results
