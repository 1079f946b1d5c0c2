// The least work of a groupby repeat (work_floor.hpp).
#include "groupby/work_floor.hpp"

#include <cmath>

#include "groupby/query.hpp"

namespace sb::groupby {

int partition_row_bytes(const Config& c) {
  return (c.keys_fit_32_bits() ? 4 : 8) + 8 + ((c.def.fields & kSumY) != 0 ? 8 : 0);
}

double expected_groups(const Config& c) {
  if (!c.def.high_cardinality) return static_cast<double>(c.def.domain_size);
  // cardinality (1 - (1 - 1/cardinality)^rows), computed without cancellation
  const double k = static_cast<double>(c.cardinality);
  const double r = static_cast<double>(c.rows);
  return -k * std::expm1(r * std::log1p(-1.0 / k));
}

Work work_floor(const Config& c) {
  const QueryDef& q = c.def;
  const double rows = static_cast<double>(c.rows);
  Work w;
  w.units = rows;
  w.unit = "rows";
  const int calls = ((q.columns & (kColX | kColName | kColId)) != 0 ? 1 : 0) +
                    ((q.columns & (kColY | kColKey)) != 0 ? 1 : 0);
  w.philox = rows * calls;
  const double record = 8.0 * record_width(q.fields);
  w.bytes = expected_groups(c) * record;
  if (q.high_cardinality) {
    // The table the GPU sizes for the case (hash_table.cu make_hash: load at most 0.7).
    const double groups = static_cast<double>(c.max_groups(c.rows));
    double slots = 16;
    while (slots * 0.7 < groups) slots *= 2;
    if (slots * record > kOnChipTableBytes) w.bytes += 4.0 * partition_row_bytes(c) * rows;
  }
  w.bound = Work::Bound::bytes;
  return w;
}

}  // namespace sb::groupby
