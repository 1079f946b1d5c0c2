// The NCCL row exchange of a multi-GPU by-key case (nccl_row_exchange.cuh).
#include "groupby/gpu/nccl_row_exchange.cuh"

#include <mpi.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <string>

#include "scalebench/clock.hpp"
#include "scalebench/error.hpp"
#include "scalebench/gpu_error.cuh"

namespace sb::groupby::gpu {

NcclRowExchange::NcclRowExchange(const ExchangeEnv& e, OwnedTable owner, const RowShuffle& plan)
    : Exchange(e, std::move(owner)), shuffle_(plan) {
  const Config& c = *e.cfg;
  // Owners take ranges of the full table's slot hash (group_table.hpp): each owner's table
  // then holds its keys as that range of one GPU's table would.
  shuffle_.owner_bits = std::bit_width(static_cast<std::uint64_t>(e.table->capacity)) - 1;
  shuffle_.narrow_keys = c.keys_fit_32_bits();  // by-key: the only query on this path
  alloc_row_shuffle(shuffle_);
  const std::int64_t rows = share_rows(c, e.env->size);
  reserve_row_shuffle(shuffle_, rows, rows);
  int least = 0, greatest = 0;
  SB_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
  SB_CUDA_CHECK(cudaStreamCreateWithPriority(&comm_stream_, cudaStreamNonBlocking, greatest));
  chunk_events_.resize(4 * kMaxShuffleChunks + 1);
  for (cudaEvent_t& ev : chunk_events_) SB_CUDA_CHECK(cudaEventCreate(&ev));
}

NcclRowExchange::~NcclRowExchange() {
  free_row_shuffle(shuffle_);
  for (cudaEvent_t ev : chunk_events_)
    if (ev != nullptr) (void)cudaEventDestroy(ev);
  if (comm_stream_ != nullptr) (void)cudaStreamDestroy(comm_stream_);
}

std::int64_t NcclRowExchange::share_rows(const Config& c, int size) {
  return c.rows / size + c.rows / size / 4 + std::min(c.partition, c.rows);
}

void NcclRowExchange::begin_repeat() {
  Exchange::begin_repeat();
  shuffle_clear(shuffle_, stream_);
}

void NcclRowExchange::stage(const RowSource& src, std::int64_t rows) {
  shuffle_stage(owner(), *e_.table, shuffle_, src, rows, stream_);
}

std::vector<unsigned long long> NcclRowExchange::cursors() {
  std::vector<unsigned long long> cur(static_cast<std::size_t>(shuffle_.buckets()));
  shuffle_cursors(shuffle_, cur.data(), stream_);
  return cur;
}

NcclRowExchange::RowCounts NcclRowExchange::exchange_counts(
    const std::vector<unsigned long long>& cur) {
  const int P = e_.env->size;
  const int R = shuffle_.regions();
  const int W1 = R + 1;
  const auto cap = static_cast<unsigned long long>(shuffle_.bucket_capacity);
  RowCounts c;
  c.send.resize(static_cast<std::size_t>(P) * W1);
  c.recv.resize(c.send.size());
  for (int o = 0; o < P; ++o)
    for (int r = 0; r < R; ++r) {
      const unsigned long long n = cur[static_cast<std::size_t>(o) * R + r];
      c.spilled |= n > cap;
      c.send[static_cast<std::size_t>(o) * W1 + r] = static_cast<long long>(std::min(n, cap));
    }
  for (int o = 0; o < P; ++o) c.send[static_cast<std::size_t>(o) * W1 + R] = c.spilled ? 1 : 0;
  SB_MPI_CHECK(MPI_Alltoall(c.send.data(), W1, MPI_LONG_LONG, c.recv.data(), W1, MPI_LONG_LONG,
                            e_.env->comm));
  for (int q = 0; q < P; ++q) c.any_spill |= c.recv[static_cast<std::size_t>(q) * W1 + R] != 0;
  return c;
}

double NcclRowExchange::finish_spills(bool spilled, bool any_spill, ShuffleStats& stats) {
  const int P = e_.env->size;
  double seconds = 0;
  std::vector<long long> counts(static_cast<std::size_t>(P)), offsets(counts.size());
  if (any_spill) {
    // A send bucket overflowed somewhere: those rows sit in their workers' spill tables,
    // whose groups now travel as records to their owners.
    std::int64_t total = 0;
    if (spilled)
      total = hash_compact(*e_.table, P, *e_.records, counts.data(), offsets.data(), stream_,
                           shuffle_.owner_bits);
    const std::int64_t rtotal = exchange_records(counts, offsets, total, stats, &seconds);
    hash_insert_records(owner(), recv_, rtotal, stream_);
    if (spilled) hash_clear(*e_.table, stream_);
    if (hash_overflowed(*e_.table, stream_))
      throw Error("groupby: the GPU spill table overflowed (internal sizing error)");
  }
  return seconds;
}

int NcclRowExchange::chunks() const {
  const int P = e_.env->size;
  const int R = shuffle_.regions();
  // Four chunks from four GPUs on, one on two: more chunks overlap more of the transfer with
  // the aggregation, but each costs a round of launches (tools/gpu-campaign.sh bykey,
  // groupby.shuffle_chunks).
  int K = std::min(R, P <= 2 ? 1 : 4);
  if (e_.cfg->shuffle_chunks > 0)
    K = std::clamp(e_.cfg->shuffle_chunks, 1, std::min(R, kMaxShuffleChunks));
  while (R % K != 0) --K;
  return K;
}

NcclRowExchange::Layout NcclRowExchange::layout(const RowCounts& counts, int K,
                                                const std::vector<unsigned long long>& cur) {
  RowShuffle& sh = shuffle_;
  const int P = e_.env->size;
  const int me = e_.env->rank;
  const int R = sh.regions();
  const int Rg = R / K;
  const std::int64_t B = sh.buckets();
  const int W1 = R + 1;
  const std::vector<long long>& sendc = counts.send;
  const std::vector<long long>& recvc = counts.recv;
  // Packed rows by (chunk, owner, region), received rows by (chunk, source, region), peers in
  // the order me + 1, me + 2, ... (mod P), so that within a chunk the P - 1 remote blocks come
  // first and this worker's own block last: slot j is peer (me + 1 + j) % P.
  std::int64_t* hs = sh.host_segments;
  const auto peer_of = [&](int j) { return (me + 1 + j) % P; };
  // Offsets in 8-byte words: each (chunk, peer) block is sh.block_words(rows) words.
  Layout lay;
  lay.send_off.resize(static_cast<std::size_t>(K) * P);
  lay.send_n.resize(lay.send_off.size());
  lay.recv_off.resize(lay.send_off.size());
  lay.recv_n.resize(lay.send_off.size());
  long long& so = lay.so;
  long long& ro = lay.ro;
  for (int g = 0; g < K; ++g) {
    for (int j = 0; j < P; ++j) {
      const int p = peer_of(j);
      const std::size_t gp = static_cast<std::size_t>(g) * P + j;
      const long long* sc = &sendc[static_cast<std::size_t>(p) * W1 + g * Rg];
      const long long* rc = &recvc[static_cast<std::size_t>(p) * W1 + g * Rg];  // from p
      long long ns = 0, nr = 0;
      for (int rr = 0; rr < Rg; ++rr) {
        ns += sc[rr];
        nr += rc[rr];
      }
      if (p == me) {  // own rows never travel (segments below, from the send buckets)
        lay.own_words += sh.block_words(ns);  // as it would travel, for the report's send total
        continue;
      }
      long long ls = 0, lr = 0;
      for (int rr = 0; rr < Rg; ++rr) {
        const int r = g * Rg + rr;
        const std::int64_t idx = static_cast<std::int64_t>(gp) * Rg + rr;
        hs[kPackSrc * B + idx] = (static_cast<std::int64_t>(p) * R + r) * sh.bucket_capacity;
        hs[kPackRows * B + idx] = sc[rr];
        hs[kPackKey * B + idx] = sh.key_offset(so) + ls;
        hs[kPackDst * B + idx] = so + sh.key_words(ns) + ls;
        hs[kPackPlane * B + idx] = ns;
        shuffle_recv_segment(sh, idx, sh.key_offset(ro) + lr, ro + sh.key_words(nr) + lr, nr,
                             rc[rr], r);
        ls += sc[rr];
        lr += rc[rr];
      }
      lay.send_off[gp] = so;
      lay.recv_off[gp] = ro;
      lay.send_n[gp] = ns;
      lay.recv_n[gp] = nr;
      so += sh.block_words(ns);
      ro += sh.block_words(nr);
      lay.so_rows += ns;
      lay.ro_rows += nr;
    }
  }
  // Own rows: the last block (j = P - 1) of every chunk, addressing the send buckets.
  shuffle_own_segments(sh, me, cur.data(), K, (P - 1) * Rg, P * Rg);
  reserve_row_shuffle(sh, lay.so_rows, lay.ro_rows);
  return lay;
}

void NcclRowExchange::transfer(const Layout& lay, int K) {
  const std::vector<int>& nccl_peer = *e_.nccl_peer;
  RowShuffle& sh = shuffle_;
  const int P = e_.env->size;
  const int me = e_.env->rank;
  const int Rg = sh.regions() / K;
  const auto peer_of = [&](int j) { return (me + 1 + j) % P; };
  cudaEvent_t* ev_pack = chunk_events_.data();
  cudaEvent_t* ev_c0 = ev_pack + kMaxShuffleChunks;
  cudaEvent_t* ev_c1 = ev_c0 + kMaxShuffleChunks;
  cudaEvent_t* ev_agg = ev_c1 + kMaxShuffleChunks;  // ev_agg[kMaxShuffleChunks]: start
  SB_CUDA_CHECK(cudaEventRecord(ev_agg[kMaxShuffleChunks], stream_));
  shuffle_upload(sh, stream_);
  for (int g = 0; g < K; ++g) {  // the remote blocks of each chunk (own ones are last)
    shuffle_pack(sh, g * P * Rg, (P - 1) * Rg, stream_);
    SB_CUDA_CHECK(cudaEventRecord(ev_pack[g], stream_));
  }
  for (int g = 0; g < K; ++g) {
    SB_CUDA_CHECK(cudaStreamWaitEvent(comm_stream_, ev_pack[g], 0));
    SB_CUDA_CHECK(cudaEventRecord(ev_c0[g], comm_stream_));
    // One message per peer and direction (keys, x and y back to back).
    GpuTransport& tr = *e_.transport;
    tr.group_start();
    for (int j = 0; j + 1 < P; ++j) {
      const std::size_t gp = static_cast<std::size_t>(g) * P + j;
      const int peer = nccl_peer[static_cast<std::size_t>(peer_of(j))];
      if (lay.send_n[gp] > 0)
        tr.send(sh.send + lay.send_off[gp],
                static_cast<std::size_t>(sh.block_words(lay.send_n[gp])), ncclUint64, peer,
                comm_stream_);
      if (lay.recv_n[gp] > 0)
        tr.recv(sh.recv + lay.recv_off[gp],
                static_cast<std::size_t>(sh.block_words(lay.recv_n[gp])), ncclUint64, peer,
                comm_stream_);
    }
    tr.group_end();
    SB_CUDA_CHECK(cudaEventRecord(ev_c1[g], comm_stream_));
  }
  // While the chunks travel, this worker's own rows (its block of every chunk, straight from
  // the send buckets) are aggregated; then each chunk's remote blocks as they arrive.
  for (int g = 0; g < K; ++g)
    shuffle_aggregate(owner(), sh, (g * P + P - 1) * Rg, Rg, g * Rg, Rg, true, stream_);
  for (int g = 0; g < K; ++g) {
    SB_CUDA_CHECK(cudaStreamWaitEvent(stream_, ev_c1[g], 0));
    shuffle_aggregate(owner(), sh, g * P * Rg, (P - 1) * Rg, g * Rg, Rg, false, stream_);
    SB_CUDA_CHECK(cudaEventRecord(ev_agg[g], stream_));
  }
  SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void NcclRowExchange::trace(const Layout& lay, int K, double counts_s) {
  cudaEvent_t* ev_pack = chunk_events_.data();
  cudaEvent_t* ev_c0 = ev_pack + kMaxShuffleChunks;
  cudaEvent_t* ev_c1 = ev_c0 + kMaxShuffleChunks;
  cudaEvent_t* ev_agg = ev_c1 + kMaxShuffleChunks;
  // ms from the upload of the segment tables
  auto at = [&](cudaEvent_t ev) {
    float ms = 0;
    SB_CUDA_CHECK(cudaEventElapsedTime(&ms, ev_agg[kMaxShuffleChunks], ev));
    return ms;
  };
  std::string line = "groupby shuffle rank " + std::to_string(e_.env->rank) + ": counts " +
                     std::to_string(counts_s * 1e3) + " ms;";
  for (int g = 0; g < K; ++g)
    line += " [" + std::to_string(g) + "] pack " + std::to_string(at(ev_pack[g])) + " send " +
            std::to_string(at(ev_c0[g])) + ".." + std::to_string(at(ev_c1[g])) + " agg " +
            std::to_string(at(ev_agg[g]));
  std::fprintf(stderr, "%s; remote rows out %lld in %lld, words out %lld in %lld\n", line.c_str(),
               lay.so_rows, lay.ro_rows, lay.so, lay.ro);
}

void NcclRowExchange::finish(ShuffleStats& stats) {
  const std::vector<unsigned long long> cur = cursors();
  const double t_counts = now();
  const RowCounts counts = exchange_counts(cur);
  const double counts_s = now() - t_counts;
  const int K = chunks();
  const Layout lay = layout(counts, K, cur);
  transfer(lay, K);
  if (e_.env->trace) trace(lay, K, counts_s);
  const cudaEvent_t* ev_c0 = chunk_events_.data() + kMaxShuffleChunks;
  const cudaEvent_t* ev_c1 = ev_c0 + kMaxShuffleChunks;
  float in_flight_ms = 0;
  for (int g = 0; g < K; ++g) {
    float ms = 0;
    SB_CUDA_CHECK(cudaEventElapsedTime(&ms, ev_c0[g], ev_c1[g]));
    in_flight_ms += ms;
  }
  stats.seconds = counts_s + in_flight_ms * 1e-3;
  stats.send_total = 8.0 * static_cast<double>(lay.so + lay.own_words);
  stats.bytes_sent = 8.0 * static_cast<double>(lay.so);
  (void)finish_spills(counts.spilled, counts.any_spill, stats);
}

}  // namespace sb::groupby::gpu
