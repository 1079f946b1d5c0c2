// `scalebench history` stores in SQLite and PostgreSQL: the round trip, one run stored once,
// whole adds from concurrent processes, what a store argument may name, the import of HDF5
// stores of earlier versions, and the same output from both databases. PostgreSQL runs for real:
// Debian's server, started by tests/results/pg_temp_server.sh in a folder of its own.

#include <gtest/gtest.h>
#include <hdf5.h>
#include <sqlite3.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <csignal>

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include <fmt/format.h>

#include "history_h5.hpp"
#include "scalebench/error.hpp"
#include "scalebench/history.hpp"
#include "scalebench/report.hpp"
#include "scalebench/report_cli.hpp"
#include "synthetic_model.hpp"

namespace {

using nlohmann::json;
using sb::results::add_history_runs;
using sb::results::HistoryRun;
using sb::results::HistoryStore;
using sb::results::read_history;
using sb::results::test::make_case;
using sb::results::test::make_model;
using sb::results::test::TempDir;

/// Run k: commit c<k>, a day apart; "slow" 30% slower from `step_at` on; a device record.
HistoryRun run_of(int k, int step_at = 99, const std::string& cpu = "AMD EPYC 9654") {
  json m = make_model();
  m["attrs"]["start_utc"] = fmt::format("2026-10-{:02d}T08:00:00.250Z", 1 + k % 28);
  m["attrs"]["git_sha"] = fmt::format("c{:03d}", k);
  m["attrs"]["scheduler"] = "slurm";
  m["attrs"]["job_id"] = std::to_string(1000 + k);
  m["system"]["nodes"][0]["cpu_model"] = cpu;
  const double f = k >= step_at ? 1.3 : 1.0;
  std::vector<double> t{0.1, 0.101 + 1e-4 * (k % 3), 0.099, 0.1020000000000001, 0.15};
  std::vector<double> slow;
  for (double x : t) slow.push_back(x * f);
  m["cases"] = json::array({make_case(0, "steady", "single-cpu", "cpu", 1, t, 1, 1, 0),
                            make_case(1, "slow", "multi-cpu", "cpu", 2, slow, 1, 1, 0),
                            make_case(2, "gpu", "single-gpu", "gpu", 1, {}, 1, 1, 0, "skipped")});
  m["cases"][0]["params"]["query"] = "by-key,sum";  // a value with a comma
  m["cases"][1]["device_id"] = "node0:gpu1";
  return sb::results::history_run(m, fmt::format("run-{}.h5", k));
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int run_cli(std::vector<std::string> args, std::string* out = nullptr) {
  CLI::App app{"scalebench"};
  app.require_subcommand(1);
  int exit_code = -1;
  sb::results::add_history_command(app, exit_code);
  args.insert(args.begin(), "scalebench");
  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  testing::internal::CaptureStdout();
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (...) {
    const std::string o = testing::internal::GetCapturedStdout();
    if (out != nullptr) *out = o;
    throw;
  }
  const std::string o = testing::internal::GetCapturedStdout();
  if (out != nullptr) *out = o;
  return exit_code;
}

/// Every rendering of a store, to compare stores.
std::string all_formats(const std::string& store) {
  const HistoryStore s = read_history(store);
  const auto trends = sb::results::history_trends(s);
  std::string out;
  for (const auto& f : sb::results::history_formats())
    out += "==> " + f + "\n" + sb::results::format_history(s, trends, f);
  return out;
}

/// What a run is, without when it was added.
std::string identity(const HistoryRun& r) {
  std::string s = fmt::format("{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}|{}", r.commit, r.time_utc, r.host,
                              r.machine, r.machine_text, r.scheduler, r.job_id, r.nodes, r.workers,
                              r.preset, r.status, r.report);
  for (const auto& c : r.cases) {
    s += fmt::format("|{};{};{};{};{};{};{};{:.17g};{:.17g}", c.key, c.workload, c.path, c.params,
                     c.device, c.status, c.repeats, c.fast_s, c.median_s);
    for (double t : c.totals) s += fmt::format(",{:.17g}", t);
  }
  return s;
}

/// Runs `n` child processes, each calling `work(i)`; every child must exit 0.
template <class F>
void in_processes(int n, F work) {
  std::vector<pid_t> kids;
  for (int i = 0; i < n; ++i) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      int rc = 0;
      try {
        work(i);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "child %d: %s\n", i, e.what());
        rc = 1;
      }
      std::fflush(nullptr);
      ::_exit(rc);
    }
    kids.push_back(pid);
  }
  for (const pid_t pid : kids) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  }
}

