#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "format_util.hpp"
#include "scalebench/compare.hpp"
#include "scalebench/error.hpp"
#include "summary_util.hpp"

namespace sb::results {
namespace {

std::string pct(double change) {
  return std::isfinite(change) ? fmt::format("{:+.1f}%", change * 100.0) : "-";
}

std::string interval(const CaseComparison& r) {
  return std::isfinite(r.change_low) && std::isfinite(r.change_high)
             ? fmt::format("[{}, {}]", pct(r.change_low), pct(r.change_high))
             : "-";
}

std::string pval(double p) {
  return std::isfinite(p) ? fmt::format("{:.3g}", p) : "-";
}

/// Case names without the parameters every case of their workload shares (what tells them
/// apart stays), as `report` shows them; `shared` gets "workload: k=v,..." per workload.
std::vector<std::string> short_names(const Comparison& c, std::vector<std::string>* shared) {
  std::vector<std::string> order;
  for (const auto& r : c.cases)
    if (std::find(order.begin(), order.end(), r.workload) == order.end())
      order.push_back(r.workload);
  std::vector<std::string> out(c.cases.size());
  for (const auto& wl : order) {
    std::vector<std::size_t> idx;
    std::vector<detail::CaseIdParts> parts;
    for (std::size_t i = 0; i < c.cases.size(); ++i)
      if (c.cases[i].workload == wl) {
        idx.push_back(i);
        parts.push_back(detail::split_case_id(c.cases[i].name, wl));
      }
    const std::vector<std::string> common =
        idx.size() > 1 ? detail::shared_params(parts) : std::vector<std::string>{};
    std::string line;
    for (const auto& p : common) line += (line.empty() ? "" : ",") + p;
    if (!line.empty()) shared->push_back(wl + ": " + line);
    for (std::size_t k = 0; k < idx.size(); ++k) {
      std::string own;
      for (const auto& p : parts[k].params)
        if (std::find(common.begin(), common.end(), p) == common.end())
          own += (own.empty() ? "" : ",") + p;
      out[idx[k]] = wl + "/" + parts[k].path + (own.empty() ? "" : " " + own);
    }
  }
  return out;
}

std::vector<std::vector<std::string>> cells(const Comparison& c,
                                            const std::vector<std::string>* names = nullptr) {
  std::vector<std::vector<std::string>> rows{{"case", "verdict", "baseline", "current", "change",
                                              "interval", "p-value", "repeats", "detail"}};
  for (std::size_t i = 0; i < c.cases.size(); ++i) {
    const auto& r = c.cases[i];
    rows.push_back({names != nullptr ? (*names)[i] : r.name, std::string(to_string(r.verdict)),
                    detail::human_seconds(r.baseline_fast_s),
                    detail::human_seconds(r.current_fast_s), pct(r.change), interval(r),
                    pval(r.p_value), fmt::format("{}/{}", r.baseline_repeats, r.current_repeats),
                    r.detail});
  }
  return rows;
}

const std::vector<bool>& right() {
  static const std::vector<bool> r{false, false, true, true, true, true, true, true, false};
  return r;
}

/// The gate's outcome in one word and why: REGRESSION, INCOMPLETE, INCONCLUSIVE or PASS.
std::string outcome(const Comparison& c) {
  const int code = comparison_exit_code(c);
  const std::size_t missing = c.count(Verdict::missing);
  const std::size_t undecided = c.count(Verdict::noisy) + c.count(Verdict::inconclusive);
  if (code == kExitFailed) return fmt::format("REGRESSION (exit {})", code);
  if (code == kExitIncomplete) {
    if (missing > 0)
      return fmt::format(
          "INCOMPLETE (exit {}): {} baseline case(s) missing from current "
          "(--allow-missing lets that pass)",
          code, missing);
    return fmt::format(
        "INCOMPLETE (exit {}): no case was compared (--allow-missing lets that pass)", code);
  }
  if (code == kExitInconclusive)
    return fmt::format("INCONCLUSIVE (exit {}): {} case(s) noisy or inconclusive (--on-noisy warn)",
                       code, undecided);
  if (undecided > 0)
    return fmt::format("no regression; {} case(s) noisy or inconclusive (--on-noisy {})", undecided,
                       to_string(c.options.on_noisy));
  return "no regression";
}

std::string tally(const Comparison& c) {
  std::map<std::string, int> n;
  for (const auto& r : c.cases) ++n[std::string(to_string(r.verdict))];
  std::string parts;
  for (const auto& [k, v] : n) parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", v, k);
  return fmt::format("{} case(s): {}; {} compared: {}", c.cases.size(),
                     parts.empty() ? "none" : parts, c.compared(), outcome(c));
}

std::string rule(const Comparison& c) {
  return fmt::format(
      "times and change: mean of the fastest third of each case's repeats; interval: {:g}% "
      "bootstrap; threshold {:.1f}%; MDE: the smallest change caught 4 times in 5 at this "
      "spread",
      100.0 * (1.0 - c.options.alpha), c.options.threshold * 100.0);
}

/// One line per verdict present that needs saying what it means.
std::vector<std::string> legend(const Comparison& c) {
  std::vector<std::string> out;
  const std::string level = fmt::format("{:g}%", 100.0 * (1.0 - c.options.alpha));
  const std::string policy =
      c.options.on_noisy == NoisyPolicy::fail   ? "it fails the gate (--on-noisy fail)"
      : c.options.on_noisy == NoisyPolicy::warn ? "exit 5 unless something fails (--on-noisy warn)"
                                                : "it passes (--on-noisy pass)";
  if (c.count(Verdict::noisy) > 0)
    out.push_back(fmt::format(
        "noisy: the fastest third moved by more than the threshold but its {} interval includes "
        "no change; more repeats decide it; {}",
        level, policy));
  if (c.count(Verdict::inconclusive) > 0 && c.ab)
    out.push_back(
        "inconclusive: other processes took so much of the machine in the sides' turns that "
        "either side's fastest repeats were luck, and the change is within what that explains; "
        "rerun on a quieter machine; " +
        policy);
  else if (c.count(Verdict::inconclusive) > 0)
    out.push_back(
        "inconclusive: the run that looks slower measured while other processes, the cgroup "
        "quota, a lower clock or slower vector units took enough of the machine to explain the "
        "change (or the baseline did, enough to hide a slowdown); rerun on a quiet machine; " +
        policy);
  if (c.count(Verdict::missing) > 0)
    out.push_back("missing: in the baseline (or ok there) but not measured in current; " +
                  std::string(c.options.allow_missing ? "allowed (--allow-missing)" : "exit 4"));
  if (c.count(Verdict::skipped) > 0)
    out.push_back("skipped: not run in either report (e.g. GPU paths without a GPU); passes");
  return out;
}

/// An A/B report's sides, and how they were measured.
std::vector<std::string> ab_lines(const Comparison& c) {
  if (!c.ab) return {};
  return {fmt::format("A/B: both sides in one job, {} turns in random order (seed {}), {} timed "
                      "repeats; the interval resamples rounds of a turn per side",
                      c.ab->turns, c.ab->seed, c.ab->timed_repeats),
          "baseline " + c.ab->baseline, "current " + c.ab->current};
}

std::vector<std::string> system_lines(const Comparison& c) {
  std::vector<std::string> out;
  for (const auto& d : c.system)
    out.push_back(fmt::format("{}{}: '{}' (baseline) vs '{}' (current)",
                              d.hardware ? "hardware differs: " : "differs: ", d.what, d.baseline,
                              d.current));
  return out;
}

/// `text` on lines of at most `width` columns (0: one line), each ending in a newline.
std::string wrapped(const std::string& text, std::size_t width, const std::string& indent = "") {
  std::string out;
  for (const auto& l : detail::wrap_words(text, width, indent)) out += l + '\n';
  return out;
}

std::string text_footer(const Comparison& c, const std::string& bullet, std::size_t width = 0) {
  std::string out;
  const std::string indent(bullet.size(), ' ');
  for (const auto& l : ab_lines(c)) out += wrapped(bullet + l, width, indent);
  for (const auto& l : system_lines(c)) out += wrapped(bullet + l, width, indent);
  for (const auto& l : legend(c)) out += wrapped(bullet + l, width, indent);
  return out;
}

/// The table at `width`: numbers are never cut; the p-value (reference only) and the repeat
/// counts go first, then the case ids and details are cut.
std::string table(const Comparison& c, std::size_t width) {
  detail::AlignedLayout layout;
  layout.right = right();
  // The p-value (reference only), the repeat counts and then the details (said under the table)
  // go before an id is cut; the interval last.
  layout.drop = {0, 0, 0, 0, 0, 4, 1, 2, 3};
  layout.elide = {true, false, false, false, false, false, false, false, true};
  layout.width = width;
  layout.cheap_drops = 3;
  layout.hard_floor = 10;
  std::vector<std::string> dropped;
  // Too wide with whole ids: the parameters every case of a workload shares go above the
  // table, so the ids keep what tells the cases apart.
  std::string out;
  std::vector<std::vector<std::string>> rows = cells(c);
  const std::string full = detail::render_aligned(rows, right(), 0);
  std::size_t widest = 0;
  for (std::size_t at = 0, end = 0; at < full.size(); at = end + 1) {
    end = full.find('\n', at);
    if (end == std::string::npos) end = full.size();
    widest = std::max(widest, detail::display_width(full.substr(at, end - at)));
  }
  if (width > 0 && widest > width) {
    std::vector<std::string> shared;
    const std::vector<std::string> names = short_names(c, &shared);
    rows = cells(c, &names);
    for (const auto& l : shared) out += wrapped("parameters of " + l, width, "  ");
    if (!shared.empty()) out += '\n';
  }
  out += detail::render_aligned(rows, layout, &dropped);
  if (!dropped.empty()) {
    std::string names;
    for (const auto& d : dropped) names += (names.empty() ? "" : ", ") + d;
    out +=
        wrapped("(not shown at this width: " + names + "; --out FILE or a pipe shows all)", width);
  }
  if (std::find(dropped.begin(), dropped.end(), "detail") != dropped.end()) {
    // The details under the table, each once with the cases it is about.
    std::vector<std::pair<std::string, std::vector<std::string>>> by_detail;
    for (std::size_t i = 0; i < c.cases.size(); ++i) {
      const std::string& d = c.cases[i].detail;
      if (d.empty()) continue;
      auto it = std::find_if(by_detail.begin(), by_detail.end(),
                             [&](const auto& p) { return p.first == d; });
      if (it == by_detail.end()) it = by_detail.insert(by_detail.end(), {d, {}});
      it->second.push_back(rows[i + 1][0]);
    }
    if (!by_detail.empty()) out += "details:\n";
    for (const auto& [d, ids] : by_detail) {
      std::string which;
      for (std::size_t k = 0; k < ids.size() && k < 4; ++k) which += (k ? ", " : "") + ids[k];
      if (ids.size() > 4) which += fmt::format(" and {} more", ids.size() - 4);
      out += wrapped(fmt::format("  {}: {}", which, d), width, "    ");
    }
  }
  return out;
}

std::string junit(const Comparison& c) {
  using detail::xml_escape;
  const bool missing_fails = !c.options.allow_missing;
  const bool undecided_fails = c.options.on_noisy == NoisyPolicy::fail;
  const auto fails = [&](Verdict v) {
    return is_regression(v) || (missing_fails && v == Verdict::missing) ||
           (undecided_fails && is_undecided(v));
  };
  const auto skips = [&](Verdict v) {
    return !fails(v) && (v == Verdict::missing || v == Verdict::skipped ||
                         v == Verdict::too_few_repeats || is_undecided(v));
  };
  int failures = 0, skipped = 0;
  for (const auto& r : c.cases) {
    if (fails(r.verdict)) ++failures;
    if (skips(r.verdict)) ++skipped;
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
      "      <property name=\"on_noisy\" value=\"{5}\"/>\n"
      "      <property name=\"outcome\" value=\"{6}\"/>\n",
      n, failures, skipped, c.options.threshold, c.options.alpha, to_string(c.options.on_noisy),
      xml_escape(outcome(c)));
  for (const auto& l : ab_lines(c))
    out += fmt::format("      <property name=\"ab\" value=\"{}\"/>\n", xml_escape(l));
  for (const auto& l : system_lines(c))
    out += fmt::format("      <property name=\"system\" value=\"{}\"/>\n", xml_escape(l));
  out += "    </properties>\n";
  for (const auto& r : c.cases) {
    const std::string verdict(to_string(r.verdict));
    const double t = std::isfinite(r.current_fast_s) ? r.current_fast_s : 0.0;
    out +=
        fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.6f}\">\n",
                    xml_escape("scalebench." + r.workload + "." + r.path), xml_escape(r.name), t);
    const std::string line =
        is_compared(r.verdict)
            ? fmt::format("{}: {}; fastest third {} {} (threshold {:.1f}%)", verdict, r.detail,
                          pct(r.change), interval(r), c.options.threshold * 100.0)
            : fmt::format("{}: {}", verdict, r.detail);
    const std::string body = fmt::format(
        "fastest-third mean: baseline {} ({} repeats), current {} ({} repeats), change {} {}; "
        "medians {} and {}; p-value {}; MDE {}",
        detail::human_seconds(r.baseline_fast_s), r.baseline_repeats,
        detail::human_seconds(r.current_fast_s), r.current_repeats, pct(r.change), interval(r),
        detail::human_seconds(r.baseline_median_s), detail::human_seconds(r.current_median_s),
        pval(r.p_value), std::isfinite(r.mde) ? fmt::format("{:.1f}%", r.mde * 100.0) : "-");
    if (fails(r.verdict)) {
      out += fmt::format("      <failure message=\"{}\" type=\"{}\">{}</failure>\n",
                         xml_escape(line), verdict, xml_escape(body));
    } else if (skips(r.verdict)) {
      out += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(line));
    } else {
      out += fmt::format("      <system-out>{}</system-out>\n", xml_escape(line + "; " + body));
    }
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

nlohmann::json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
}

