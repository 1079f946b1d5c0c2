#pragma once
/// @file query.hpp
/// The three groupby queries, the per-group aggregate state they keep, and the flat record
/// layout that state travels in (worker partials, the all-to-all shuffle, fingerprints).
///
/// A group's state is a count plus the fields of a bit mask: sum of x, sum of y, sum of x^2,
/// min of x, max of x. Every output aggregation is a function of that state: count, sum, mean,
/// min, max, and var / std (sample variance, from count, sum and sum of squares).
///
/// A record is [key, count, field...] with the fields of the mask in the order of FieldBits,
/// i.e. 2 + popcount(mask) 8-byte words: key and count are int64, fields are float64 (the
/// "wire" form keeps their bits in uint64 words; the "report" form stores all as doubles,
/// exact for keys and counts below 2^53).

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "groupby/table.hpp"

namespace sb::groupby {

enum class Query { by_name, by_id, by_key };

[[nodiscard]] std::string_view to_string(Query q) noexcept;
[[nodiscard]] std::optional<Query> parse_query(std::string_view text) noexcept;

/// Fields of a group's state besides the count (always kept).
enum FieldBits : unsigned {
  kSumX = 1u << 0,
  kSumY = 1u << 1,
  kSumSqX = 1u << 2,
  kMinX = 1u << 3,
  kMaxX = 1u << 4,
  kAllFields = 0x1fu,
};
inline constexpr int kMaxFields = 5;

/// Words of a record with these fields: key, count, one per field.
[[nodiscard]] constexpr int record_width(unsigned fields) {
  int n = 2;
  for (unsigned f = fields & kAllFields; f != 0; f &= f - 1) ++n;
  return n;
}

/// The state of one group (all fields; a query updates those of its mask).
struct GroupState {
  std::int64_t count = 0;
  double sum_x = 0.0;
  double sum_y = 0.0;
  double sumsq_x = 0.0;
  double min_x = std::numeric_limits<double>::infinity();
  double max_x = -std::numeric_limits<double>::infinity();

  /// Adds one row.
  template <unsigned Fields>
  void add(double x, double y) noexcept {
    ++count;
    if constexpr ((Fields & kSumX) != 0) sum_x += x;
    if constexpr ((Fields & kSumY) != 0) sum_y += y;
    if constexpr ((Fields & kSumSqX) != 0) sumsq_x += x * x;
    if constexpr ((Fields & kMinX) != 0) min_x = x < min_x ? x : min_x;
    if constexpr ((Fields & kMaxX) != 0) max_x = x > max_x ? x : max_x;
  }
  /// Adds another partial state of the same group (all fields; unused ones stay neutral).
  void combine(const GroupState& o) noexcept {
    count += o.count;
    sum_x += o.sum_x;
    sum_y += o.sum_y;
    sumsq_x += o.sumsq_x;
    min_x = o.min_x < min_x ? o.min_x : min_x;
    max_x = o.max_x > max_x ? o.max_x : max_x;
  }
};

/// Value of field bit `f` in a state.
[[nodiscard]] double field_value(const GroupState& s, unsigned f) noexcept;
void set_field(GroupState& s, unsigned f, double v) noexcept;

/// Output aggregations (docs/specification.md §4.3), all derived from GroupState.
enum class Agg { count, sum, mean, min, max, var, std };
enum class ValueColumn { x, y };

struct OutputColumn {
  std::string name;  ///< "mean_x", "sum_y", "count", ...
  Agg agg;
  ValueColumn column;
};

/// State fields an aggregation needs.
[[nodiscard]] unsigned fields_for(Agg agg, ValueColumn column);
/// The aggregation's value for a group.
[[nodiscard]] double aggregate(const GroupState& s, Agg agg, ValueColumn column) noexcept;

/// What a query groups by and computes.
struct QueryDef {
  Query query = Query::by_name;
  std::string key_name;     ///< "name", "id", "key"
  unsigned key_column = 0;  ///< ColumnBits of the key
  std::vector<OutputColumn> outputs;
  unsigned fields = 0;            ///< state fields the outputs need
  unsigned columns = 0;           ///< columns the aggregation reads (key + values)
  bool high_cardinality = false;  ///< hash-partitioned shuffle instead of a reduction
  /// Low-cardinality queries: every key lies in [domain_lo, domain_lo + domain_size) (name
  /// codes; the values Poisson(1000) can take), so partial results combine as dense arrays.
  std::int64_t domain_lo = 0;
  std::int64_t domain_size = 0;
  /// Bytes of input the aggregation reads per row.
  [[nodiscard]] int bytes_per_row() const;
};

/// by-name: mean x by name; by-id: mean x, sum y, count by id; by-key: mean x, sum y, count,
/// min x, max x by key.
[[nodiscard]] QueryDef query_def(Query q);

/// A QueryDef with extra outputs appended (e.g. var/std of x), for users of the library.
[[nodiscard]] QueryDef with_outputs(QueryDef def, const std::vector<OutputColumn>& extra);

/// Record encoding (see the file comment). `out` receives record_width(fields) words.
void pack_record(std::int64_t key, const GroupState& s, unsigned fields,
                 std::uint64_t* out) noexcept;
void unpack_record(const std::uint64_t* in, unsigned fields, std::int64_t& key,
                   GroupState& s) noexcept;
void pack_report_record(std::int64_t key, const GroupState& s, unsigned fields,
                        double* out) noexcept;
void unpack_report_record(const double* in, unsigned fields, std::int64_t& key,
                          GroupState& s) noexcept;

}  // namespace sb::groupby
