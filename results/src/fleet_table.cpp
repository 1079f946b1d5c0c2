// The fleet of a merged acceptance sweep (fleet.hpp).
#include "scalebench/fleet.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "format_util.hpp"
#include "scalebench/verdicts.hpp"
#include "summary_util.hpp"

namespace sb::results {
namespace {

using json = nlohmann::json;
using detail::num;
using detail::str;
using detail::sub;

int severity(const std::string& v) {
  if (v == "failed") return 3;
  if (v == "throttled") return 2;
  if (v == "slow") return 1;
  return 0;
}

struct NodeRow {
  std::set<long long> devices, not_ok;
  std::string verdict = "ok";
  std::string worst;  ///< the worst device's case and reason
  std::string report, job_id;
};

}  // namespace

nlohmann::json fleet_nodes(const nlohmann::json& model) {
  const json verdicts = verdicts_of(model);
  std::map<std::string, std::pair<std::string, std::string>> source_of;  // record -> report, job
  for (const auto& c : sub(model, "cases"))
    source_of[detail::case_label(c)] = {str(c, "source_report"), str(c, "source_job")};
  std::map<std::string, NodeRow> nodes;
  for (const auto& v : verdicts) {
    if (is_link_verdict(v)) continue;
    NodeRow& n = nodes[str(v, "host")];
    const long long dev = static_cast<long long>(num(v, "device", -1));
    n.devices.insert(dev);
    const std::string verdict = str(v, "verdict");
    if (verdict != "ok") n.not_ok.insert(dev);
    const auto src = source_of.find(str(v, "record"));
    if (src != source_of.end() && n.report.empty()) {
      n.report = src->second.first;
      n.job_id = src->second.second;
    }
    if (severity(verdict) > severity(n.verdict) || (verdict != "ok" && n.worst.empty())) {
      n.verdict = verdict;
      n.worst = fmt::format("{} {}: {}", verdict, str(v, "case"), str(v, "reason"));
    }
  }
  // A report's node that no device verdict names (a sweep of paths other than each-*): judged
  // by its run's status alone.
  for (const auto& s : sub(model, "sources")) {
    if (s.value("superseded", false)) continue;
    const std::string host = str(s, "host");
    if (host.empty() || nodes.count(host) != 0) continue;
    NodeRow& n = nodes[host];
    n.report = str(s, "report");
    n.job_id = str(s, "job_id");
    if (const std::string st = str(s, "status"); st != "ok") {
      n.not_ok.insert(-1);
      n.verdict = "failed";
      n.worst = "its run ended " + st + " (" + n.report + ")";
    }
  }
  json bad = json::array(), missing = json::array(), ok = json::array();
  for (const auto& [host, n] : nodes) {
    json row = {{"host", host},
                {"status", n.not_ok.empty() ? "ok" : "not ok"},
                {"verdict", n.verdict},
                {"devices", static_cast<std::int64_t>(n.devices.size())},
                {"not_ok", static_cast<std::int64_t>(n.not_ok.size())},
                {"worst", n.worst},
                {"report", n.report},
                {"job_id", n.job_id}};
    (n.not_ok.empty() ? ok : bad).push_back(std::move(row));
  }
  for (const auto& m : sub(sub(model, "fleet"), "missing")) {
    const std::string node = str(m, "node");
    missing.push_back({{"host", node.empty() ? str(m, "element") : node},
                       {"status", "missing"},
                       {"verdict", "missing"},
                       {"devices", 0},
                       {"not_ok", 0},
                       {"worst", str(m, "reason")},
                       {"report", ""},
                       {"job_id", str(m, "job_id")}});
  }
  json out = json::array();
  for (json* part : {&bad, &missing, &ok})
    for (auto& r : *part) out.push_back(std::move(r));
  return out;
}

std::string format_fleet_text(const nlohmann::json& model) {
  const json& fleet = sub(model, "fleet");
  if (!model.contains("fleet")) return {};
  const json rows = fleet_nodes(model);
  std::size_t bad = 0, missing = 0, judged = 0;
  for (const auto& r : rows) {
    const std::string s = str(r, "status");
    bad += s == "not ok";
    missing += s == "missing";
    judged += s != "missing";
  }
  const auto elements = static_cast<long long>(num(fleet, "elements", 0));
  const auto reported = static_cast<long long>(num(fleet, "reported", 0));
  std::string out;
  if (bad == 0 && missing == 0) {
    out = fmt::format("fleet: all {} node{} ok ({} of {} element{} reported)\n", judged,
                      judged == 1 ? "" : "s", reported, elements, elements == 1 ? "" : "s");
  } else {
    out = fmt::format(
        "fleet: {} of {} node{} not ok, {} missing ({} of {} element{} reported; every device "
        "judged against all its peers of the fleet)\n",
        bad, judged, judged == 1 ? "" : "s", missing, reported, elements, elements == 1 ? "" : "s");
    for (const auto& r : rows) {
      const std::string s = str(r, "status");
      if (s == "ok") continue;
      const std::string job = str(r, "job_id");
      if (s == "missing") {
        out += fmt::format("missing   {}{}: {}\n", str(r, "host"),
                           job.empty() ? "" : " (job " + job + ")", str(r, "worst"));
      } else {
        out += fmt::format("{:<9} {}  {} of {} device{} not ok ({})\n          {}\n",
                           str(r, "verdict"), str(r, "host"),
                           static_cast<long long>(num(r, "not_ok", 0)),
                           static_cast<long long>(num(r, "devices", 0)),
                           num(r, "devices", 0) == 1 ? "" : "s", str(r, "report"), str(r, "worst"));
      }
    }
  }
  for (const auto& d : sub(fleet, "duplicates"))
    if (d.is_string()) out += "note: " + d.get<std::string>() + "\n";
  if (const std::string cmd = str(fleet, "resubmit"); !cmd.empty())
    out += "re-submit the failed and missing nodes:\n  " + cmd + "\n";
  return out;
}

}  // namespace sb::results
