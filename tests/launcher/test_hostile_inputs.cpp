// Inputs from elsewhere, through the real program (issue #47): an --out that names an input
// (report, compare, history, run) is refused and the input stays byte for byte; a report whose
// strings hold terminal escapes prints them escaped (table, Markdown, CSV on a terminal,
// compare, history, run's progress and table); a NUL in a suite file keeps its whole message;
// what is not a regular file (a FIFO, /dev/zero, a folder, a device) is refused at once as
// every kind of input; a process limit that leaves no thread is exit 3 with its cause.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../support/launcher_run.hpp"
#include "scalebench/report.hpp"

namespace fs = std::filesystem;

namespace {

using namespace sb::test_support;

/// One tiny real run's report in `dir` (cached per test binary run).
fs::path real_report(const fs::path& dir, const std::string& name = "r.h5") {
  static std::string cached;
  const fs::path out = dir / name;
  if (cached.empty()) {
    TempDir once("sbhostile");
    const fs::path first = once.path / "first.db";
    const int rc =
        scalebench_in(once.path,
                      "run --preset tiny --workloads subset-mean --paths cpu1 --repeats 2 "
                      "--warmup 0 --no-ceilings --out " +
                          first.string());
    if (rc != 0) throw std::runtime_error("the tiny run failed: " + slurp(once.path / "err"));
    cached = slurp(first);
  }
  std::ofstream(out, std::ios::binary) << cached;
  return out;
}

/// Exit code, one line on stderr holding `words`, and the listed files unchanged.
void expect_refused(const fs::path& dir, int rc, int want, const std::string& words,
                    const std::string& what) {
  const std::string err = slurp(dir / "err");
  EXPECT_EQ(rc, want) << what << "\n" << err;
  EXPECT_EQ(line_count(err), 1u) << what << "\n" << err;
  EXPECT_NE(err.find(words), std::string::npos) << what << "\n" << err;
}

TEST(HostileInputs, OutNeverOverwritesAnInput) {
  TempDir dir("sbhostile");
  const fs::path r = real_report(dir.path);
  const fs::path c = real_report(dir.path, "c.h5");
  fs::create_directories(dir.path / "sub");
  fs::create_symlink(r, dir.path / "link.h5");
  fs::create_hard_link(r, dir.path / "hard.h5");
  const std::string before = slurp(r), before_c = slurp(c);
  ASSERT_EQ(scalebench_in(dir.path, "history add st.db " + r.string()), 0)
      << slurp(dir.path / "err");
  const std::string store = slurp(dir.path / "st.db");
  std::ofstream(dir.path / "s.toml") << "preset = \"tiny\"\n";
  std::ofstream(dir.path / "ref.toml") << "";
  const std::string suite = slurp(dir.path / "s.toml");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"report r.h5 --format json --out r.h5", "is the input"},
      {"report r.h5 --format json --out ./r.h5", "is the input"},
      {"report r.h5 --format csv --out sub/../r.h5", "is the input"},
      {"report r.h5 --format table --out link.h5", "is the input"},
      {"report r.h5 --format markdown --out hard.h5", "is the input"},
      {"report r.h5 c.h5 --format csv --out c.h5", "is the input"},
      {"report --make-references r.h5 --out r.h5", "is the input"},
      {"compare r.h5 c.h5 --format junit --out c.h5", "is the input"},
      {"compare r.h5 c.h5 --out ./r.h5", "is the input"},
      {"history report st.db --format html --out st.db", "is the input"},
      {"history show st.db --out ./st.db", "is the input"},
      {"history add r.h5 r.h5", "is the report"},
      {"history add st.db ./st.db", "is the report"},
      {"history add r.h5 c.h5", "not a scalebench history store"},
      {"run --suite s.toml --out s.toml --force", "is the suite file"},
      {"run --preset tiny --references ref.toml --out ref.toml --force", "is the reference file"},
  };
  for (const auto& [args, words] : cases) {
    const int rc = scalebench_in(dir.path, args);
    expect_refused(dir.path, rc, 2, words, args);
  }
  EXPECT_EQ(slurp(r), before);
  EXPECT_EQ(slurp(c), before_c);
  EXPECT_EQ(slurp(dir.path / "st.db"), store);
  EXPECT_EQ(slurp(dir.path / "s.toml"), suite);
  EXPECT_TRUE(fs::is_symlink(dir.path / "link.h5"));
  EXPECT_TRUE(temp_files(dir.path).empty());
  EXPECT_TRUE(work_folders(dir.path).empty());
  // Another file is fine, and so is the report itself through --resume (its own home).
  EXPECT_EQ(scalebench_in(dir.path, "report r.h5 --format json --out r.json"), 0);
}

