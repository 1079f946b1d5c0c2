// What every exchange of a multi-GPU by-key case shares (exchange.cuh): the owner's table and
// the records' all-to-all.
#include "groupby/gpu/exchange.cuh"

#include <mpi.h>

#include "scalebench/clock.hpp"
#include "scalebench/gpu_error.cuh"

namespace sb::groupby::gpu {

Exchange::Exchange(const ExchangeEnv& e, OwnedTable owner)
    : e_(e),
      stream_(e.ctx->stream),
      width_(record_width(e.cfg->def.fields)),
      owner_(std::move(owner)) {}

Exchange::~Exchange() {
  if (recv_ != nullptr) (void)cudaFree(recv_);
}

void Exchange::begin_repeat() {
  hash_clear(owner(), stream_);
}

void Exchange::stage(const RowSource& /*src*/, std::int64_t /*rows*/) {}

void Exchange::after_task(cudaEvent_t /*done*/) {}

TableStatus Exchange::result() {
  return hash_finish(owner(), *e_.records, stream_);
}

double Exchange::exposed_seconds(const ShuffleStats& stats) const {
  return stats.seconds;
}

std::int64_t Exchange::exchange_records(const std::vector<long long>& counts,
                                        const std::vector<long long>& offsets, std::int64_t total,
                                        ShuffleStats& stats, double* seconds) {
  const CaseEnv& env = *e_.env;
  const int size = env.size;
  const double t = now();
  std::vector<long long> rcounts(counts.size()), roffsets(counts.size());
  SB_MPI_CHECK(
      MPI_Alltoall(counts.data(), 1, MPI_LONG_LONG, rcounts.data(), 1, MPI_LONG_LONG, env.comm));
  counts_s_ = now() - t;
  long long rtotal = 0;
  for (int p = 0; p < size; ++p) {
    roffsets[p] = rtotal;
    rtotal += rcounts[p];
  }
  if (rtotal > recv_cap_) {
    if (recv_ != nullptr) SB_CUDA_CHECK(cudaFree(recv_));
    recv_ = nullptr;
    recv_cap_ = rtotal + rtotal / 8 + 1024;
    SB_CUDA_CHECK(
        cudaMalloc(&recv_, sizeof(std::uint64_t) * static_cast<std::size_t>(recv_cap_) * width_));
  }
  const auto W = static_cast<std::size_t>(width_);
  std::uint64_t* records = *e_.records;
  const int me = env.rank;
  const std::vector<int>& nccl_peer = *e_.nccl_peer;
  if (counts[me] > 0)
    SB_CUDA_CHECK(cudaMemcpyAsync(recv_ + roffsets[me] * W, records + offsets[me] * W,
                                  sizeof(std::uint64_t) * counts[me] * W, cudaMemcpyDeviceToDevice,
                                  stream_));
  GpuTransport& tr = *e_.transport;
  tr.group_start();
  for (int p = 0; p < size; ++p) {
    if (p == me) continue;
    if (counts[p] > 0)
      tr.send(records + offsets[p] * W, counts[p] * W, ncclUint64, nccl_peer[p], stream_);
    if (rcounts[p] > 0)
      tr.recv(recv_ + roffsets[p] * W, rcounts[p] * W, ncclUint64, nccl_peer[p], stream_);
  }
  tr.group_end();
  SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  const double dt = now() - t;
  stats.seconds += dt;
  if (seconds != nullptr) *seconds += dt;
  stats.send_total += static_cast<double>(total) * 8.0 * width_;
  stats.bytes_sent += static_cast<double>(total - counts[me]) * 8.0 * width_;
  return rtotal;
}

}  // namespace sb::groupby::gpu
