// groupby's memory per worker, from what worker_cpu.cpp and worker_gpu.cu allocate: one task's
// columns on the CPU (partition rows; the GPU generates its rows inside its kernels), the hash
// tables of the groups (CPU: one table per thread plus the
// merged result, 64-byte slots at most 70% full; GPU: one table of record_width words per slot
// and a record buffer), and on multi-worker high-cardinality cases the shuffle's buffers.
#include "groupby/memory_estimate.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "groupby/config.hpp"
#include "groupby/group_table.hpp"
#include "groupby/query.hpp"

namespace sb::groupby {

namespace {

/// Bytes of a GroupTable sized for `groups` (group_table.cpp: load <= 70%, >= 16 slots).
double cpu_table_bytes(std::int64_t groups) {
  const auto g = static_cast<std::uint64_t>(std::max<std::int64_t>(groups, 0));
  const std::uint64_t want = g + g * 3 / 7 + 1;
  return static_cast<double>(std::bit_ceil(std::max<std::uint64_t>(want, 16))) *
         sizeof(GroupTable::Slot);
}

/// Bytes of a PartitionedTable of 2^bits tables sized for `groups` in all.
double cpu_partitioned_bytes(int bits, std::int64_t groups) {
  const std::int64_t parts = std::int64_t{1} << bits;
  return static_cast<double>(parts) * cpu_table_bytes(groups / parts);
}

/// Slots of the GPU hash table for `groups` (gpu/hash_table.cu make_hash).
double gpu_slots(std::int64_t groups) {
  std::int64_t cap = 16;
  while (cap * 7 / 10 < groups) cap *= 2;
  return static_cast<double>(cap);
}

}  // namespace

MemoryNeed memory_needed(const CaseSpec& spec, const CaseEnv& env) {
  const Config c = parse(spec.params);
  const int size = std::max(1, env.size);
  const int threads = std::max(1, env.threads);
  const double rows_per_task = static_cast<double>(std::min(c.partition, c.rows));
  const double columns = rows_per_task * c.def.bytes_per_row();
  const double width = record_width(c.def.fields) * 8.0;  // bytes per record
  // Groups this worker's rows can form, and the share of all groups it owns after a shuffle.
  const std::int64_t local_groups = c.max_groups((c.rows + size - 1) / size);
  const std::int64_t owned_groups = (c.max_groups(c.rows) + size - 1) / size;
  MemoryNeed need;
  if (env.device == Device::cpu) {
    const int bits = c.def.high_cardinality ? 6 : 0;
    const std::int64_t per_thread = c.rows / (static_cast<std::int64_t>(size) * threads) + 1;
    double bytes = columns;
    // One table per thread sized for its rows; the merge grows the first to every local group.
    bytes += (threads - 1) * cpu_partitioned_bytes(bits, c.max_groups(per_thread));
    bytes += cpu_partitioned_bytes(bits, local_groups);
    bytes += cpu_partitioned_bytes(bits, c.max_groups(per_thread));  // the result table
    if (size > 1 && c.def.high_cardinality) {
      // Shuffle: every local group sent once and the owned ones received, then the owner's table.
      bytes += width * static_cast<double>(local_groups + owned_groups);
      bytes += cpu_partitioned_bytes(bits, owned_groups);
    }
    if (c.per_group()) bytes += width * static_cast<double>(local_groups);  // reported records
    need.host_bytes = bytes;
  } else {
    double bytes = 0.0;
    if (c.def.high_cardinality) {
      const std::int64_t groups = c.max_groups(c.rows);  // a GPU worker may get every task
      bytes += gpu_slots(groups) * width + static_cast<double>(groups) * width;
      if (size > 1) {
        // The owner's share-sized table and the receive buffer of the groups shuffle. The row
        // shuffle's buckets are optional: a worker takes them only when half the free memory
        // holds them (gpu/exchange_registry.cu), else the groups travel; so is the peer exchange's
        // landing area (taken where half the free memory then left holds it, else NCCL carries the
        // rows).
        const double share = static_cast<double>(owned_groups);
        bytes +=
            gpu_slots(static_cast<std::int64_t>(share + 8.0 * std::sqrt(share) + 1024.0)) * width;
        bytes += 1.125 * share * width;
      }
    } else {
      bytes += 1 << 20;  // dense accumulators of a small key domain
    }
    need.device_bytes = bytes;
    need.host_bytes = c.per_group() ? width * static_cast<double>(local_groups) : 0.0;
  }
  return need;
}

}  // namespace sb::groupby
