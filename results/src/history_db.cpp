// Where a history store lives, and reading and adding runs in SQLite and PostgreSQL
// (history.hpp; the tables: history_schema.cpp, docs/history-schema.md).
#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "history_h5.hpp"
#include "history_sql.hpp"
#include "scalebench/error.hpp"
#include "scalebench/history.hpp"
#include "scalebench/input_file.hpp"
#include "scalebench/utc_time.hpp"

namespace sb::results {
namespace {

using history_sql::Connection;
using history_sql::Row;
using history_sql::Transaction;
using history_sql::Value;

bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::unique_ptr<Connection> open_store(const HistoryLocation& loc, bool create) {
  if (loc.kind == HistoryLocation::Kind::postgresql) return history_sql::open_postgresql(loc.spec);
  return history_sql::open_sqlite(loc.spec, create);
}

long long to_ll(const std::optional<std::string>& v) {
  if (!v || v->empty()) return 0;
  return std::stoll(*v);
}

double to_d(const std::optional<std::string>& v) {
  if (!v || v->empty()) return std::numeric_limits<double>::quiet_NaN();
  return std::strtod(v->c_str(), nullptr);
}

std::string to_s(const std::optional<std::string>& v) {
  return v ? *v : std::string();
}

/// Seconds since 1970 of "YYYY-MM-DDTHH:MM:SS[.fff]Z"; NaN when it does not parse.
double unix_time(const std::string& utc) {
  std::tm tm{};
  const char* end = ::strptime(utc.c_str(), "%Y-%m-%dT%H:%M:%S", &tm);
  if (end == nullptr) return std::numeric_limits<double>::quiet_NaN();
  double fraction = 0;
  if (*end == '.') {
    char* after = nullptr;
    fraction = std::strtod(end, &after);
    end = after;
  }
  if (*end != 'Z' && *end != '\0') return std::numeric_limits<double>::quiet_NaN();
  return static_cast<double>(::timegm(&tm)) + fraction;
}

/// INSERT of many rows, as few statements as the parameter limit allows.
void insert_rows(Connection& db, const std::string& table, const std::vector<std::string>& columns,
                 const std::vector<std::vector<Value>>& rows, const std::string& tail = {}) {
  if (rows.empty()) return;
  const std::size_t per = std::max<std::size_t>(1, db.max_parameters() / columns.size());
  std::string names;
  for (const auto& c : columns) names += (names.empty() ? "" : ", ") + c;
  for (std::size_t first = 0; first < rows.size(); first += per) {
    const std::size_t last = std::min(rows.size(), first + per);
    std::string sql = fmt::format("INSERT INTO {} ({}) VALUES ", table, names);
    std::vector<Value> params;
    params.reserve((last - first) * columns.size());
    for (std::size_t r = first; r < last; ++r) {
      sql += r == first ? "(" : ", (";
      for (std::size_t c = 0; c < columns.size(); ++c) {
        params.push_back(rows[r][c]);
        sql += (c == 0 ? "" : ", ") + db.placeholder(params.size());
      }
      sql += ")";
    }
    db.exec(sql + tail, params);
  }
}

/// The placeholders of `n` parameters from the first: "?, ?, ?" or "$1, $2, $3".
std::string placeholders(const Connection& db, std::size_t n) {
  std::string s;
  for (std::size_t i = 1; i <= n; ++i) s += (i == 1 ? "" : ", ") + db.placeholder(i);
  return s;
}

/// Adds one run (not in the store yet) with the next id; `case_ids` maps the store's case keys.
void insert_run(Connection& db, const HistoryRun& run, long long id,
                std::map<std::string, long long>& case_ids) {
  db.exec(fmt::format("INSERT INTO machines (machine, description) VALUES ({}) "
                      "ON CONFLICT (machine) DO NOTHING",
                      placeholders(db, 2)),
          {run.machine, run.machine_text});
  const auto optional_count = [](long long v) -> Value {
    return v > 0 ? Value(v) : Value(nullptr);
  };
  insert_rows(
      db, "runs",
      {"run", "commit_id", "time_utc", "time_unix", "host", "machine", "scheduler", "job_id",
       "nodes", "workers", "preset", "scalebench_version", "status", "report", "added_utc"},
      {{id, run.commit, run.time_utc, unix_time(run.time_utc), run.host, run.machine, run.scheduler,
        run.job_id, optional_count(run.nodes), optional_count(run.workers), run.preset,
        run.scalebench_version, run.status, run.report, run.added_utc}});
  std::vector<std::vector<Value>> new_cases, params, results, samples;
  long long next_case = 1;
  for (const auto& [key, cid] : case_ids) next_case = std::max(next_case, cid + 1);
  for (std::size_t pos = 0; pos < run.cases.size(); ++pos) {
    const HistoryCase& c = run.cases[pos];
    auto it = case_ids.find(c.key);
    if (it == case_ids.end()) {
      it = case_ids.emplace(c.key, next_case++).first;
      new_cases.push_back({it->second, c.key, c.workload, c.path, c.params, c.device});
      for (const auto& [k, v] : history_params(c.params)) params.push_back({it->second, k, v});
    }
    const std::size_t repeats = c.totals.empty() ? c.repeats : c.totals.size();
    results.push_back({id, it->second, static_cast<long long>(pos), c.status,
                       static_cast<long long>(repeats), c.fast_s, c.median_s});
    for (std::size_t i = 0; i < c.totals.size(); ++i)
      samples.push_back({id, it->second, static_cast<long long>(i), c.totals[i]});
  }
  insert_rows(db, "cases", {"case_id", "case_key", "workload", "path", "params", "device"},
              new_cases);
  // A parameter named twice in a params text keeps its first value.
  insert_rows(db, "case_params", {"case_id", "name", "value"}, params,
              " ON CONFLICT (case_id, name) DO NOTHING");
  insert_rows(db, "results",
              {"run", "case_id", "position", "status", "repeats", "fast_s", "median_s"}, results);
  insert_rows(db, "samples", {"run", "case_id", "repeat_index", "seconds"}, samples);
}

HistoryStore read_tables(Connection& db, bool with_samples) {
  HistoryStore store;
  std::map<std::string, std::string> machines;
  for (const Row& r : db.query("SELECT machine, description FROM machines"))
    machines[to_s(r[0])] = to_s(r[1]);
  std::map<long long, std::size_t> run_at;
  for (const Row& r : db.query(
           "SELECT run, commit_id, time_utc, host, machine, scheduler, job_id, nodes, workers, "
           "preset, scalebench_version, status, report, added_utc FROM runs")) {
    HistoryRun run;
    run.id = to_ll(r[0]);
    run.commit = to_s(r[1]);
    run.time_utc = to_s(r[2]);
    run.host = to_s(r[3]);
    run.machine = to_s(r[4]);
    run.machine_text = machines[run.machine];
    run.scheduler = to_s(r[5]);
    run.job_id = to_s(r[6]);
    run.nodes = to_ll(r[7]);
    run.workers = to_ll(r[8]);
    run.preset = to_s(r[9]);
    run.scalebench_version = to_s(r[10]);
    run.status = to_s(r[11]);
    run.report = to_s(r[12]);
    run.added_utc = to_s(r[13]);
    run_at[run.id] = store.runs.size();
    store.runs.push_back(std::move(run));
  }
  std::map<long long, HistoryCase> cases;
  for (const Row& r :
       db.query("SELECT case_id, case_key, workload, path, params, device FROM cases")) {
    HistoryCase& c = cases[to_ll(r[0])];
    c.key = to_s(r[1]);
    c.workload = to_s(r[2]);
    c.path = to_s(r[3]);
    c.params = to_s(r[4]);
    c.device = to_s(r[5]);
  }
  // per run: (position, case), so each run keeps its report's order of cases
  std::vector<std::vector<std::pair<long long, HistoryCase>>> per_run(store.runs.size());
  for (const Row& r :
       db.query("SELECT run, case_id, position, status, repeats, fast_s, median_s FROM results")) {
    const auto run = run_at.find(to_ll(r[0]));
    const auto known = cases.find(to_ll(r[1]));
    if (run == run_at.end() || known == cases.end()) continue;
    HistoryCase c = known->second;
    c.status = to_s(r[3]);
    c.repeats = static_cast<std::size_t>(std::max(0LL, to_ll(r[4])));
    c.fast_s = to_d(r[5]);
    c.median_s = to_d(r[6]);
    per_run[run->second].emplace_back(to_ll(r[2]), std::move(c));
  }
  for (std::size_t i = 0; i < store.runs.size(); ++i) {
    auto& list = per_run[i];
    std::sort(list.begin(), list.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [pos, c] : list) store.runs[i].cases.push_back(std::move(c));
  }
  if (with_samples) {
    std::map<std::pair<long long, long long>, std::vector<std::pair<long long, double>>> times;
    for (const Row& r : db.query("SELECT run, case_id, repeat_index, seconds FROM samples"))
      times[{to_ll(r[0]), to_ll(r[1])}].emplace_back(to_ll(r[2]), to_d(r[3]));
    std::map<std::string, long long> case_id;
    for (const auto& [id, c] : cases) case_id[c.key] = id;
    for (auto& run : store.runs)
      for (auto& c : run.cases) {
        auto it = times.find({run.id, case_id[c.key]});
        if (it == times.end()) continue;
        std::sort(it->second.begin(), it->second.end());
        for (const auto& [i, t] : it->second) c.totals.push_back(t);
      }
  }
  // Time order (then the order added), compared byte by byte here, not in a database collation.
  std::sort(store.runs.begin(), store.runs.end(), [](const HistoryRun& a, const HistoryRun& b) {
    return std::tie(a.time_utc, a.id) < std::tie(b.time_utc, b.id);
  });
  return store;
}

}  // namespace

HistoryLocation locate_history(const std::string& spec, bool for_writing) {
  namespace fs = std::filesystem;
  HistoryLocation loc;
  loc.spec = spec;
  loc.label = spec;
  if (spec.empty())
    throw UsageError("the history store is empty: name a file or a postgresql:// URI");
  if (starts_with(spec, "postgresql://") || starts_with(spec, "postgres://")) {
    loc.kind = HistoryLocation::Kind::postgresql;
    loc.label = history_sql::hide_password(spec);
    return loc;
  }
  if (spec.find("://") != std::string::npos)
    throw UsageError(
        fmt::format("history store {}: a store is a file (SQLite) or a postgresql:// URI",
                    history_sql::hide_password(spec)));
  std::error_code ec;
  const fs::file_status st = fs::status(spec, ec);
  if (!fs::exists(st)) {
    if (!for_writing)
      throw UsageError(
          fmt::format("history store {} does not exist (`history add` creates it)", spec));
    const std::string ext = lower(fs::path(spec).extension().string());
    if (ext == ".h5" || ext == ".hdf5")
      throw UsageError(fmt::format(
          "history store {}: stores are SQLite databases; name the new one e.g. {} (an HDF5 "
          "store of an earlier scalebench is imported with `scalebench history import OLD.h5 "
          "NEW.db`)",
          spec, fs::path(spec).replace_extension(".db").string()));
    return loc;
  }
  if (fs::is_directory(st))
    throw UsageError(fmt::format(
        "history store {} is a folder; a store is one file (SQLite) or a postgresql:// URI", spec));
  if (!fs::is_regular_file(st)) {
    check_regular_input(spec, "history store");  // says what it is (a FIFO, a device)
    throw UsageError(fmt::format("history store {} is not a regular file", spec));
  }
  std::ifstream in(spec, std::ios::binary);
  if (!in)
    throw EnvironmentError(
        fmt::format("cannot read history store {}: {}", spec, std::strerror(errno)));
  char head[16] = {};
  in.read(head, sizeof head);
  const std::size_t got = static_cast<std::size_t>(in.gcount());
  if (got == 0) return loc;  // an empty file: a new SQLite store
  if (got == 16 && std::memcmp(head, "SQLite format 3", 16) == 0) return loc;
  if (got >= 8 && std::memcmp(head, "\x89HDF\r\n\x1a\n", 8) == 0) {
    loc.kind = HistoryLocation::Kind::hdf5;
    if (for_writing) {
      try {
        (void)read_history_h5(spec);
      } catch (const UsageError& e) {  // a report, or another HDF5 file
        throw UsageError(
            fmt::format("{} (`history add STORE REPORT.h5..`: the store comes first)", e.what()));
      }
      throw UsageError(fmt::format(
          "{} is an HDF5 history store of an earlier scalebench (one writer at a time); stores "
          "are SQLite databases now. Import it once and add to the new store: scalebench "
          "history import {} {} ({} is left as it is)",
          spec, spec, fs::path(spec).replace_extension(".db").string(), spec));
    }
    return loc;
  }
  throw UsageError(fmt::format(
      "{} is not a history store: neither a SQLite database nor an HDF5 store of an earlier "
      "scalebench",
      spec));
}

HistoryStore read_history(const std::string& spec, bool samples) {
  const HistoryLocation loc = locate_history(spec, false);
  if (loc.kind == HistoryLocation::Kind::hdf5) return read_history_h5(spec);
  const auto db = open_store(loc, false);
  Transaction tx(*db);
  db->begin_read();
  if (!history_sql::check_schema(*db))
    throw UsageError(
        fmt::format("history store {} is empty (`history add` creates its tables)", loc.label));
  HistoryStore store = read_tables(*db, samples);
  tx.commit();
  return store;
}

HistoryAdded add_history_runs(const std::string& spec, std::vector<HistoryRun> runs) {
  const HistoryLocation loc = locate_history(spec, true);
  const auto db = open_store(loc, true);
  Transaction tx(*db);
  db->begin_write();
  history_sql::ensure_schema(*db);
  const std::string now = utc_now();
  long long next = 1;
  for (const Row& r : db->query("SELECT COALESCE(MAX(run), 0) FROM runs")) next = to_ll(r[0]) + 1;
  std::map<std::string, long long> case_ids;
  for (const Row& r : db->query("SELECT case_key, case_id FROM cases"))
    case_ids[to_s(r[0])] = to_ll(r[1]);
  const std::string same = fmt::format(
      "SELECT run FROM runs WHERE commit_id = {} AND time_utc = {} AND host = {} AND machine = {}",
      db->placeholder(1), db->placeholder(2), db->placeholder(3), db->placeholder(4));
  HistoryAdded out;
  for (auto& run : runs) {
    if (!db->query(same, {run.commit, run.time_utc, run.host, run.machine}).empty()) {
      out.added.push_back(false);
      continue;
    }
    if (run.added_utc.empty()) run.added_utc = now;
    insert_run(*db, run, next++, case_ids);
    out.added.push_back(true);
  }
  for (const Row& r : db->query("SELECT count(*) FROM runs"))
    out.runs = static_cast<std::size_t>(to_ll(r[0]));
  tx.commit();
  return out;
}

}  // namespace sb::results