/// Round trip, order, one run stored once, and the same reading as from memory; on any store.
void check_round_trip(const std::string& store) {
  std::vector<HistoryRun> runs;
  for (int k = 5; k >= 0; --k) runs.push_back(run_of(k, 3));  // added last-first
  runs.push_back(run_of(2, 3));                               // twice in one add
  const auto first = add_history_runs(store, runs);
  ASSERT_EQ(first.added.size(), 7u);
  EXPECT_EQ(std::count(first.added.begin(), first.added.end(), true), 6);
  EXPECT_FALSE(first.added[6]);
  EXPECT_EQ(first.runs, 6u);
  const auto again = add_history_runs(store, {run_of(4, 3), run_of(6, 3)});
  EXPECT_EQ(again.added, (std::vector<bool>{false, true}));
  EXPECT_EQ(again.runs, 7u);

  const HistoryStore back = read_history(store, true);
  ASSERT_EQ(back.runs.size(), 7u);
  HistoryStore mem;
  for (int k = 5; k >= 0; --k) sb::results::add_history_run(mem, run_of(k, 3));
  sb::results::add_history_run(mem, run_of(6, 3));
  for (std::size_t i = 0; i < back.runs.size(); ++i) {
    EXPECT_EQ(back.runs[i].id, mem.runs[i].id) << i;
    EXPECT_EQ(identity(back.runs[i]), identity(mem.runs[i])) << i;
    EXPECT_FALSE(back.runs[i].added_utc.empty());
  }
  EXPECT_EQ(back.runs[0].commit, "c000");  // time order
  EXPECT_EQ(back.runs[0].id, 6);           // ids in the order added
  EXPECT_EQ(back.runs[0].cases[0].params, "chunk=500,n=2000,query=by-key,sum,seed=42");
  EXPECT_EQ(back.runs[0].cases[1].device, "node0:gpu1");
  EXPECT_EQ(back.runs[0].cases[1].totals.size(), 5u);
  EXPECT_EQ(back.runs[0].cases[1].totals[3], 0.1020000000000001);  // exactly

  const HistoryStore lean = read_history(store);  // without the samples
  EXPECT_TRUE(lean.runs[0].cases[1].totals.empty());
  EXPECT_EQ(lean.runs[0].cases[1].repeats, 5u);
  EXPECT_EQ(sb::results::format_history(lean, sb::results::history_trends(lean), "table"),
            sb::results::format_history(mem, sb::results::history_trends(mem), "table"));
}

/// `writers` processes add `each` runs of their own and the same `shared` runs, all at once.
void check_concurrent_writers(const std::string& store, int writers, int each, int shared) {
  in_processes(writers, [&](int w) {
    for (int k = 0; k < each; ++k) {
      HistoryRun r = run_of(k);
      r.commit = fmt::format("w{}-{}", w, k);
      (void)add_history_runs(store, {r});
      if (k < shared) {
        HistoryRun s = run_of(k);
        s.commit = fmt::format("shared-{}", k);
        (void)add_history_runs(store, {s});
      }
    }
  });
  const HistoryStore s = read_history(store, true);
  ASSERT_EQ(s.runs.size(), static_cast<std::size_t>(writers * each + shared));
  std::set<std::string> commits;
  std::set<long long> ids;
  for (const auto& r : s.runs) {
    commits.insert(r.commit);
    ids.insert(r.id);
    ASSERT_EQ(r.cases.size(), 3u) << r.commit;
    EXPECT_EQ(r.cases[1].totals.size(), 5u) << r.commit;
  }
  EXPECT_EQ(commits.size(), s.runs.size());
  EXPECT_EQ(*ids.begin(), 1);
  EXPECT_EQ(*ids.rbegin(), static_cast<long long>(s.runs.size()));  // 1..n, no gap
}

