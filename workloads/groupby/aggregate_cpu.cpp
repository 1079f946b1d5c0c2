#include "groupby/aggregate_cpu.hpp"

namespace sb::groupby {

namespace {

template <unsigned Fields, bool Prefetch, class KeyAt>
void add_rows(const ColumnPtrs& in, std::int64_t begin, std::int64_t end, KeyAt key_at,
              PartitionedTable& table) {
  constexpr std::int64_t kAhead = 16;
  const double* x = in.x;
  const double* y = in.y;
  for (std::int64_t i = begin; i < end; ++i) {
    if constexpr (Prefetch) {
      if (i + kAhead < end) {
        const std::int64_t k = key_at(i + kAhead);
        __builtin_prefetch(table.part(table.partition_of(k)).home(k), 1);
      }
    }
    // Columns a mask's extra fields would read but the query does not generate read as 0.
    const double xv = ((Fields & (kSumX | kSumSqX | kMinX | kMaxX)) && x != nullptr) ? x[i] : 0.0;
    const double yv = ((Fields & kSumY) && y != nullptr) ? y[i] : 0.0;
    table.upsert(key_at(i)).template add<Fields>(xv, yv);
  }
}

template <unsigned Fields>
void add_rows_for_key(const QueryDef& q, const ColumnPtrs& in, std::int64_t begin, std::int64_t end,
                      PartitionedTable& table) {
  switch (q.key_column) {
    case kColName: {
      const std::int32_t* k = in.name;
      add_rows<Fields, false>(
          in, begin, end, [k](std::int64_t i) { return std::int64_t{k[i]}; }, table);
      break;
    }
    case kColId: {
      const std::int64_t* k = in.id;
      add_rows<Fields, false>(
          in, begin, end, [k](std::int64_t i) { return k[i]; }, table);
      break;
    }
    default: {
      const std::int64_t* k = in.key;
      if (q.high_cardinality) {
        add_rows<Fields, true>(
            in, begin, end, [k](std::int64_t i) { return k[i]; }, table);
      } else {
        add_rows<Fields, false>(
            in, begin, end, [k](std::int64_t i) { return k[i]; }, table);
      }
      break;
    }
  }
}

}  // namespace

void aggregate_rows(const QueryDef& q, const ColumnPtrs& in, std::int64_t begin, std::int64_t end,
                    PartitionedTable& table) {
  // The masks of the built-in queries get their own instantiation; anything else runs the
  // all-fields body of the columns it reads (extra fields cost time, not correctness).
  switch (q.fields) {
    case 0:
      add_rows_for_key<0>(q, in, begin, end, table);
      break;
    case kSumX:
      add_rows_for_key<kSumX>(q, in, begin, end, table);
      break;
    case kSumX | kSumY:
      add_rows_for_key<kSumX | kSumY>(q, in, begin, end, table);
      break;
    case kSumX | kSumY | kMinX | kMaxX:
      add_rows_for_key<kSumX | kSumY | kMinX | kMaxX>(q, in, begin, end, table);
      break;
    default:
      if (q.fields & kSumY) {
        add_rows_for_key<kAllFields>(q, in, begin, end, table);
      } else {
        add_rows_for_key<kAllFields & ~kSumY>(q, in, begin, end, table);
      }
      break;
  }
}

void aggregate_rows_parallel(const QueryDef& q, const ColumnPtrs& in, std::int64_t n,
                             const std::vector<PartitionedTable*>& tables) {
  const int threads = static_cast<int>(tables.size());
  if (threads <= 1 || n < 4096) {
    aggregate_rows(q, in, 0, n, *tables[0]);
    return;
  }
#pragma omp parallel for num_threads(threads) schedule(static, 1)
  for (int t = 0; t < threads; ++t) {
    const std::int64_t b = n * t / threads;
    const std::int64_t e = n * (t + 1) / threads;
    aggregate_rows(q, in, b, e, *tables[t]);
  }
}

}  // namespace sb::groupby
