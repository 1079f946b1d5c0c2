// The history store in PostgreSQL (history_sql.hpp): a schema of a team's database, writers one
// after another through a transaction-scoped advisory lock. Built where libpq is found
// (SB_HAVE_POSTGRESQL); elsewhere a PostgreSQL URI is refused with one line.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "history_sql.hpp"
#include "scalebench/error.hpp"
#include "scalebench/settings.hpp"

#ifdef SB_HAVE_POSTGRESQL
#include <libpq-fe.h>
#endif

namespace sb::results::history_sql {
namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string percent_decode(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex_digit(s[i + 1]) >= 0 && hex_digit(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_digit(s[i + 1]) * 16 + hex_digit(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

/// The URI without `schema=NAME` (which libpq does not know), and NAME (default scalebench).
std::pair<std::string, std::string> split_schema(const std::string& uri) {
  const std::size_t q = uri.find('?');
  if (q == std::string::npos) return {uri, "scalebench"};
  std::string schema = "scalebench", rest;
  std::size_t start = q + 1;
  while (start <= uri.size()) {
    const std::size_t amp = uri.find('&', start);
    const std::string item =
        uri.substr(start, amp == std::string::npos ? std::string::npos : amp - start);
    if (item.rfind("schema=", 0) == 0) {
      schema = percent_decode(item.substr(7));
    } else if (!item.empty()) {
      rest += (rest.empty() ? "" : "&") + item;
    }
    if (amp == std::string::npos) break;
    start = amp + 1;
  }
  bool ok = !schema.empty() && schema.size() <= 63 &&
            (std::isalpha(static_cast<unsigned char>(schema[0])) != 0 || schema[0] == '_');
  for (char c : schema) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_');
  if (!ok)
    throw UsageError(
        fmt::format("history store {}: schema '{}' must be a plain SQL name (letters, digits, _)",
                    hide_password(uri), schema));
  return {uri.substr(0, q) + (rest.empty() ? "" : "?" + rest), schema};
}

#ifdef SB_HAVE_POSTGRESQL

/// The advisory-lock key of a store: FNV-1a of its schema name, the same in every client.
long long lock_key(const std::string& schema) {
  std::uint64_t h = 14695981039346656037ULL;
  for (const char c : "scalebench history " + schema) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return static_cast<long long>(h >> 1);
}

std::string first_line(const char* text) {
  std::string s = text != nullptr ? text : "";
  const std::size_t nl = s.find('\n');
  if (nl != std::string::npos) s.resize(nl);
  return s;
}

class Postgres final : public Connection {
 public:
  explicit Postgres(const std::string& uri)
      : label_(hide_password(uri)), wait_s_(settings::history_lock_timeout_s()) {
    const auto [conninfo, schema] = split_schema(uri);
    schema_ = schema;
    // Defaults first: the URI's own settings come later and win (PQconnectdbParams).
    const char* keys[] = {"connect_timeout", "application_name", "dbname", nullptr};
    const char* values[] = {"10", "scalebench history", conninfo.c_str(), nullptr};
    conn_ = PQconnectdbParams(keys, values, 1);
    if (conn_ == nullptr || PQstatus(conn_) != CONNECTION_OK) {
      const std::string why =
          conn_ != nullptr ? first_line(PQerrorMessage(conn_)) : "out of memory";
      PQfinish(conn_);
      conn_ = nullptr;
      throw EnvironmentError(fmt::format("cannot connect to history store {}: {}", label_, why));
    }
    // "relation already exists, skipping" and the like are not for the user.
    PQsetNoticeProcessor(
        conn_, [](void*, const char*) {}, nullptr);
    try {
      // lock_timeout 0 would wait for ever: "stop at once" is the shortest wait instead.
      exec(fmt::format(
          "SET client_min_messages = warning; SET extra_float_digits = 3; "
          "SET lock_timeout = '{}ms'; SET search_path TO \"{}\"",
          std::max<long long>(1, std::llround(std::min(wait_s_ * 1000.0, 2e9))), schema_));
    } catch (...) {
      PQfinish(conn_);
      throw;
    }
  }
  ~Postgres() override {
    rollback();
    PQfinish(conn_);
  }
  Postgres(const Postgres&) = delete;
  Postgres& operator=(const Postgres&) = delete;

  [[nodiscard]] const char* dialect() const override { return "postgresql"; }
  [[nodiscard]] const std::string& label() const override { return label_; }
  [[nodiscard]] std::string placeholder(std::size_t i) const override {
    return "$" + std::to_string(i);
  }
  [[nodiscard]] std::size_t max_parameters() const override { return 30000; }

  std::vector<Row> query(const std::string& sql, const std::vector<Value>& params) override {
    PGresult* res = nullptr;
    if (params.empty()) {
      res = PQexec(conn_, sql.c_str());
    } else {
      std::vector<std::string> text(params.size());
      std::vector<const char*> ptrs(params.size(), nullptr);
      for (std::size_t i = 0; i < params.size(); ++i) {
        const Value& v = params[i];
        if (const auto* x = std::get_if<long long>(&v)) {
          text[i] = std::to_string(*x);
        } else if (const auto* d = std::get_if<double>(&v)) {
          if (!std::isfinite(*d)) continue;
          text[i] = fmt::format("{}", *d);  // shortest text that reads back exactly
        } else if (const auto* s = std::get_if<std::string>(&v)) {
          text[i] = *s;
        } else {
          continue;
        }
        ptrs[i] = text[i].c_str();
      }
      res = PQexecParams(conn_, sql.c_str(), static_cast<int>(params.size()), nullptr, ptrs.data(),
                         nullptr, nullptr, 0);
    }
    const std::unique_ptr<PGresult, void (*)(PGresult*)> guard(res, PQclear);
    const ExecStatusType st = res != nullptr ? PQresultStatus(res) : PGRES_FATAL_ERROR;
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) fail(res, sql);
    std::vector<Row> rows;
    const int n = PQntuples(res), m = PQnfields(res);
    rows.reserve(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
      Row row;
      for (int c = 0; c < m; ++c) {
        if (PQgetisnull(res, r, c) != 0) {
          row.emplace_back();
        } else {
          row.emplace_back(
              std::string(PQgetvalue(res, r, c), static_cast<std::size_t>(PQgetlength(res, r, c))));
        }
      }
      rows.push_back(std::move(row));
    }
    return rows;
  }

  [[nodiscard]] bool has_table(const std::string& name) override {
    return !query("SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = $1 AND tablename = $2",
                  {schema_, name})
                .empty();
  }
  [[nodiscard]] long long table_count() override {
    const auto rows =
        query("SELECT count(*) FROM pg_catalog.pg_tables WHERE schemaname = $1", {schema_});
    return rows.empty() || !rows[0][0] ? 0 : std::stoll(*rows[0][0]);
  }

  void begin_write() override {
    exec("BEGIN");
    exec("SELECT pg_catalog.pg_advisory_xact_lock($1::bigint)", {lock_key(schema_)});
    // Checked first: a user who may not create schemas can still write to one made for them.
    if (query("SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1", {schema_}).empty())
      exec(fmt::format("CREATE SCHEMA \"{}\"", schema_));
  }
  void begin_read() override { exec("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY"); }
  void commit() override { exec("COMMIT"); }
  void rollback() noexcept override {
    if (conn_ != nullptr && PQtransactionStatus(conn_) != PQTRANS_IDLE &&
        PQstatus(conn_) == CONNECTION_OK)
      PQclear(PQexec(conn_, "ROLLBACK"));
  }

 private:
  PGconn* conn_ = nullptr;
  std::string label_;
  std::string schema_;
  double wait_s_;

  [[noreturn]] void fail(const PGresult* res, const std::string& sql) {
    const char* state = res != nullptr ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
    const std::string code = state != nullptr ? state : "";
    const std::string msg =
        first_line(res != nullptr ? PQresultErrorMessage(res) : PQerrorMessage(conn_));
    if (PQstatus(conn_) != CONNECTION_OK || code.rfind("08", 0) == 0 || code.rfind("57", 0) == 0)
      throw EnvironmentError(
          fmt::format("lost the connection to history store {}: {}", label_, msg));
    if (code == "55P03")
      throw EnvironmentError(fmt::format(
          "history store {} is locked: another process has been writing to it for over {:g} s "
          "(SCALEBENCH_HISTORY_LOCK_TIMEOUT_S)",
          label_, wait_s_));
    if (code == "42501" || code.rfind("53", 0) == 0 || code == "25006" || code == "40001" ||
        code == "40P01")
      throw EnvironmentError(fmt::format("cannot use history store {}: {}", label_, msg));
    throw Error(
        fmt::format("history store {}: PostgreSQL: {} (in: {})", label_, msg, sql.substr(0, 80)));
  }
};

#endif  // SB_HAVE_POSTGRESQL

}  // namespace

std::string hide_password(const std::string& uri) {
  std::string out = uri;
  const std::size_t scheme = out.find("://");
  if (scheme != std::string::npos) {
    const std::size_t start = scheme + 3;
    const std::size_t end = out.find_first_of("/?", start);
    const std::size_t at = out.rfind('@', end == std::string::npos ? std::string::npos : end);
    if (at != std::string::npos && at >= start) {
      const std::size_t colon = out.find(':', start);
      if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  for (std::size_t p = out.find("password="); p != std::string::npos;
       p = out.find("password=", p + 1)) {
    if (p > 0 && out[p - 1] != '?' && out[p - 1] != '&' && out[p - 1] != ' ') continue;
    const std::size_t v = p + 9;
    const std::size_t e = out.find_first_of("& ", v);
    out.replace(v, (e == std::string::npos ? out.size() : e) - v, "***");
  }
  return out;
}

#ifdef SB_HAVE_POSTGRESQL
bool postgresql_available() {
  return true;
}

std::unique_ptr<Connection> open_postgresql(const std::string& uri) {
  return std::make_unique<Postgres>(uri);
}
#else
bool postgresql_available() {
  return false;
}

std::unique_ptr<Connection> open_postgresql(const std::string& uri) {
  (void)split_schema(uri);
  throw UsageError(fmt::format(
      "history store {}: this scalebench was built without PostgreSQL (install libpq-dev, "
      "tools/deps.txt, and configure again)",
      hide_password(uri)));
}
#endif

}  // namespace sb::results::history_sql
