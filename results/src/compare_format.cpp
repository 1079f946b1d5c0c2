#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "format_util.hpp"
#include "scalebench/compare.hpp"
#include "scalebench/error.hpp"

namespace sb::results {
namespace {

std::string pct(double change) {
  return std::isfinite(change) ? fmt::format("{:+.1f}%", change * 100.0) : "-";
}

std::string pval(double p) {
  return std::isfinite(p) ? fmt::format("{:.3g}", p) : "-";
}

std::vector<std::vector<std::string>> cells(const Comparison& c) {
  std::vector<std::vector<std::string>> rows{
      {"case", "verdict", "baseline", "current", "change", "p-value", "repeats", "detail"}};
  for (const auto& r : c.cases) {
    rows.push_back({r.name, std::string(to_string(r.verdict)),
                    detail::human_seconds(r.baseline_median_s),
                    detail::human_seconds(r.current_median_s), pct(r.change), pval(r.p_value),
                    fmt::format("{}/{}", r.baseline_repeats, r.current_repeats), r.detail});
  }
  return rows;
}

const std::vector<bool>& right() {
  static const std::vector<bool> r{false, false, true, true, true, true, true, false};
  return r;
}

std::string tally(const Comparison& c) {
  std::map<std::string, int> n;
  for (const auto& r : c.cases) ++n[std::string(to_string(r.verdict))];
  std::string parts;
  for (const auto& [k, v] : n) parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", v, k);
  return fmt::format("{} case(s): {}; threshold {:.1f}%, alpha {:g}: {}", c.cases.size(),
                     parts.empty() ? "none" : parts, c.options.threshold * 100.0, c.options.alpha,
                     c.regressed() ? "REGRESSION" : "no regression");
}

std::string junit(const Comparison& c) {
  using detail::xml_escape;
  int failures = 0, skipped = 0;
  for (const auto& r : c.cases) {
    if (is_regression(r.verdict)) ++failures;
    if (r.verdict == Verdict::missing || r.verdict == Verdict::too_few_repeats) ++skipped;
  }
  const auto n = c.cases.size();
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format(
      "<testsuites name=\"scalebench compare\" tests=\"{0}\" failures=\"{1}\" errors=\"0\" "
      "skipped=\"{2}\">\n"
      "  <testsuite name=\"scalebench.compare\" tests=\"{0}\" failures=\"{1}\" errors=\"0\" "
      "skipped=\"{2}\" time=\"0\">\n"
      "    <properties>\n"
      "      <property name=\"threshold\" value=\"{3:g}\"/>\n"
      "      <property name=\"alpha\" value=\"{4:g}\"/>\n"
      "    </properties>\n",
      n, failures, skipped, c.options.threshold, c.options.alpha);
  for (const auto& r : c.cases) {
    const std::string verdict(to_string(r.verdict));
    const double t = std::isfinite(r.current_median_s) ? r.current_median_s : 0.0;
    out +=
        fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.6f}\">\n",
                    xml_escape("scalebench." + r.workload + "." + r.path), xml_escape(r.name), t);
    const std::string line = fmt::format("{}: {}", verdict, r.detail);
    const std::string body = fmt::format(
        "baseline median {} ({} repeats), current median {} ({} repeats), change {}, p-value {}",
        detail::human_seconds(r.baseline_median_s), r.baseline_repeats,
        detail::human_seconds(r.current_median_s), r.current_repeats, pct(r.change),
        pval(r.p_value));
    if (is_regression(r.verdict)) {
      out += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n",
                         xml_escape(line), verdict, xml_escape(body));
    } else if (r.verdict == Verdict::missing || r.verdict == Verdict::too_few_repeats) {
      out += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(line));
    } else {
      out += fmt::format("      <system-out>{}</system-out>\n", xml_escape(line + "; " + body));
    }
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace

std::string format_comparison(const Comparison& c, const std::string& format, std::size_t width) {
  if (format == "table")
    return detail::render_aligned(cells(c), right(), width) + '\n' + tally(c) + '\n';
  if (format == "markdown")
    return "## scalebench compare\n\n" + detail::render_markdown(cells(c), right()) + "\n**" +
           tally(c) + "**\n";
  if (format == "junit") return junit(c);
  throw UsageError(
      fmt::format("unknown compare format '{}'; use one of table, markdown, junit", format));
}

}  // namespace sb::results
