#pragma once
/// @file history_sql.hpp
/// (private) The history store's database connection, one interface over SQLite and PostgreSQL
/// (history_sqlite.cpp, history_postgresql.cpp), and the schema both share
/// (history_schema.cpp, docs/history-schema.md). The store's logic (history_db.cpp) writes one
/// SQL text for both: portable types, `ON CONFLICT`, and parameters numbered by placeholder().

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace sb::results::history_sql {

/// A statement parameter: NULL, an integer, a real number (non-finite: NULL) or text.
using Value = std::variant<std::nullptr_t, long long, double, std::string>;
/// A result row, each column as text (reals in their shortest exact form), NULL as nullopt.
using Row = std::vector<std::optional<std::string>>;

class Connection {
 public:
  virtual ~Connection() = default;
  /// "sqlite" or "postgresql".
  [[nodiscard]] virtual const char* dialect() const = 0;
  /// The store as messages name it (a URI without its password).
  [[nodiscard]] virtual const std::string& label() const = 0;
  /// The text of parameter `i` (1-based) in a statement: "?" or "$i".
  [[nodiscard]] virtual std::string placeholder(std::size_t i) const = 0;
  /// The most parameters one statement may take.
  [[nodiscard]] virtual std::size_t max_parameters() const = 0;

  /// Runs one statement (or, without parameters, several) and returns its rows.
  virtual std::vector<Row> query(const std::string& sql, const std::vector<Value>& params = {}) = 0;
  void exec(const std::string& sql, const std::vector<Value>& params = {}) {
    (void)query(sql, params);
  }
  /// Whether the store's table `name` exists.
  [[nodiscard]] virtual bool has_table(const std::string& name) = 0;
  /// Tables in the store's database (SQLite) or schema (PostgreSQL), scalebench's or not.
  [[nodiscard]] virtual long long table_count() = 0;

  /// A write transaction that holds the store's write lock until commit or rollback, so that
  /// writers follow one another (SQLite: BEGIN IMMEDIATE; PostgreSQL: BEGIN and an advisory
  /// lock). Creates the PostgreSQL schema when missing.
  virtual void begin_write() = 0;
  /// A read-only transaction: one consistent snapshot for every query until commit.
  virtual void begin_read() = 0;
  virtual void commit() = 0;
  /// Ends a transaction, if one is open, dropping its changes; never throws.
  virtual void rollback() noexcept = 0;
};

/// Opens a SQLite store (`create`: the file is made when missing; the store is set to WAL mode).
/// Throws sb::UsageError (not a SQLite file) or sb::EnvironmentError (cannot open or lock).
[[nodiscard]] std::unique_ptr<Connection> open_sqlite(const std::string& path, bool create);
/// Opens a PostgreSQL store: a libpq URI, its schema from `?schema=NAME` (default scalebench).
/// Throws sb::EnvironmentError when the server cannot be reached, sb::UsageError for a bad URI
/// or a build without libpq.
[[nodiscard]] std::unique_ptr<Connection> open_postgresql(const std::string& uri);
/// A URI with its password replaced by ***, for messages.
[[nodiscard]] std::string hide_password(const std::string& uri);
/// Whether this build can open PostgreSQL stores.
[[nodiscard]] bool postgresql_available();

/// Makes the tables of an empty store (inside a write transaction), or checks those of an
/// existing one. Throws sb::UsageError for a database that holds other tables but no store, or
/// a store of a newer schema version.
void ensure_schema(Connection& db);
/// Checks that `db` holds a store this scalebench reads; false when it holds no table at all
/// (an empty store). Throws sb::UsageError as ensure_schema does.
bool check_schema(Connection& db);

/// Rolls back an open transaction when it goes out of scope without commit().
class Transaction {
 public:
  explicit Transaction(Connection& db) : db_(db) {}
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction() {
    if (!done_) db_.rollback();
  }
  void commit() {
    db_.commit();
    done_ = true;
  }

 private:
  Connection& db_;
  bool done_ = false;
};

}  // namespace sb::results::history_sql
