#pragma once
/// @file aggregate_cpu.hpp
/// CPU hash aggregation of generated columns into a (thread-local) partitioned table.

#include <cstdint>
#include <vector>

#include "groupby/group_table.hpp"
#include "groupby/query.hpp"
#include "groupby/table.hpp"

namespace sb::groupby {

/// Adds rows [begin, end) of `in` (the key column of the query and x / y as its fields need)
/// to `table`, one thread. High-cardinality queries prefetch the home slots of rows ahead.
void aggregate_rows(const QueryDef& q, const ColumnPtrs& in, std::int64_t begin, std::int64_t end,
                    PartitionedTable& table);

/// Rows [0, n) split into contiguous slices over `tables.size()` OpenMP threads, thread t
/// adding its slice to *tables[t].
void aggregate_rows_parallel(const QueryDef& q, const ColumnPtrs& in, std::int64_t n,
                             const std::vector<PartitionedTable*>& tables);

}  // namespace sb::groupby
