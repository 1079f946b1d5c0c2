#include "groupby/group_table.hpp"

#include <bit>

namespace sb::groupby {

std::size_t GroupTable::capacity_for(std::size_t groups) {
  // Load at most 70%; at least 16 slots.
  const std::size_t want = groups + groups * 3 / 7 + 1;
  return std::bit_ceil(want < 16 ? std::size_t{16} : want);
}

GroupTable::GroupTable(std::size_t expected_groups) {
  slots_.resize(capacity_for(expected_groups));
  mask_ = slots_.size() - 1;
  grow_at_ = slots_.size() * 7 / 10;
}

const GroupState* GroupTable::find(std::int64_t key) const {
  std::size_t i = slot_hash(key) & mask_;
  for (;;) {
    const Slot& s = slots_[i];
    if (s.key == key) return &s.state;
    if (s.key == kEmpty) return nullptr;
    i = (i + 1) & mask_;
  }
}

void GroupTable::merge(const GroupTable& other) {
  reserve(size_ + other.size_ / 2);
  other.for_each([&](std::int64_t key, const GroupState& s) { combine(key, s); });
}

void GroupTable::clear() {
  if (size_ == 0) return;
  for (Slot& s : slots_) s = Slot{};
  size_ = 0;
}

void GroupTable::reserve(std::size_t groups) {
  if (capacity_for(groups) <= slots_.size()) return;
  std::vector<Slot> old(capacity_for(groups));
  old.swap(slots_);
  mask_ = slots_.size() - 1;
  grow_at_ = slots_.size() * 7 / 10;
  size_ = 0;
  for (const Slot& s : old)
    if (s.key != kEmpty) upsert(s.key) = s.state;
}

void GroupTable::grow() {
  reserve(slots_.size());
}

PartitionedTable::PartitionedTable(int partition_bits, std::size_t expected_groups)
    : bits_(partition_bits) {
  const std::size_t n = std::size_t{1} << partition_bits;
  parts_.reserve(n);
  for (std::size_t p = 0; p < n; ++p) parts_.emplace_back(expected_groups / n);
}

std::size_t PartitionedTable::size() const {
  std::size_t n = 0;
  for (const auto& t : parts_) n += t.size();
  return n;
}

void PartitionedTable::clear() {
  for (auto& t : parts_) t.clear();
}

void PartitionedTable::merge_into(PartitionedTable& result,
                                  const std::vector<PartitionedTable*>& tables, int threads) {
  const int parts = result.partitions();
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (parts > 1)
  for (int p = 0; p < parts; ++p) {
    for (const PartitionedTable* t : tables) {
      if (t == &result) continue;
      result.parts_[p].merge(t->parts_[p]);
    }
  }
}

}  // namespace sb::groupby