TEST(HistoryDb, SqliteRoundTrip) {
  TempDir dir("history-db");
  check_round_trip(dir.file("h.db"));
  // SQLite's own reader sees the schema of docs/history-schema.md.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(dir.file("h.db").c_str(), &db, SQLITE_OPEN_READONLY, nullptr),
            SQLITE_OK);
  const auto scalar = [&](const char* sql) {
    sqlite3_stmt* st = nullptr;
    EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
    std::string v;
    if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0) != nullptr)
      v = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    return v;
  };
  EXPECT_EQ(scalar("PRAGMA journal_mode"), "wal");
  EXPECT_EQ(scalar("SELECT value FROM store_info WHERE name = 'schema_version'"), "2");
  EXPECT_EQ(scalar("SELECT count(*) FROM samples"), std::to_string(7 * 2 * 5));
  EXPECT_EQ(scalar("SELECT value FROM case_params WHERE name = 'query'"), "by-key,sum");
  EXPECT_EQ(scalar("SELECT count(*) FROM case_runs WHERE case_key LIKE 'slow/%'"), "7");
  EXPECT_EQ(scalar("SELECT time_unix FROM runs WHERE commit_id = 'c000'"), "1790841600.25");
  EXPECT_EQ(scalar("SELECT job_id || ' ' || scheduler FROM runs WHERE commit_id = 'c001'"),
            "1001 slurm");
  EXPECT_EQ(scalar("PRAGMA integrity_check"), "ok");
  sqlite3_close(db);
}

TEST(HistoryDb, SqliteConcurrentWritersLoseNothing) {
  TempDir dir("history-db-conc");
  check_concurrent_writers(dir.file("h.db"), 6, 8, 3);
  // The last connection closed folds the write-ahead log back: one file is left.
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir.path))
    files.push_back(e.path().filename().string());
  EXPECT_EQ(files, std::vector<std::string>{"h.db"});
}

