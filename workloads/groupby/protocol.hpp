#pragma once
/// @file protocol.hpp
/// What groupby workers send the scheduler (all vectors of doubles, see workload.hpp).
///
/// Task partial: {rows of the task}.
///
/// finish_repeat partial: kHeaderWords words (FinishWord), then kRecords report records
/// (query.hpp) of width record_width(fields): on a low-cardinality case rank 0 sends every
/// group (at most ~1000), a high-cardinality worker sends none (its checksums only).
///
/// validate() part: ValidateWord header; then per sampled key (config.hpp sample_keys) the
/// reference scan's partial over this worker's row share (kRefWords each: count, sum_x, sum_y,
/// sumsq_x, min_x, max_x), then per sampled key the owner's table value (kOwnedWords each:
/// owned flag, count, sum_x, sum_y, sumsq_x, min_x, max_x), then kGroupsSent records of the
/// groups this worker owns (up to the small preset; none above).

#include <cstdint>
#include <vector>

#include "groupby/group_table.hpp"
#include "groupby/query.hpp"

namespace sb::groupby {

enum FinishWord : int {
  kGroups = 0,    ///< groups owned after the combine
  kSumCount,      ///< sum of their counts
  kSumSumX,       ///< sum over groups of sum x
  kSumSumY,       ///< sum over groups of sum y
  kSumMinX,       ///< sum over groups of min x (a checksum of the min field)
  kSumMaxX,       ///< sum over groups of max x
  kShuffleBytes,  ///< bytes this worker sent to other workers
  kSendBytes,     ///< bytes of its whole send buffer (own share included), nccl-tests' size
  kCommSeconds,   ///< wall time of the exchange
  kRecords,       ///< records following the header
  kHeaderWords
};

enum ValidateWord : int {
  kSamples = 0,  ///< sampled keys
  kRefRows,      ///< rows the reference scan read on this worker
  kRefSumX,      ///< their sum of x
  kRefSumY,      ///< their sum of y
  kGroupsSent,   ///< records at the end
  kValidateHeader
};
inline constexpr int kRefWords = 6;
inline constexpr int kOwnedWords = 7;

/// Checksums of a set of groups.
struct Summary {
  double groups = 0;
  double sum_count = 0;
  double sum_x = 0;
  double sum_y = 0;
  double sum_min_x = 0;
  double sum_max_x = 0;
  void add(const GroupState& s, unsigned fields) {
    groups += 1;
    sum_count += static_cast<double>(s.count);
    sum_x += s.sum_x;
    sum_y += s.sum_y;
    if (fields & kMinX) sum_min_x += s.min_x;
    if (fields & kMaxX) sum_max_x += s.max_x;
  }
};

/// Shuffle accounting of one worker (zero without a shuffle).
struct ShuffleStats {
  double bytes_sent = 0;  ///< to other workers
  double send_total = 0;  ///< whole send buffer
  double seconds = 0;
};

/// The finish_repeat header (kHeaderWords words, kRecords = 0).
[[nodiscard]] std::vector<double> finish_header(const Summary& s, const ShuffleStats& st);

/// The finish_repeat partial of a worker holding `owned` (records appended when with_records).
[[nodiscard]] std::vector<double> finish_partial(const PartitionedTable& owned, unsigned fields,
                                                 const ShuffleStats& st, bool with_records);

/// Sorted (by key) report records of a table.
[[nodiscard]] std::vector<double> report_records(const PartitionedTable& t, unsigned fields);

}  // namespace sb::groupby
