#include "groupby/combine_mpi.hpp"

#include <limits>
#include <vector>

#include <fmt/format.h>

#include "scalebench/clock.hpp"
#include "scalebench/error.hpp"

namespace sb::groupby {

void reduce_dense(const QueryDef& q, PartitionedTable& table, MPI_Comm comm, ShuffleStats& st) {
  int rank = 0, size = 1;
  SB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  SB_MPI_CHECK(MPI_Comm_size(comm, &size));
  const auto d = static_cast<std::size_t>(q.domain_size);
  const unsigned sum_fields = q.fields & (kSumX | kSumY | kSumSqX);
  std::vector<unsigned> sum_bits;
  for (unsigned f = 1; f <= kSumSqX; f <<= 1)
    if (sum_fields & f) sum_bits.push_back(f);
  // [count | sum fields...], [min x], [max x] as dense arrays over the domain.
  std::vector<double> sums(d * (1 + sum_bits.size()), 0.0);
  std::vector<double> mins((q.fields & kMinX) ? d : 0, std::numeric_limits<double>::infinity());
  std::vector<double> maxs((q.fields & kMaxX) ? d : 0, -std::numeric_limits<double>::infinity());
  bool outside = false;
  table.for_each([&](std::int64_t key, const GroupState& s) {
    const std::int64_t i = key - q.domain_lo;
    if (i < 0 || i >= q.domain_size) {
      outside = true;
      return;
    }
    const auto u = static_cast<std::size_t>(i);
    sums[u] = static_cast<double>(s.count);
    for (std::size_t j = 0; j < sum_bits.size(); ++j)
      sums[(j + 1) * d + u] = field_value(s, sum_bits[j]);
    if (!mins.empty()) mins[u] = s.min_x;
    if (!maxs.empty()) maxs[u] = s.max_x;
  });
  if (outside) throw Error("groupby: a key outside the query's dense domain (internal error)");

  const double t0 = now();
  auto reduce = [&](std::vector<double>& v, MPI_Op op) {
    if (v.empty()) return;
    if (rank == 0) {
      SB_MPI_CHECK(
          MPI_Reduce(MPI_IN_PLACE, v.data(), static_cast<int>(v.size()), MPI_DOUBLE, op, 0, comm));
    } else {
      SB_MPI_CHECK(
          MPI_Reduce(v.data(), nullptr, static_cast<int>(v.size()), MPI_DOUBLE, op, 0, comm));
    }
  };
  reduce(sums, MPI_SUM);
  reduce(mins, MPI_MIN);
  reduce(maxs, MPI_MAX);
  st.seconds = now() - t0;
  const double bytes = 8.0 * static_cast<double>(sums.size() + mins.size() + maxs.size());
  st.send_total = bytes;
  st.bytes_sent = rank == 0 ? 0.0 : bytes;

  table.clear();
  if (rank != 0) return;
  for (std::size_t u = 0; u < d; ++u) {
    if (sums[u] == 0.0) continue;
    GroupState& s = table.upsert(q.domain_lo + static_cast<std::int64_t>(u));
    s.count = static_cast<std::int64_t>(sums[u]);
    for (std::size_t j = 0; j < sum_bits.size(); ++j)
      set_field(s, sum_bits[j], sums[(j + 1) * d + u]);
    if (!mins.empty()) s.min_x = mins[u];
    if (!maxs.empty()) s.max_x = maxs[u];
  }
}

PartitionedTable shuffle_alltoall(const QueryDef& q, const PartitionedTable& local, MPI_Comm comm,
                                  int partition_bits, int threads, ShuffleStats& st) {
  int rank = 0, size = 1;
  SB_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  SB_MPI_CHECK(MPI_Comm_size(comm, &size));
  const int w = record_width(q.fields);
  const auto W = static_cast<std::size_t>(w);

  // Counting sort of the local groups by owner.
  std::vector<long long> send_counts(static_cast<std::size_t>(size), 0);
  local.for_each([&](std::int64_t key, const GroupState&) { ++send_counts[owner_of(key, size)]; });
  std::vector<long long> send_offsets(static_cast<std::size_t>(size), 0);
  for (int p = 1; p < size; ++p) send_offsets[p] = send_offsets[p - 1] + send_counts[p - 1];
  const long long total = send_offsets[size - 1] + send_counts[size - 1];
  std::vector<std::uint64_t> send(static_cast<std::size_t>(total) * W);
  {
    std::vector<long long> cursor = send_offsets;
    local.for_each([&](std::int64_t key, const GroupState& s) {
      const int o = owner_of(key, size);
      pack_record(key, s, q.fields, &send[static_cast<std::size_t>(cursor[o]++) * W]);
    });
  }

  const double t0 = now();
  std::vector<long long> recv_counts(static_cast<std::size_t>(size), 0);
  SB_MPI_CHECK(MPI_Alltoall(send_counts.data(), 1, MPI_LONG_LONG, recv_counts.data(), 1,
                            MPI_LONG_LONG, comm));
  std::vector<int> sc(size), so(size), rc(size), ro(size);
  long long rtotal = 0;
  for (int p = 0; p < size; ++p) {
    if (send_counts[p] > std::numeric_limits<int>::max() ||
        send_offsets[p] > std::numeric_limits<int>::max() ||
        rtotal > std::numeric_limits<int>::max())
      throw Error("groupby: shuffle larger than 2^31 records per worker pair");
    sc[p] = static_cast<int>(send_counts[p]);
    so[p] = static_cast<int>(send_offsets[p]);
    rc[p] = static_cast<int>(recv_counts[p]);
    ro[p] = static_cast<int>(rtotal);
    rtotal += recv_counts[p];
  }
  std::vector<std::uint64_t> recv(static_cast<std::size_t>(rtotal) * W);
  MPI_Datatype record = MPI_DATATYPE_NULL;
  SB_MPI_CHECK(MPI_Type_contiguous(w, MPI_UINT64_T, &record));
  SB_MPI_CHECK(MPI_Type_commit(&record));
  SB_MPI_CHECK(MPI_Alltoallv(send.data(), sc.data(), so.data(), record, recv.data(), rc.data(),
                             ro.data(), record, comm));
  SB_MPI_CHECK(MPI_Type_free(&record));
  st.seconds = now() - t0;
  st.send_total = static_cast<double>(total) * 8.0 * w;
  st.bytes_sent = static_cast<double>(total - send_counts[rank]) * 8.0 * w;

  // The owner merges: records bucketed by partition, partitions filled in parallel.
  PartitionedTable owned(partition_bits, static_cast<std::size_t>(rtotal));
  const int parts = owned.partitions();
  std::vector<std::vector<std::size_t>> by_part(static_cast<std::size_t>(parts));
  for (long long i = 0; i < rtotal; ++i) {
    const auto key = static_cast<std::int64_t>(recv[static_cast<std::size_t>(i) * W]);
    by_part[owned.partition_of(key)].push_back(static_cast<std::size_t>(i));
  }
#pragma omp parallel for num_threads(threads) schedule(dynamic, 1) if (parts > 1)
  for (int p = 0; p < parts; ++p) {
    for (const std::size_t i : by_part[p]) {
      std::int64_t key = 0;
      GroupState s;
      unpack_record(&recv[i * W], q.fields, key, s);
      owned.part(p).combine(key, s);
    }
  }
  return owned;
}

}  // namespace sb::groupby