TEST(HistoryDb, WhatAStoreArgumentMayName) {
  using sb::results::locate_history;
  using Kind = sb::results::HistoryLocation::Kind;
  TempDir dir("history-db-where");
  EXPECT_EQ(locate_history(dir.file("new.db"), true).kind, Kind::sqlite);
  EXPECT_THROW((void)locate_history(dir.file("new.db"), false), sb::UsageError);
  try {
    (void)locate_history(dir.file("perf.h5"), true);
    ADD_FAILURE() << "a new .h5 store";
  } catch (const sb::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("perf.db"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)locate_history(dir.path.string(), true), sb::UsageError);
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);
  EXPECT_THROW((void)locate_history(dir.file("fifo"), false), sb::UsageError);
  std::ofstream(dir.file("text.db")) << "some text that is no database";
  EXPECT_THROW((void)locate_history(dir.file("text.db"), true), sb::UsageError);
  EXPECT_THROW((void)locate_history("mysql://x/y", true), sb::UsageError);
  const auto pg = locate_history("postgresql://ci:s3cret@db.example.org:5432/perf", true);
  EXPECT_EQ(pg.kind, Kind::postgresql);
  EXPECT_EQ(pg.label, "postgresql://ci:***@db.example.org:5432/perf");
  EXPECT_EQ(locate_history("postgres:///perf?password=s3cret&host=/run", false).label,
            "postgres:///perf?password=***&host=/run");

  // An empty file becomes a store; another SQLite database is never written to.
  std::ofstream(dir.file("empty.db")).close();
  EXPECT_EQ(add_history_runs(dir.file("empty.db"), {run_of(1)}).runs, 1u);
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(dir.file("other.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "CREATE TABLE t (x)", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  EXPECT_THROW((void)add_history_runs(dir.file("other.db"), {run_of(1)}), sb::UsageError);
  EXPECT_THROW((void)read_history(dir.file("other.db")), sb::UsageError);
  // A store of a newer schema is refused, not misread.
  ASSERT_EQ(sqlite3_open(dir.file("empty.db").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE store_info SET value = '3' WHERE name = 'schema_version'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  try {
    (void)read_history(dir.file("empty.db"));
    ADD_FAILURE() << "a store of version 3";
  } catch (const sb::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("schema version 3; this scalebench reads 2"),
              std::string::npos)
        << e.what();
  }
}

// A folder the user may not write to (SQLite keeps its write-ahead log beside the store):
// exit 3, one line, the store as it was.
TEST(HistoryDb, ReadOnlyFolderRefusesTheAddAndKeepsTheStore) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to act as another user";
  char tmpl[] = "/tmp/sb-history-ro.XXXXXX";
  ASSERT_NE(::mkdtemp(tmpl), nullptr);
  const std::string folder = tmpl, store = folder + "/h.db";
  (void)add_history_runs(store, {run_of(1)});
  const std::string before = slurp(store);
  ASSERT_EQ(::chmod(store.c_str(), 0644), 0);
  ASSERT_EQ(::chmod(folder.c_str(), 0755), 0);  // nobody may read, not write
  in_processes(1, [&](int) {
    if (::setgid(65534) != 0 || ::setuid(65534) != 0) throw std::runtime_error("setuid");
    try {
      (void)add_history_runs(store, {run_of(2)});
      throw std::runtime_error("the add into a read-only store passed");
    } catch (const sb::EnvironmentError& e) {
      if (std::string(e.what()).find('\n') != std::string::npos)
        throw std::runtime_error("more than one line");
    }
    if (read_history(store).runs.size() != 1) throw std::runtime_error("cannot read the store");
  });
  EXPECT_EQ(slurp(store), before);
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(folder))
    files.push_back(e.path().filename().string());
  EXPECT_EQ(files, std::vector<std::string>{"h.db"});
  std::filesystem::remove_all(folder);
}

