// Text tables that fit the terminal: `scalebench report` (and the table `run` prints) at 80 and
// 120 columns, --wide, the width of the output (terminal, COLUMNS, pipe), compare's table.

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "format_util.hpp"
#include "scalebench/compare.hpp"
#include "scalebench/report.hpp"
#include "synthetic_model.hpp"

namespace {

using nlohmann::json;
using sb::results::format_report;
using sb::results::detail::display_width;
using sb::results::test::make_model;

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

/// The table's header line (the one starting "case ").
std::string header_of(const std::string& text) {
  for (const auto& l : lines(text))
    if (l.rfind("case ", 0) == 0) return l;
  return {};
}

bool has_row(const std::string& text, const std::string& start) {
  for (const auto& l : lines(text))
    if (l.rfind(start, 0) == 0) return true;
  return false;
}

TEST(TableWidth, NarrowTablesFitAndSayWhatTheyLeftOut) {
  const json m = make_model();
  for (std::size_t width : {80u, 120u}) {
    const std::string t = format_report(m, "table", width);
    for (const auto& l : lines(t)) EXPECT_LE(display_width(l), width) << width << ": " << l;
    // ids without the parameters every case of the workload shares, said once above
    EXPECT_NE(t.find("\nparameters of subset-mean: chunk=500,n=2000,seed=42\n"), std::string::npos)
        << t;
    EXPECT_TRUE(has_row(t, "subset-mean/multi-cpu ")) << t;
    EXPECT_FALSE(has_row(t, "subset-mean/multi-cpu/chunk=500")) << t;
    // the essentials stay
    const std::string h = header_of(t);
    for (const char* col : {"case", "workers", "status", "median", "vs 1cpu"})
      EXPECT_NE(h.find(col), std::string::npos) << width << " " << col << "\n" << t;
    EXPECT_NE(t.find(" hidden to fit " + std::to_string(width) + " columns (--wide"),
              std::string::npos)
        << t;
  }
  // 80 columns: the least important go first, and the reader is told which
  const std::string t80 = format_report(m, "table", 80);
  EXPECT_NE(t80.find("\nmin, max, stddev, reps, vs 1gpu, throughput hidden to fit 80 columns"),
            std::string::npos)
      << t80;
  // the noise stays as long as the median does
  EXPECT_NE(header_of(t80).find(" noise "), std::string::npos) << t80;
  // reps went with min, max and stddev, but fits again once throughput is gone
  const std::string t86 = format_report(m, "table", 86);
  EXPECT_NE(header_of(t86).find(" reps "), std::string::npos) << t86;
  EXPECT_EQ(header_of(t86).find(" min "), std::string::npos) << t86;
  // 120 keeps more than 80
  EXPECT_GT(header_of(format_report(m, "table", 120)).size(), header_of(t80).size());
}

TEST(TableWidth, WideOrNoWidthKeepsTheFullTable) {
  const json m = make_model();
  const std::string t = format_report(m, "table", 0);
  EXPECT_EQ(t, format_report(m, "table"));
  EXPECT_EQ(header_of(t).find("case "), 0u);
  for (const char* col : {"workers", "status", "reps", "median", "min", "max", "stddev",
                          "throughput", "vs 1cpu", "vs 1gpu", "efficiency"})
    EXPECT_NE(header_of(t).find(col), std::string::npos) << col;
  EXPECT_TRUE(has_row(t, "subset-mean/multi-cpu/chunk=500,n=2000,seed=42 ")) << t;
  EXPECT_EQ(t.find("hidden to fit"), std::string::npos);
  EXPECT_EQ(t.find("parameters of "), std::string::npos);
  EXPECT_GT(display_width(header_of(t)), 120u);
  // a width the full table fits changes nothing
  EXPECT_EQ(format_report(m, "table", 1000), t);
}

TEST(TableWidth, EmptyColumnsGoFirstAndLongIdsAreCutInTheMiddle) {
  json m = make_model();
  json cpu = json::array({m["cases"][0], m["cases"][1]});  // no GPU case: vs 1gpu is all "-"
  for (auto& c : cpu) {
    c["params"]["label"] = "a-rather-long-parameter-value-that-no-terminal-has-room-for-at-all";
    c["id"] = c["id"].get<std::string>() + ",label=" + c["params"]["label"].get<std::string>() +
              (c["path"] == "single-cpu" ? "-one" : "-two");
  }
  m["cases"] = cpu;
  const std::string t = format_report(m, "table", 80);
  for (const auto& l : lines(t)) EXPECT_LE(display_width(l), 80u) << l;
  EXPECT_NE(t.find("vs 1gpu, "), std::string::npos) << t;  // named first among the hidden
  // the ids differ only at their end: the cut keeps the start and the end
  EXPECT_NE(t.find("\xE2\x80\xA6"), std::string::npos) << t;
  EXPECT_NE(t.find("-one "), std::string::npos) << t;
  EXPECT_NE(t.find("-two "), std::string::npos) << t;
}

TEST(TableWidth, OutputWidthFollowsTheTerminalThenColumns) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::unsetenv("COLUMNS");
  EXPECT_EQ(sb::results::output_width(fds[1]), 0u);  // a pipe: the full table
  ::setenv("COLUMNS", "97", 1);
  EXPECT_EQ(sb::results::output_width(fds[1]), 97u);
  ::setenv("COLUMNS", "wide", 1);
  EXPECT_EQ(sb::results::output_width(fds[1]), 0u);
  ::close(fds[0]);
  ::close(fds[1]);

