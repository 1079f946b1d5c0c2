/// `report --format junit`: JUnit XML for CI dashboards, one test case per device and case of
/// node acceptance (a failing GPU shows by name: classname = its host, name = the device and
/// the case), failing for every verdict but ok and `not judged`, which is skipped (a dashboard
/// shows it as nothing tested, not as a pass); cases that are not per device are one test case
/// each (failed, timed-out: a failure; skipped: skipped); a merged fleet's missing nodes fail one
/// test case each.

#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "format_util.hpp"
#include "formats.hpp"
#include "scalebench/verdicts.hpp"
#include "summary_util.hpp"

namespace sb::results::detail {
namespace {

struct TestCase {
  std::string classname, name;
  double time = 0;
  std::string failure_type, message;  ///< failure when failure_type is set
  bool skipped = false;
};

std::string device_name(const json& v) {
  return verdict_device_text(v);
}

}  // namespace

std::string format_junit(const json& model, const json& summary) {
  const json verdicts = verdicts_of(model);
  std::map<std::string, std::vector<TestCase>> suites;  // by case
  std::vector<std::string> order;
  auto suite = [&](const std::string& name) -> std::vector<TestCase>& {
    if (suites.count(name) == 0) order.push_back(name);
    return suites[name];
  };
  std::set<std::string> judged;  // records that have a verdict row
  for (const auto& v : verdicts) {
    judged.insert(str(v, "record"));
    TestCase t;
    t.classname = "scalebench." + str(v, "host");
    t.name = fmt::format("{} on {}: {}", device_name(v), str(v, "host"), str(v, "case"));
    // A link's value is a bandwidth, a health row's a count: only times are times.
    t.time = str(v, "unit", "s") == "s" && std::isfinite(num(v, "value")) ? num(v, "value") : 0.0;
    const std::string verdict = str(v, "verdict");
    if (verdict == kNotJudged) {
      t.skipped = true;
      t.message = verdict + ": " + str(v, "reason");
    } else if (verdict != "ok") {
      t.failure_type = verdict;
      t.message = verdict + ": " + str(v, "reason");
    }
    suite(str(v, "case")).push_back(std::move(t));
  }
  // A fleet sweep's elements that never reported (merge.hpp): a failure each, by node.
  for (const auto& m : sub(sub(model, "fleet"), "missing")) {
    TestCase t;
    const std::string node = str(m, "node");
    const std::string job = str(m, "job_id");
    t.classname = "scalebench." + (node.empty() ? std::string("fleet") : node);
    t.name = node.empty() ? str(m, "element") + ": missing" : "node " + node + ": missing";
    t.failure_type = "missing";
    t.message = "missing: " + str(m, "reason") + (job.empty() ? "" : " (job " + job + ")");
    suite("fleet").push_back(std::move(t));
  }
  const json& cases = sub(model, "cases");
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const json& c = cases[i];
    const std::string id = case_label(c);
    if (judged.count(id) != 0) continue;
    TestCase t;
    t.classname = "scalebench." + str(c, "workload") + "." + canonical_path(str(c, "path"));
    t.name = id;
    const double med = i < summary.size() ? num(summary[i], "median_s") : kNaN;
    t.time = std::isfinite(med) ? med : 0.0;
    const std::string status = str(c, "status", "ok");
    const std::string msg = str(c, "message");
    if (status == "skipped") {
      t.skipped = true;
      t.message = msg;
    } else if (status != "ok" || validation_failed(c)) {
      t.failure_type = status == "ok" ? "validation" : status;
      t.message = msg.empty() ? status : status + ": " + msg;
    }
    suite(str(c, "workload") + "/" + canonical_path(str(c, "path"))).push_back(std::move(t));
  }
  std::size_t tests = 0, failures = 0, skipped = 0;
  for (const auto& [k, ts] : suites)
    for (const auto& t : ts) {
      ++tests;
      failures += !t.failure_type.empty();
      skipped += t.skipped;
    }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format(
      "<testsuites name=\"scalebench\" tests=\"{}\" failures=\"{}\" errors=\"0\" "
      "skipped=\"{}\">\n",
      tests, failures, skipped);
  for (const auto& name : order) {
    const auto& ts = suites[name];
    std::size_t f = 0, s = 0;
    for (const auto& t : ts) {
      f += !t.failure_type.empty();
      s += t.skipped;
    }
    out += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\">\n",
        xml_escape(name), ts.size(), f, s);
    for (const auto& t : ts) {
      out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.6f}\"",
                         xml_escape(t.classname), xml_escape(t.name), t.time);
      if (t.failure_type.empty() && !t.skipped) {
        out += "/>\n";
        continue;
      }
      out += ">\n";
      if (t.skipped) {
        out += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(t.message));
      } else {
        out +=
            fmt::format("      <failure type=\"{}\" message=\"{}\">{}</failure>\n",
                        xml_escape(t.failure_type), xml_escape(t.message), xml_escape(t.message));
      }
      out += "    </testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  return out + "</testsuites>\n";
}

}  // namespace sb::results::detail
