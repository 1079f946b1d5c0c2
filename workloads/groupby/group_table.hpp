#pragma once
/// @file group_table.hpp
/// CPU hash aggregation: an open-addressing table of group states keyed by int64, with linear
/// probing and a power-of-two capacity that doubles at 70% load, and a radix-partitioned set of
/// such tables so that partial tables of several threads merge in parallel (partition p of
/// every thread's table goes to partition p of the result; no locks, no shared writes).
///
/// Hashing: slot = (key * 0x9E3779B97F4A7C15) mod capacity. Multiplying by an odd constant is a
/// bijection on every run of `capacity` consecutive keys, so dense integer keys (name codes,
/// ids, keys below the capacity) never collide, while the constant scatters neighbours; linear
/// probing resolves the rest. The partition of a key uses the high bits of a different,
/// avalanching mix (splitmix64's finaliser), so it is independent of the slot. The key
/// INT64_MIN is reserved as the empty marker.

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "groupby/query.hpp"

namespace sb::groupby {

/// splitmix64's finaliser: an avalanching bijection of 64-bit words.
SB_GB_HD constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Slot hash of a key (reduced modulo the power-of-two capacity by masking).
SB_GB_HD constexpr std::uint64_t slot_hash(std::int64_t key) {
  return static_cast<std::uint64_t>(key) * 0x9E3779B97F4A7C15ull;
}

/// Owner of a key among `workers` (hash partitioning of the shuffle).
SB_GB_HD constexpr int owner_of(std::int64_t key, int workers) {
  const std::uint64_t h = mix64(static_cast<std::uint64_t>(key)) & 0xffffffffull;
  return static_cast<int>((h * static_cast<std::uint64_t>(workers)) >> 32);
}

/// Owner of a key when the owners split the slot-hash space of a table of 2^bits slots into
/// `workers` contiguous ranges (the GPU row shuffle, bits = log2 of the capacity one GPU's
/// table would have): an owner's table of at least 2^bits / workers slots then sees the same
/// slot pattern as its range of that table, so keys that would not collide there do not collide
/// in it (consecutive keys below 2^bits never do). bits <= 0: owner_of(key, workers).
SB_GB_HD constexpr int owner_of(std::int64_t key, int workers, int bits) {
  if (bits <= 0) return owner_of(key, workers);
  const std::uint64_t h = slot_hash(key) & ((std::uint64_t{1} << bits) - 1);
  return static_cast<int>((h * static_cast<std::uint64_t>(workers)) >> bits);
}

class GroupTable {
 public:
  static constexpr std::int64_t kEmpty = std::numeric_limits<std::int64_t>::min();

  struct alignas(64) Slot {
    std::int64_t key = kEmpty;
    GroupState state;
  };

  /// Room for `expected_groups` without growing.
  explicit GroupTable(std::size_t expected_groups = 0);

  /// The state of `key`, inserted (neutral) when absent. Keys must not be kEmpty.
  GroupState& upsert(std::int64_t key) {
    std::size_t i = slot_hash(key) & mask_;
    for (;;) {
      Slot& s = slots_[i];
      if (s.key == key) return s.state;
      if (s.key == kEmpty) {
        if (size_ >= grow_at_) {
          grow();
          return upsert(key);
        }
        s.key = key;
        ++size_;
        return s.state;
      }
      i = (i + 1) & mask_;
    }
  }

  /// Address of the home slot of `key`, for software prefetching.
  [[nodiscard]] const void* home(std::int64_t key) const { return &slots_[slot_hash(key) & mask_]; }

  [[nodiscard]] const GroupState* find(std::int64_t key) const;
  /// Adds a partial state of `key`.
  void combine(std::int64_t key, const GroupState& s) { upsert(key).combine(s); }
  /// Adds every group of `other`.
  void merge(const GroupTable& other);
  /// Empties the table, keeping its capacity.
  void clear();
  /// Makes room for `groups` without growing later.
  void reserve(std::size_t groups);

  [[nodiscard]] std::size_t size() const { return size_; }
  [[nodiscard]] std::size_t capacity() const { return slots_.size(); }

  template <class F>
  void for_each(F&& f) const {
    for (const Slot& s : slots_)
      if (s.key != kEmpty) f(s.key, s.state);
  }

 private:
  void grow();
  static std::size_t capacity_for(std::size_t groups);

  std::vector<Slot> slots_;
  std::size_t mask_ = 0;
  std::size_t size_ = 0;
  std::size_t grow_at_ = 0;
};

/// 2^bits GroupTables selected by the high bits of mix64(key).
class PartitionedTable {
 public:
  PartitionedTable() : PartitionedTable(0, 0) {}
  PartitionedTable(int partition_bits, std::size_t expected_groups);

  [[nodiscard]] int partitions() const { return static_cast<int>(parts_.size()); }
  [[nodiscard]] int partition_of(std::int64_t key) const {
    return bits_ == 0 ? 0
                      : static_cast<int>(mix64(static_cast<std::uint64_t>(key)) >> (64 - bits_));
  }
  GroupState& upsert(std::int64_t key) { return parts_[partition_of(key)].upsert(key); }
  [[nodiscard]] const GroupState* find(std::int64_t key) const {
    return parts_[partition_of(key)].find(key);
  }
  [[nodiscard]] GroupTable& part(int p) { return parts_[p]; }
  [[nodiscard]] const GroupTable& part(int p) const { return parts_[p]; }
  [[nodiscard]] std::size_t size() const;
  void clear();

  template <class F>
  void for_each(F&& f) const {
    for (const auto& t : parts_) t.for_each(f);
  }

  /// result.part(p) += every table's part(p), in parallel over p with `threads` OpenMP threads.
  static void merge_into(PartitionedTable& result, const std::vector<PartitionedTable*>& tables,
                         int threads);

 private:
  int bits_ = 0;
  std::vector<GroupTable> parts_;
};

}  // namespace sb::groupby
