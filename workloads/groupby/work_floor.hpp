#pragma once
/// @file work_floor.hpp
/// The least work one repeat of a groupby case must do (docs/workloads.md, "The floor"): the
/// report's work accounting, whose efficiency is this floor's time at the device's ceilings over
/// the measured time.
///
/// Every row is generated where the first pass consumes it (one Philox4x32-10 call a row for
/// by-name, two for by-id and by-key: Work::philox) and is never stored. What must cross device
/// memory (Work::bytes):
///  - by-name, by-id, and by-key with a table that fits twice the L2 of the GPUs it is stated
///    for (kOnChipTableBytes): only the result, one record per group;
///  - by-key with a larger table: every row written and read back by each of two partition passes
///    (by table region, then by shared-memory slice), kPartitionRowBytes a row each way, plus the
///    records.
/// The floor is the larger of bytes over the copy bandwidth and Philox calls over the Philox rate.

#include <cstdint>

#include "groupby/config.hpp"
#include "scalebench/workload.hpp"

namespace sb::groupby {

/// Twice the 50 MB L2 of the H100 and H200: a by-key table up to this size is aggregated in
/// place (its slots stay in L2), a larger one through the partition passes (gpu/hash_stage.cuh's
/// stage_pays, with the device's own L2).
inline constexpr double kOnChipTableBytes = 100e6;

/// Bytes of a partitioned row: its key (4 bytes below 2^32, else 8), x, and y when kept.
[[nodiscard]] int partition_row_bytes(const Config& c);

/// Groups the case's rows are expected to form (distinct keys of `rows` uniform draws for
/// by-key; the domain for by-name and by-id).
[[nodiscard]] double expected_groups(const Config& c);

/// The floor of one repeat (units: rows).
[[nodiscard]] Work work_floor(const Config& c);

}  // namespace sb::groupby
