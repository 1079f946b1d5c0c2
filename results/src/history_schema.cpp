// The tables of a history store, the same in SQLite and PostgreSQL (docs/history-schema.md).
#include <string>

#include <fmt/format.h>

#include "history_sql.hpp"
#include "scalebench/error.hpp"
#include "scalebench/history.hpp"
#include "scalebench/utc_time.hpp"
#include "scalebench/version.hpp"

namespace sb::results::history_sql {
namespace {

constexpr const char* kKind = "scalebench history";

// Portable types only (TEXT, BIGINT, DOUBLE PRECISION): both databases read this text as is.
constexpr const char* kTables = R"sql(
CREATE TABLE store_info (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL
);
CREATE TABLE machines (
  machine TEXT PRIMARY KEY,
  description TEXT NOT NULL
);
CREATE TABLE runs (
  run BIGINT PRIMARY KEY,
  commit_id TEXT NOT NULL,
  time_utc TEXT NOT NULL,
  time_unix DOUBLE PRECISION,
  host TEXT NOT NULL,
  machine TEXT NOT NULL REFERENCES machines (machine),
  scheduler TEXT NOT NULL,
  job_id TEXT NOT NULL,
  nodes BIGINT,
  workers BIGINT,
  preset TEXT NOT NULL,
  scalebench_version TEXT NOT NULL,
  status TEXT NOT NULL,
  report TEXT NOT NULL,
  added_utc TEXT NOT NULL,
  UNIQUE (commit_id, time_utc, host, machine)
);
CREATE INDEX runs_by_time ON runs (time_utc);
CREATE TABLE cases (
  case_id BIGINT PRIMARY KEY,
  case_key TEXT NOT NULL UNIQUE,
  workload TEXT NOT NULL,
  path TEXT NOT NULL,
  params TEXT NOT NULL,
  device TEXT NOT NULL
);
CREATE TABLE case_params (
  case_id BIGINT NOT NULL REFERENCES cases (case_id),
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (case_id, name)
);
CREATE TABLE results (
  run BIGINT NOT NULL REFERENCES runs (run),
  case_id BIGINT NOT NULL REFERENCES cases (case_id),
  position BIGINT NOT NULL,
  status TEXT NOT NULL,
  repeats BIGINT NOT NULL,
  fast_s DOUBLE PRECISION,
  median_s DOUBLE PRECISION,
  PRIMARY KEY (run, case_id)
);
CREATE INDEX results_by_case ON results (case_id, run);
CREATE TABLE samples (
  run BIGINT NOT NULL,
  case_id BIGINT NOT NULL,
  repeat_index BIGINT NOT NULL,
  seconds DOUBLE PRECISION NOT NULL,
  PRIMARY KEY (run, case_id, repeat_index),
  FOREIGN KEY (run, case_id) REFERENCES results (run, case_id)
);
CREATE VIEW case_runs AS
SELECT x.run, r.time_utc, r.time_unix, r.commit_id, r.host, r.machine, r.preset,
       c.case_key, c.workload, c.path, c.params, c.device,
       x.status, x.repeats, x.fast_s, x.median_s
FROM results x
JOIN runs r ON r.run = x.run
JOIN cases c ON c.case_id = x.case_id;
)sql";

std::string where(Connection& db) {
  return std::string(db.dialect()) == "postgresql" ? fmt::format("PostgreSQL store {}", db.label())
                                                   : fmt::format("{}", db.label());
}

}  // namespace

bool check_schema(Connection& db) {
  if (db.table_count() == 0) return false;
  if (!db.has_table("store_info"))
    throw UsageError(fmt::format(
        "{} holds tables but no scalebench history store (no table store_info); name a new "
        "file, or another schema of the database (?schema=NAME)",
        where(db)));
  std::string kind, version;
  for (const auto& row : db.query("SELECT name, value FROM store_info")) {
    if (row.size() < 2 || !row[0] || !row[1]) continue;
    if (*row[0] == "kind") kind = *row[1];
    if (*row[0] == "schema_version") version = *row[1];
  }
  if (kind != kKind)
    throw UsageError(
        fmt::format("{} is not a scalebench history store (its kind is '{}')", where(db), kind));
  if (version != std::to_string(kHistoryVersion))
    throw UsageError(fmt::format("history store {} has schema version {}; this scalebench reads {}",
                                 db.label(), version.empty() ? "(none)" : version,
                                 kHistoryVersion));
  return true;
}

void ensure_schema(Connection& db) {
  if (check_schema(db)) return;
  db.exec(kTables);
  const std::string p1 = db.placeholder(1), p2 = db.placeholder(2);
  const std::string insert =
      fmt::format("INSERT INTO store_info (name, value) VALUES ({}, {})", p1, p2);
  db.exec(insert, {std::string("kind"), std::string(kKind)});
  db.exec(insert, {std::string("schema_version"), std::to_string(kHistoryVersion)});
  db.exec(insert, {std::string("created_utc"), utc_now()});
  db.exec(insert, {std::string("created_by"), std::string("scalebench ") + version()});
}

}  // namespace sb::results::history_sql