/// A report whose every string holds terminal escapes: OSC (window title), CSI (clear screen),
/// BEL, backspace, a carriage return and an 8-bit CSI (U+009B).
fs::path hostile_report(const fs::path& dir) {
  const fs::path good = real_report(dir, "good.h5");
  nlohmann::json m = sb::results::read_report(good.string());
  const std::string evil =
      "\x1b]0;pwned\x07\x1b[2J\b\r\xc2\x9b"
      "31m";
  for (auto& c : m["cases"]) {
    c["id"] = "subset-mean/single-cpu/" + evil + "n=1";
    c["message"] = "boom " + evil;
    c["hosts"] = nlohmann::json::array({"node" + evil});
  }
  m["attrs"]["host"] = "node" + evil;
  m["attrs"]["command_line"] = "scalebench run " + evil;
  const fs::path out = dir / "hostile.h5";
  sb::results::write_report(m, out.string());
  return out;
}

/// No terminal control byte of the report's strings reached `text` (ESC, BEL, backspace, C1).
void expect_inert(const std::string& text, const std::string& what) {
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << what << ":\n" << text;
  EXPECT_EQ(text.find('\x07'), std::string::npos) << what;
  EXPECT_EQ(text.find('\b'), std::string::npos) << what;
  EXPECT_EQ(text.find("\xc2\x9b"), std::string::npos) << what;
}

TEST(HostileInputs, TerminalEscapesInAReportArePrintedEscaped) {
  TempDir dir("sbhostile");
  const fs::path h = hostile_report(dir.path);
  const std::string bytes = slurp(h);
  for (const std::string args :
       {"report hostile.h5", "report hostile.h5 --format markdown", "report hostile.h5 --wide",
        "compare hostile.h5 hostile.h5", "compare hostile.h5 hostile.h5 --format markdown"}) {
    const int rc = scalebench_in(dir.path, args);
    EXPECT_TRUE(rc == 0 || rc == 4 || rc == 5) << args << " " << rc << slurp(dir.path / "err");
    const std::string out = slurp(dir.path / "out");
    expect_inert(out + slurp(dir.path / "err"), args);
    EXPECT_EQ(out.find('\r'), std::string::npos) << args;
    if (args.rfind("report", 0) == 0)
      EXPECT_NE(out.find("\\x1b]0;pwned\\x07"), std::string::npos) << args << ":\n" << out;
  }
  // On a terminal (a pty from script(1)) every format is escaped, CSV too.
  if (bash("command -v script >/dev/null") == 0) {
    for (const std::string fmt : {"table", "csv", "markdown"}) {
      ASSERT_EQ(
          bash(fmt::format("cd {} && script -qec '{} report hostile.h5 --format {}' /dev/null "
                           "> tty.out 2>&1",
                           dir.path.string(), SB_LAUNCHER_EXE, fmt)),
          0);
      const std::string tty = slurp(dir.path / "tty.out");
      expect_inert(tty, "terminal " + fmt);
      EXPECT_NE(tty.find("pwned"), std::string::npos) << tty;
    }
  }
  // The history of such runs, and a run that resumes the report (its progress and table).
  ASSERT_EQ(scalebench_in(dir.path, "history add st.db hostile.h5"), 0) << slurp(dir.path / "err");
  expect_inert(slurp(dir.path / "out"), "history add");
  ASSERT_EQ(scalebench_in(dir.path, "history show st.db"), 0) << slurp(dir.path / "err");
  expect_inert(slurp(dir.path / "out"), "history show");
  const int rc = scalebench_in(dir.path,
                               "run --preset tiny --workloads subset-mean --paths cpu1 --repeats 2 "
                               "--warmup 0 --no-ceilings --resume hostile.h5 --out again.h5");
  EXPECT_EQ(rc, 0) << slurp(dir.path / "err");
  expect_inert(slurp(dir.path / "out") + slurp(dir.path / "err"), "run --resume");
  EXPECT_EQ(slurp(h), bytes);  // the input is untouched
}