// A full disk in the middle of an add: exit 3, one line, the store as it was.
TEST(HistoryDb, FullDiskLeavesTheStoreAsItWas) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to mount a small tmpfs";
  TempDir dir("history-db-full");
  const std::string small = dir.file("small");
  std::filesystem::create_directories(small);
  struct Mount {  // unmounted however the test ends
    std::string dir;
    bool on;
    ~Mount() {
      if (on) ::umount2(dir.c_str(), MNT_DETACH);
    }
  } disk{small, ::mount("tmpfs", small.c_str(), "tmpfs", 0, "size=160k") == 0};
  if (!disk.on) GTEST_SKIP() << "cannot mount a tmpfs here";
  const std::string store = small + "/h.db";
  (void)add_history_runs(store, {run_of(1)});
  std::vector<HistoryRun> many;
  for (int k = 0; k < 400; ++k) {
    many.push_back(run_of(k));
    many.back().commit = fmt::format("big-{}", k);
  }
  try {
    (void)add_history_runs(store, many);
    ADD_FAILURE() << "400 runs fitted in 160 KiB";
  } catch (const sb::EnvironmentError& e) {
    EXPECT_NE(std::string(e.what()).find("disk is full"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
  }
  const HistoryStore back = read_history(store, true);
  ASSERT_EQ(back.runs.size(), 1u);
  EXPECT_EQ(back.runs[0].cases[1].totals.size(), 5u);
}

// An HDF5 store of an earlier version: read as it is, never written, imported once.
TEST(HistoryDb, ImportsAnOldHdf5StoreAndLeavesIt) {
  TempDir dir("history-db-import");
  HistoryStore old;
  for (int k = 0; k < 8; ++k) sb::results::add_history_run(old, run_of(k, 5));
  const std::string h5 = dir.file("perf-history.h5");
  sb::results::write_history_h5(old, h5);
  const std::string bytes = slurp(h5);
  const std::string before = all_formats(h5);
  {  // as earlier versions wrote it: history version 1
    const hid_t f = H5Fopen(h5.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    const hid_t a = H5Aopen(f, "history_version", H5P_DEFAULT);
    long long version = 0;
    EXPECT_GE(H5Aread(a, H5T_NATIVE_LLONG, &version), 0);
    EXPECT_EQ(version, 1);
    H5Aclose(a);
    H5Fclose(f);
  }

  try {
    (void)run_cli({"history", "add", h5, dir.file("r.h5")});
    ADD_FAILURE() << "add into an HDF5 store";
  } catch (const sb::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("scalebench history import " + h5 + " " +
                                         dir.file("perf-history.db")),
              std::string::npos)
        << e.what();
  }
  const std::string db = dir.file("perf-history.db");
  std::string out;
  EXPECT_EQ(run_cli({"history", "import", h5, db}, &out), 0);
  EXPECT_NE(out.find("imported 8 run(s) from " + h5 + " into " + db + " (0 already there)"),
            std::string::npos)
      << out;
  EXPECT_EQ(run_cli({"history", "import", h5, db}, &out), 0);  // again: nothing twice
  EXPECT_NE(out.find("imported 0 run(s)"), std::string::npos) << out;
  EXPECT_NE(out.find(db + ": 8 run(s)"), std::string::npos) << out;
  EXPECT_EQ(slurp(h5), bytes);
  // The same trends, steps and pages; the JSON differs only where the old store knew less.
  const HistoryStore a = read_history(h5, true), b = read_history(db, true);
  ASSERT_EQ(a.runs.size(), b.runs.size());
  for (std::size_t i = 0; i < a.runs.size(); ++i) {
    EXPECT_EQ(a.runs[i].id, b.runs[i].id);
    EXPECT_EQ(a.runs[i].added_utc, b.runs[i].added_utc);
    for (std::size_t c = 0; c < a.runs[i].cases.size(); ++c) {
      EXPECT_EQ(a.runs[i].cases[c].totals, b.runs[i].cases[c].totals);
      EXPECT_EQ(a.runs[i].cases[c].device, b.runs[i].cases[c].device);
      EXPECT_EQ(a.runs[i].cases[c].params, b.runs[i].cases[c].params);
    }
  }
  for (const char* f : {"table", "markdown", "html", "openmetrics"}) {
    const auto ta = sb::results::history_trends(a), tb = sb::results::history_trends(b);
    EXPECT_EQ(sb::results::format_history(a, ta, f), sb::results::format_history(b, tb, f)) << f;
  }
  EXPECT_NE(before.find("step +30.0%"), std::string::npos);
  EXPECT_THROW(run_cli({"history", "import", db, db}), sb::UsageError);
}

TEST(HistoryDb, JsonHasRunsMachinesTrendsAndSteps) {
  TempDir dir("history-db-json");
  std::vector<HistoryRun> runs;
  for (int k = 0; k < 8; ++k) runs.push_back(run_of(k, 5));
  (void)add_history_runs(dir.file("h.db"), runs);
  const HistoryStore s = read_history(dir.file("h.db"));
  const json doc =
      json::parse(sb::results::format_history(s, sb::results::history_trends(s, "slow/*"), "json"));
  EXPECT_EQ(doc["kind"], "scalebench history");
  ASSERT_EQ(doc["runs"].size(), 8u);
  EXPECT_EQ(doc["runs"][0]["job_id"], "1000");
  EXPECT_EQ(doc["runs"][0]["nodes"], 1);
  ASSERT_EQ(doc["machines"].size(), 1u);
  EXPECT_EQ(doc["machines"][0]["runs"], 8);
  ASSERT_EQ(doc["trends"].size(), 1u);
  const json& t = doc["trends"][0];
  EXPECT_EQ(t["device"], "node0:gpu1");
  EXPECT_EQ(t["params"]["n"], "2000");
  ASSERT_EQ(t["points"].size(), 8u);
  EXPECT_TRUE(t["points"][0]["change"].is_null());
  EXPECT_EQ(t["points"][7]["repeats"], 5);
  ASSERT_EQ(t["steps"].size(), 1u);
  EXPECT_EQ(t["steps"][0]["point"], 6);
  EXPECT_EQ(t["steps"][0]["commit"], "c005");
  EXPECT_NEAR(t["steps"][0]["change"].get<double>(), 0.3, 0.01);
}

// --------------------------------------------------------------------------- PostgreSQL

/// A private PostgreSQL server for one test (tests/results/pg_temp_server.sh).
class PgServer {
 public:
  PgServer()
      : state_(std::filesystem::temp_directory_path() /
               ("sb-pg-test-" + std::to_string(::getpid()))) {
    const std::string script = std::string(SB_SOURCE_DIR) + "/tests/results/pg_temp_server.sh";
    const std::string uri_file = state_.string() + ".uri";
    const int rc = std::system(
        fmt::format("{} start {} {} > {}", script, state_.string(), ::getpid(), uri_file).c_str());
    if (WIFEXITED(rc) && WEXITSTATUS(rc) == 77) {
      skip_ = "no PostgreSQL server installed (Debian: postgresql, tools/deps.txt)";
    } else if (rc != 0) {
      skip_ = "";
      failed_ = true;
    } else {
      uri_ = slurp(uri_file);
      while (!uri_.empty() && uri_.back() == '\n') uri_.pop_back();
      for (std::istringstream in(slurp(state_.string())); !in.eof();) {
        std::string line;
        std::getline(in, line);
        if (line.rfind("TCP_URI=", 0) == 0) tcp_uri_ = line.substr(8);
        if (line.rfind("DIR=", 0) == 0) dir_ = line.substr(4);
        if (line.rfind("PID=", 0) == 0) pid_ = std::stoi(line.substr(4));
      }
    }
    std::filesystem::remove(uri_file);
  }
  ~PgServer() {
    const std::string script = std::string(SB_SOURCE_DIR) + "/tests/results/pg_temp_server.sh";
    (void)std::system(fmt::format("{} stop {}", script, state_.string()).c_str());
  }
  PgServer(const PgServer&) = delete;
  PgServer& operator=(const PgServer&) = delete;
  [[nodiscard]] bool failed() const { return failed_; }
  [[nodiscard]] const std::string& skip() const { return skip_; }
  /// The store in schema `schema` (Unix socket), or over TCP.
  [[nodiscard]] std::string uri(const std::string& schema) const {
    return uri_ + "&schema=" + schema;
  }
  [[nodiscard]] std::string tcp_uri(const std::string& schema) const {
    return tcp_uri_ + "?schema=" + schema;
  }
  [[nodiscard]] const std::string& dir() const { return dir_; }
  [[nodiscard]] pid_t pid() const { return pid_; }

 private:
  std::filesystem::path state_;
  std::string uri_, tcp_uri_, dir_, skip_;
  pid_t pid_ = 0;
  bool failed_ = false;
};

/// Whether process `pid` has ended (gone, or a zombie waiting for its reaper).
bool ended(pid_t pid) {
  if (::kill(pid, 0) != 0) return true;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(stat, line);
  const auto paren = line.rfind(')');
  return paren == std::string::npos || line.substr(paren + 2, 1) == "Z";
}

// One server for the lot (starting one takes seconds): the same results as SQLite in every
// format, writers side by side, imports both ways, stores kept apart by schema.
TEST(HistoryPostgres, SameResultsAsSqliteConcurrentWritersAndImports) {
  auto server = std::make_unique<PgServer>();
  const PgServer& pg = *server;
  ASSERT_FALSE(pg.failed()) << "pg_temp_server.sh start failed";
  if (!pg.skip().empty()) GTEST_SKIP() << pg.skip();
  TempDir dir("history-pg");
  {
    SCOPED_TRACE("round trip");
    check_round_trip(pg.uri("round_trip"));
  }
  {
    SCOPED_TRACE("identical output");
    const std::string lite = dir.file("same.db"), post = pg.tcp_uri("same");
    for (const auto& store : {lite, post}) {
      std::vector<HistoryRun> runs;
      for (int k = 0; k < 10; ++k) {
        runs.push_back(run_of(k, 6));
        runs.back().added_utc = "2026-12-01T00:00:00.000Z";
      }
      runs.push_back(run_of(3, 99, "Intel Xeon 8480"));
      runs.back().added_utc = "2026-12-01T00:00:00.000Z";
      (void)add_history_runs(store, runs);
    }
    EXPECT_EQ(all_formats(lite), all_formats(post));
    EXPECT_NE(all_formats(post).find("step +30.0%"), std::string::npos);
    // and a store moved across, kept exactly
    std::string out;
    EXPECT_EQ(run_cli({"history", "import", lite, pg.uri("moved")}, &out), 0);
    EXPECT_NE(out.find("imported 11 run(s)"), std::string::npos) << out;
    EXPECT_EQ(run_cli({"history", "import", pg.uri("moved"), dir.file("back.db")}, &out), 0);
    EXPECT_EQ(all_formats(lite), all_formats(pg.uri("moved")));
    EXPECT_EQ(all_formats(lite), all_formats(dir.file("back.db")));
    const HistoryStore a = read_history(lite, true), b = read_history(dir.file("back.db"), true);
    ASSERT_EQ(a.runs.size(), b.runs.size());
    for (std::size_t i = 0; i < a.runs.size(); ++i)
      EXPECT_EQ(identity(a.runs[i]), identity(b.runs[i]));
  }
  {
    SCOPED_TRACE("concurrent writers");
    check_concurrent_writers(pg.uri("concurrent"), 6, 8, 3);
  }
  {
    SCOPED_TRACE("schemas keep stores apart");
    EXPECT_EQ(read_history(pg.uri("round_trip")).runs.size(), 7u);
    EXPECT_THROW((void)read_history(pg.uri("nothing_here")), sb::UsageError);
    EXPECT_THROW((void)read_history(pg.uri("bad-name")), sb::UsageError);
  }
  // The server is stopped and its folder removed: no process, no file left.
  const pid_t postmaster = pg.pid();
  const std::string folder = pg.dir();
  ASSERT_GT(postmaster, 0);
  server.reset();
  EXPECT_TRUE(ended(postmaster)) << "postmaster " << postmaster << " still runs";
  EXPECT_FALSE(std::filesystem::exists(folder)) << folder;
}

// A server that does not answer: exit 3, one line, no password in it.
TEST(HistoryPostgres, UnreachableServerIsAnEnvironmentError) {
  TempDir dir("history-pg-none");
  const std::string uri = "postgresql://ci:s3cret@/perf?host=" + dir.path.string() + "&port=9";
  try {
    (void)add_history_runs(uri, {run_of(1)});
    ADD_FAILURE() << "no server";
  } catch (const sb::EnvironmentError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find("s3cret"), std::string::npos) << what;
    EXPECT_NE(what.find("cannot connect to history store postgresql://ci:***@"), std::string::npos)
        << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  } catch (const sb::UsageError& e) {
    // a build without libpq says so
    EXPECT_NE(std::string(e.what()).find("without PostgreSQL"), std::string::npos) << e.what();
  }
}

}  // namespace