  // a terminal: its window size wins over COLUMNS
  const int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) GTEST_SKIP() << "no pty";
  const int slave = ::open(::ptsname(master), O_RDWR | O_NOCTTY);
  ASSERT_GE(slave, 0);
  winsize ws{};
  ws.ws_col = 77;
  ws.ws_row = 24;
  ASSERT_EQ(::ioctl(slave, TIOCSWINSZ, &ws), 0);
  EXPECT_EQ(sb::results::output_width(slave), 77u);
  ::unsetenv("COLUMNS");
  EXPECT_EQ(sb::results::output_width(slave), 77u);
  ::close(slave);
  ::close(master);
}

TEST(TableWidth, AlignedTablesCutTextColumnsToFit) {
  using sb::results::detail::render_aligned;
  const std::vector<std::vector<std::string>> rows{
      {"case", "verdict", "change", "detail"},
      {"svd/multi-gpu/chunk=100000,condition=1,m=2000000,n=1000,seed=42", "slower", "+12.0%",
       "median 1.20 s vs 1.07 s, p = 0.0079 (Mann-Whitney U, 10 vs 10 repeats)"}};
  const std::vector<bool> right{false, false, true, false};
  const std::string full = render_aligned(rows, right);
  EXPECT_GT(display_width(lines(full)[0]), 80u);
  const std::string cut = render_aligned(rows, right, 80);
  for (const auto& l : lines(cut)) EXPECT_LE(display_width(l), 80u) << l;
  EXPECT_NE(cut.find("svd/multi-gpu/"), std::string::npos) << cut;  // ids keep start and end
  EXPECT_NE(cut.find("seed=42"), std::string::npos) << cut;
  EXPECT_NE(cut.find("+12.0%"), std::string::npos) << cut;  // numbers are never cut
  EXPECT_NE(cut.find("median 1.20 s"), std::string::npos) << cut;
}

TEST(TableWidth, CompareTableFitsTheWidth) {
  using sb::results::test::make_case;
  const std::vector<double> t{1.0, 1.01, 0.99, 1.02, 0.98, 1.0};
  std::vector<double> slow;
  for (double x : t) slow.push_back(1.3 * x);
  json base, cur;
  base["cases"] = json::array({make_case(0, "svd", "multi-cpu", "cpu", 2, t, 1, 1, 0)});
  cur["cases"] = json::array({make_case(0, "svd", "multi-cpu", "cpu", 2, slow, 1, 1, 0)});
  const auto c = sb::results::compare_reports(base, cur);
  const std::string full = sb::results::format_comparison(c, "table");
  // the numbers are never cut: the table fits down to about 80 columns
  const std::string narrow = sb::results::format_comparison(c, "table", 80);
  EXPECT_GT(display_width(lines(full)[2]), 80u) << full;
  for (const auto& l : lines(narrow)) EXPECT_LE(display_width(l), 80u) << l;
  EXPECT_NE(narrow.find("slower"), std::string::npos) << narrow;
  EXPECT_NE(narrow.find("+30.0%"), std::string::npos) << narrow;
}

TEST(TableWidth, WrapAndElide) {
  using sb::results::detail::elide_end;
  using sb::results::detail::elide_middle;
  using sb::results::detail::wrap_words;
  EXPECT_EQ(elide_middle("abcdefghij", 5), "ab\xE2\x80\xA6ij");
  EXPECT_EQ(elide_middle("abc", 5), "abc");
  EXPECT_EQ(elide_end("abcdefghij", 5), "abcd\xE2\x80\xA6");
  using sb::results::detail::elide_id;
  const std::string cut = "\xE2\x80\xA6";  // "…"
  EXPECT_EQ(elide_id("groupby/single-cpu cardinality=10000000,query=by-key", 30),
            "groupby/single-cpu cardi" + cut + "y-key");
  EXPECT_EQ(elide_id("svd/multi-gpu/chunk=100000,seed=42", 24),
            "svd/multi-gpu/chunk" + cut + "d=42");
  EXPECT_EQ(elide_id("svd/multi-gpu/chunk=100000,seed=42", 12), "svd/mu" + cut + "ed=42");
  EXPECT_EQ(display_width("1w\xC3\x97"
                          "2t"),
            5u);
  EXPECT_EQ(wrap_words("aa bb cc dd", 5), (std::vector<std::string>{"aa bb", "cc dd"}));
  EXPECT_EQ(wrap_words("aa bb cc", 0), std::vector<std::string>{"aa bb cc"});
  EXPECT_EQ(wrap_words("averyveryverylongword x", 5),
            (std::vector<std::string>{"averyveryverylongword", "x"}));
}

}  // namespace