TEST(HostileInputs, ANulInASuiteFileKeepsTheWholeMessage) {
  TempDir dir("sbhostile");
  std::ofstream(dir.path / "nul.toml") << "preset = \"tiny\"\nworkloads = [\"sv\\u0000d\"]\n";
  const int rc = scalebench_in(dir.path, "run --suite nul.toml --out r.h5");
  expect_refused(dir.path, rc, 2, "'workloads' = \"sv\\x00d\" holds a control character",
                 "NUL in a list");
  std::ofstream(dir.path / "esc.toml") << "preset = \"ti\\u001b[2Jny\"\n";
  expect_refused(dir.path, scalebench_in(dir.path, "run --suite esc.toml --out r.h5"), 2,
                 "'preset' = \"ti\\x1b[2Jny\" holds a control character", "ESC in a string");
  std::ofstream(dir.path / "key.toml") << "\"pre\\u0000set\" = \"tiny\"\n";
  expect_refused(dir.path, scalebench_in(dir.path, "run --suite key.toml --out r.h5"), 2,
                 "the key 'pre\\x00set' holds a control character", "NUL in a key");
  expect_inert(slurp(dir.path / "err"), "suite messages");
  EXPECT_FALSE(fs::exists(dir.path / "r.h5"));
  EXPECT_TRUE(work_folders(dir.path).empty());
}

TEST(HostileInputs, WhatIsNotARegularFileIsRefusedAtOnceAsEveryInput) {
  TempDir dir("sbhostile");
  const fs::path good = real_report(dir.path, "good.h5");
  ASSERT_EQ(::mkfifo((dir.path / "fifo").c_str(), 0600), 0);
  fs::create_directories(dir.path / "folder");
  ASSERT_EQ(scalebench_in(dir.path, "history add st.db good.h5"), 0);
  const std::vector<std::pair<std::string, std::string>> kinds = {
      {(dir.path / "fifo").string(), "is a FIFO (named pipe)"},
      {"/dev/zero", "is a character device"},
      {(dir.path / "folder").string(), "is a folder"},
  };
  const std::string run = "run --preset tiny --paths cpu1 --no-ceilings --out r.h5 ";
  for (const auto& [path, words] : kinds) {
    const std::vector<std::string> commands = {
        "run --suite " + path + " --out r.h5",
        run + "--references " + path,
        "report " + path,
        "report good.h5 " + path,
        "compare " + path + " good.h5",
        "compare good.h5 " + path,
        "history add st.db " + path,
        "history add " + path + " good.h5",
        "history show " + path,
        "recover " + path,
        "run --preset tiny --paths cpu1 --resume " + path + " --out r2.h5",
    };
    for (const auto& args : commands) {
      const int rc = scalebench_in(dir.path, args, "", 30);
      EXPECT_NE(rc, 124) << args << ": it blocked";
      // A folder given to --plugin says so in the loader's own words (plugin_errors.sh).
      expect_refused(dir.path, rc, 2, words, args);
    }
    const int rc = scalebench_in(dir.path, run + "--plugin " + path, "", 30);
    EXPECT_NE(rc, 124) << "--plugin " << path;
    EXPECT_EQ(rc, 2) << slurp(dir.path / "err");
  }
  EXPECT_FALSE(fs::exists(dir.path / "r.h5"));
  EXPECT_TRUE(work_folders(dir.path).empty());
  EXPECT_TRUE(temp_files(dir.path).empty());
}

TEST(HostileInputs, AProcessLimitThatLeavesNoThreadIsAnEnvironmentError) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to run as a user of its own";
  TempDir dir("sbhostile");
  ::chmod(dir.path.c_str(), 0777);
  for (const int limit : {1, 3}) {
    const int rc = bash(
        fmt::format("cd {0} && {1} bash -c 'ulimit -u {2}; exec {3} run --preset tiny --paths cpu1 "
                    "--no-ceilings --out {0}/r.h5' > {0}/out 2> {0}/err",
                    dir.path.string(), as_test_user(), limit, SB_LAUNCHER_EXE));
    const std::string err = slurp(dir.path / "err");
    EXPECT_EQ(rc, 3) << "ulimit -u " << limit << "\n" << err;
    // The last line names the limit (lines before it are the MPI job's own, echoed).
    const std::string last = err.substr(err.rfind('\n', err.size() - 2) + 1);
    EXPECT_NE(last.find(fmt::format("ulimit -u, is {}", limit)), std::string::npos) << err;
    EXPECT_EQ(err.find("internal error"), std::string::npos) << err;
    EXPECT_TRUE(none_left(fmt::format("scalebench-rank --plan {}/", dir.path.string())));
    EXPECT_TRUE(work_folders(dir.path).empty()) << err;
  }
}

}  // namespace
