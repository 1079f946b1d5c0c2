// The history store in SQLite (history_sql.hpp): one file, WAL mode, writers one after another
// through BEGIN IMMEDIATE and a busy timeout.
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "history_sql.hpp"
#include "scalebench/error.hpp"
#include "scalebench/settings.hpp"

namespace sb::results::history_sql {
namespace {

/// A file: URI of an absolute path.
std::string file_uri(const std::string& path) {
  std::string out = "file:";
  for (const unsigned char c : std::filesystem::absolute(path).string()) {
    if (std::isalnum(c) != 0 || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

/// A store in a folder this process may not write to, with no write-ahead log beside it: WAL
/// mode would need to create its shared-memory file there, so the file is read as it is.
bool read_as_is(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path folder = fs::absolute(path, ec).parent_path();
  return ::access(folder.c_str(), W_OK) != 0 && !fs::exists(path + "-wal", ec);
}

class Sqlite final : public Connection {
 public:
  Sqlite(const std::string& path, bool create)
      : label_(path), wait_s_(settings::history_lock_timeout_s()) {
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;
    if (create) flags |= SQLITE_OPEN_CREATE;
    std::string target = path;
    if (!create && read_as_is(path)) {
      target = file_uri(path) + "?immutable=1";
      flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX;
    }
    const int rc = sqlite3_open_v2(target.c_str(), &db_, flags, nullptr);
    if (rc != SQLITE_OK) {
      const std::string why = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
      sqlite3_close_v2(db_);
      db_ = nullptr;
      throw EnvironmentError(fmt::format("cannot open history store {}: {}", path, why));
    }
    sqlite3_extended_result_codes(db_, 1);
    // Adds take milliseconds: a lock held for the whole wait belongs to a stuck process.
    sqlite3_busy_timeout(db_, static_cast<int>(std::min(wait_s_ * 1000.0, 2e9)));
    try {
      // Reading the schema tells a SQLite file from another kind of file.
      exec("PRAGMA foreign_keys = ON");
      (void)table_count();
      if (create) {
        // WAL: readers never wait for a writer, and a commit is one append. The mode stays with
        // the file; where the file system cannot share memory SQLite keeps its rollback
        // journal, which is as safe.
        exec("PRAGMA journal_mode = WAL");
        exec("PRAGMA synchronous = FULL");
      }
    } catch (...) {
      sqlite3_close_v2(db_);
      throw;
    }
  }
  ~Sqlite() override {
    rollback();
    sqlite3_close_v2(db_);
  }
  Sqlite(const Sqlite&) = delete;
  Sqlite& operator=(const Sqlite&) = delete;

  [[nodiscard]] const char* dialect() const override { return "sqlite"; }
  [[nodiscard]] const std::string& label() const override { return label_; }
  [[nodiscard]] std::string placeholder(std::size_t) const override { return "?"; }
  [[nodiscard]] std::size_t max_parameters() const override {
    return static_cast<std::size_t>(
        std::min(30000, sqlite3_limit(db_, SQLITE_LIMIT_VARIABLE_NUMBER, -1)));
  }

  std::vector<Row> query(const std::string& sql, const std::vector<Value>& params) override {
    std::vector<Row> rows;
    const char* next = sql.c_str();
    const char* end = next + sql.size();
    while (next < end) {
      sqlite3_stmt* raw = nullptr;
      const char* tail = nullptr;
      int rc = sqlite3_prepare_v2(db_, next, static_cast<int>(end - next), &raw, &tail);
      if (rc != SQLITE_OK) fail(rc, sql);
      next = tail;
      if (raw == nullptr) continue;  // white space or a comment
      const std::unique_ptr<sqlite3_stmt, int (*)(sqlite3_stmt*)> stmt(raw, sqlite3_finalize);
      bind(raw, params, sql);
      rows.clear();
      while ((rc = sqlite3_step(raw)) == SQLITE_ROW) rows.push_back(row_of(raw));
      if (rc != SQLITE_DONE) fail(rc, sql);
    }
    return rows;
  }

  [[nodiscard]] bool has_table(const std::string& name) override {
    return !query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", {name}).empty();
  }
  [[nodiscard]] long long table_count() override {
    const auto rows = query("SELECT count(*) FROM sqlite_master WHERE type = 'table'", {});
    return rows.empty() || !rows[0][0] ? 0 : std::stoll(*rows[0][0]);
  }

  void begin_write() override { exec("BEGIN IMMEDIATE"); }
  void begin_read() override { exec("BEGIN"); }
  void commit() override { exec("COMMIT"); }
  void rollback() noexcept override {
    if (db_ != nullptr && sqlite3_get_autocommit(db_) == 0)
      sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  }

 private:
  sqlite3* db_ = nullptr;
  std::string label_;
  double wait_s_;

  void bind(sqlite3_stmt* stmt, const std::vector<Value>& params, const std::string& sql) {
    const int n = sqlite3_bind_parameter_count(stmt);
    if (static_cast<std::size_t>(n) != params.size())
      throw Error(fmt::format("internal error: {} parameters for {} in {}", params.size(), n, sql));
    for (int i = 0; i < n; ++i) {
      const Value& v = params[static_cast<std::size_t>(i)];
      int rc = SQLITE_OK;
      if (const auto* x = std::get_if<long long>(&v)) {
        rc = sqlite3_bind_int64(stmt, i + 1, *x);
      } else if (const auto* d = std::get_if<double>(&v)) {
        rc = std::isfinite(*d) ? sqlite3_bind_double(stmt, i + 1, *d)
                               : sqlite3_bind_null(stmt, i + 1);
      } else if (const auto* s = std::get_if<std::string>(&v)) {
        rc = sqlite3_bind_text(stmt, i + 1, s->data(), static_cast<int>(s->size()),
                               SQLITE_TRANSIENT);
      } else {
        rc = sqlite3_bind_null(stmt, i + 1);
      }
      if (rc != SQLITE_OK) fail(rc, sql);
    }
  }

  static Row row_of(sqlite3_stmt* stmt) {
    Row row;
    const int n = sqlite3_column_count(stmt);
    for (int i = 0; i < n; ++i) {
      switch (sqlite3_column_type(stmt, i)) {
        case SQLITE_NULL:
          row.emplace_back();
          break;
        case SQLITE_INTEGER:
          row.emplace_back(std::to_string(sqlite3_column_int64(stmt, i)));
          break;
        case SQLITE_FLOAT:  // shortest text that reads back to the same double
          row.emplace_back(fmt::format("{}", sqlite3_column_double(stmt, i)));
          break;
        default: {
          const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, i));
          row.emplace_back(std::string(text != nullptr ? text : "",
                                       static_cast<std::size_t>(sqlite3_column_bytes(stmt, i))));
        }
      }
    }
    return row;
  }

  [[noreturn]] void fail(int rc, const std::string& sql) {
    const std::string msg = sqlite3_errmsg(db_);
    switch (rc & 0xff) {
      case SQLITE_BUSY:
      case SQLITE_LOCKED:
        throw EnvironmentError(fmt::format(
            "history store {} is locked: another process has been writing to it for over {:g} s "
            "(SCALEBENCH_HISTORY_LOCK_TIMEOUT_S)",
            label_, wait_s_));
      case SQLITE_NOTADB:
      case SQLITE_CORRUPT:
        throw UsageError(fmt::format("history store {} is not a SQLite database or is damaged: {}",
                                     label_, msg));
      case SQLITE_FULL:
      case SQLITE_IOERR:
      case SQLITE_READONLY:
      case SQLITE_CANTOPEN:
      case SQLITE_PERM:
      case SQLITE_NOMEM:
      case SQLITE_PROTOCOL:
        throw EnvironmentError(fmt::format("cannot use history store {}: {}", label_, msg));
      default:
        throw Error(
            fmt::format("history store {}: SQLite: {} (in: {})", label_, msg, sql.substr(0, 80)));
    }
  }
};

}  // namespace

std::unique_ptr<Connection> open_sqlite(const std::string& path, bool create) {
  return std::make_unique<Sqlite>(path, create);
}

}  // namespace sb::results::history_sql