/// "pass", "regression", "incomplete" or "inconclusive": the exit code in a word.
std::string outcome_word(const Comparison& c) {
  switch (comparison_exit_code(c)) {
    case kExitFailed:
      return "regression";
    case kExitIncomplete:
      return "incomplete";
    case kExitInconclusive:
      return "inconclusive";
    default:
      return "pass";
  }
}

/// The comparison as JSON (docs/ci.md, "compare --format json").
std::string json_text(const Comparison& c) {
  nlohmann::json counts = nlohmann::json::object();
  for (const auto& r : c.cases) {
    auto& n = counts[std::string(to_string(r.verdict))];
    n = n.is_null() ? 1 : n.get<int>() + 1;
  }
  nlohmann::json system = nlohmann::json::array();
  for (const auto& d : c.system)
    system.push_back({{"what", d.what},
                      {"baseline", d.baseline},
                      {"current", d.current},
                      {"hardware", d.hardware}});
  nlohmann::json cases = nlohmann::json::array();
  for (const auto& r : c.cases)
    cases.push_back({{"case", r.name},
                     {"workload", r.workload},
                     {"path", r.path},
                     {"params", r.params},
                     {"verdict", std::string(to_string(r.verdict))},
                     {"regression", is_regression(r.verdict)},
                     {"baseline_repeats", r.baseline_repeats},
                     {"current_repeats", r.current_repeats},
                     {"marked_left_out", r.marked_left_out},
                     {"baseline_fast_s", number_or_null(r.baseline_fast_s)},
                     {"current_fast_s", number_or_null(r.current_fast_s)},
                     {"change", number_or_null(r.change)},
                     {"change_low", number_or_null(r.change_low)},
                     {"change_high", number_or_null(r.change_high)},
                     {"baseline_median_s", number_or_null(r.baseline_median_s)},
                     {"current_median_s", number_or_null(r.current_median_s)},
                     {"median_change", number_or_null(r.median_change)},
                     {"p_value", number_or_null(r.p_value)},
                     {"mde", number_or_null(r.mde)},
                     {"rounds", r.rounds},
                     {"paired_change", number_or_null(r.paired_change)},
                     {"paired_low", number_or_null(r.paired_low)},
                     {"paired_high", number_or_null(r.paired_high)},
                     {"detail", r.detail}});
  const nlohmann::json out = {{"schema", "scalebench-compare/1"},
                              {"outcome", outcome_word(c)},
                              {"exit_code", comparison_exit_code(c)},
                              {"summary", tally(c)},
                              {"rule", rule(c)},
                              {"options",
                               {{"threshold", c.options.threshold},
                                {"alpha", c.options.alpha},
                                {"min_repeats", c.options.min_repeats},
                                {"on_noisy", std::string(to_string(c.options.on_noisy))},
                                {"allow_missing", c.options.allow_missing},
                                {"strict", c.options.strict}}},
                              {"compared", c.compared()},
                              {"counts", counts},
                              {"system", system},
                              {"legend", legend(c)},
                              {"cases", cases}};
  return out.dump(2) + "\n";
}

}  // namespace

std::string format_comparison(const Comparison& c, const std::string& format, std::size_t width) {
  if (format == "table")
    return table(c, width) + '\n' + wrapped(tally(c), width) + wrapped(rule(c), width) +
           text_footer(c, "", width);
  if (format == "markdown")
    return "## scalebench compare\n\n" + detail::render_markdown(cells(c), right()) + "\n**" +
           tally(c) + "**\n\n" + rule(c) + "\n\n" + text_footer(c, "- ");
  if (format == "junit") return junit(c);
  if (format == "json") return json_text(c);
  throw UsageError(
      fmt::format("unknown compare format '{}'; use one of table, markdown, junit, json", format));
}

}  // namespace sb::results
