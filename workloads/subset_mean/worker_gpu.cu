/// @file worker_gpu.cu
/// GPU worker of subset-mean: one fused kernel per task (block) that draws every normal of the
/// block through Philox4x32-10 + Box-Muller and reduces it on the fly, never storing samples
/// (FusedKernel, subset_mean_kernel.cuh; its device code in fused_kernel.cuh). The library
/// compiles the one variant the worker runs (workload_variant).

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <deque>
#include <iterator>
#include <optional>
#include <thread>
#include <vector>

#include "scalebench/error.hpp"
#include "scalebench/gpu_context.cuh"
#include "subset_mean/fused_kernel.cuh"
#include "subset_mean/subset_mean_kernel.cuh"
#include "subset_mean/worker_gpu.hpp"

namespace sb::subset_mean {
namespace {

__global__ void stamp_kernel(unsigned long long* out) {
  *static_cast<volatile unsigned long long*>(out) = detail::global_timer_ns();
  __threadfence_system();
}

}  // namespace

BlockShape task_block(std::int64_t n, std::int64_t chunk, std::int64_t task) {
  const std::int64_t nb = (n + chunk - 1) / chunk;
  BlockShape s;
  s.n = n;
  s.row0 = (task / nb) * chunk;
  s.col0 = (task % nb) * chunk;
  s.rows = std::min(chunk, n - s.row0);
  s.cols = std::min(chunk, n - s.col0);
  return s;
}

const FusedVariant& workload_variant() {
  static const FusedVariant v = detail::make_variant<GpuMath::table, FusedKernel::kDefaultUnroll>();
  return v;
}

FusedKernel::FusedKernel(int device, cudaStream_t stream, const FusedVariant& variant)
    : variant_(variant), stream_(stream), threads_(detail::kThreads) {
  SB_CUDA_CHECK(cudaSetDevice(device));
  for (int a = 0; a < 2; ++a) grids_[a] = variant_.grid[a](device);
  grid_ = *std::max_element(std::begin(grids_), std::end(grids_));
  int major = 0;
  SB_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  dependent_launch_ = major >= 9;
  SB_CUDA_CHECK(cudaMalloc(&partials_, sizeof(double2) * grid_));
  SB_CUDA_CHECK(cudaMalloc(&scratch_, sizeof(detail::FusedScratch)));
  SB_CUDA_CHECK(cudaMalloc(&tables_, sizeof(sb::data::BoxMullerTables)));
  SB_CUDA_CHECK(cudaMemcpyAsync(tables_, &sb::data::box_muller_tables(),
                                sizeof(sb::data::BoxMullerTables), cudaMemcpyHostToDevice,
                                stream_));
  SB_CUDA_CHECK(cudaMemsetAsync(scratch_, 0, sizeof(detail::FusedScratch), stream_));
  SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

FusedKernel::~FusedKernel() {
  (void)cudaStreamSynchronize(stream_);
  (void)cudaFree(partials_);
  (void)cudaFree(scratch_);
  (void)cudaFree(tables_);
}

void FusedKernel::stamp(unsigned long long* out) const {
  stamp_kernel<<<1, 1, 0, stream_>>>(out);
  SB_CUDA_CHECK_LAUNCH();
}

void FusedKernel::launch(const BlockShape& block, std::uint64_t seed, FusedResult* out) const {
  SB_EXPECTS(block.rows > 0 && block.cols > 0 && block.cols < (std::int64_t{1} << 31),
             "subset-mean: empty or too wide GPU block");
  detail::FusedParams p{};
  p.rk = sb::data::gpu::round_keys(seed);
  p.fc = sb::data::gpu::detail::kFastConstants;
  p.tc = sb::data::gpu::kTableConstants;
  p.tables = tables_;
  p.stream = 0;
  p.width = static_cast<std::uint32_t>(block.cols);
  p.n = static_cast<std::uint64_t>(block.n);
  p.row0 = static_cast<std::uint64_t>(block.row0);
  p.col0 = static_cast<std::uint64_t>(block.col0);
  // Row parity of the first element: fixed when n is even, alternating when n is odd.
  const bool n_even = (block.n % 2) == 0;
  const bool aligned = n_even && (block.col0 % 2) == 0 && (block.cols % 2) == 0;
  const std::uint32_t w = p.width;
  if (aligned) {
    p.pairs_row = w / 2;
  } else if (n_even && (block.col0 % 2) == 0) {
    p.pairs_row = (w + 1) / 2;
  } else {
    p.pairs_row = w / 2 + 1;
  }
  p.total_pairs = static_cast<std::uint64_t>(block.rows) * p.pairs_row;
  const int variant = aligned ? 0 : 1;
  constexpr std::uint64_t kWarps = detail::kThreads / 32;
  const std::uint64_t warps = static_cast<std::uint64_t>(grids_[variant]) * kWarps;
  // at least a full step of 32 pairs per warp; fewer CTAs for small blocks
  p.pairs_per_warp = std::max<std::uint64_t>(32, (p.total_pairs + warps - 1) / warps);
  const std::uint64_t busy = (p.total_pairs + p.pairs_per_warp - 1) / p.pairs_per_warp;
  const unsigned ctas = static_cast<unsigned>((busy + kWarps - 1) / kWarps);
  auto* partials = reinterpret_cast<double2*>(partials_);
  variant_.launch[variant](ctas, stream_, dependent_launch_, p, partials,
                           static_cast<detail::FusedScratch*>(scratch_), out);
  SB_CUDA_CHECK_LAUNCH();
}

}  // namespace sb::subset_mean

namespace sb::subset_mean {
namespace {

/// The WorkerCase of subset-mean on a GPU. Tasks are enqueued back to back on the worker's
/// stream as dependent launches (FusedKernel) and complete in submission order; each writes its
/// sums and its start and end times (the GPU's global timer) into a slot of mapped pinned host
/// memory, which poll() reads: no event between two tasks, so each block's CTAs start as the
/// previous block's leave the SMs. Everything is allocated in the constructor.
class SubsetMeanGpuWorker final : public WorkerCase {
 public:
  static constexpr int kSlots = 64;  ///< most tasks in flight (prefetch is far below)

  SubsetMeanGpuWorker(const CaseSpec& spec, GpuContext& ctx)
      : ctx_(ctx),
        n_(spec.params.i64("n")),
        chunk_(spec.params.i64("chunk")),
        seed_(spec.params.u64("seed")),
        kernel_(ctx.device, ctx.stream) {
    SB_EXPECTS(chunk_ <= n_, "subset-mean: chunk must not exceed n");
    const std::int64_t nb = (n_ + chunk_ - 1) / chunk_;
    num_tasks_ = nb * nb;
    SB_CUDA_CHECK(cudaHostAlloc(&host_, sizeof(Mapped), cudaHostAllocMapped));
    SB_CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&host_dev_), host_, 0));
    *host_ = Mapped{};
    for (int i = kSlots - 1; i >= 0; --i) free_.push_back(i);
    // Warm-up outside any timed region: module load and first launch.
    kernel_.launch(subset_mean::BlockShape{n_, 0, 0, 1, std::min<std::int64_t>(2, n_)}, seed_,
                   &host_dev_->slots[0]);
    SB_CUDA_CHECK(cudaStreamSynchronize(ctx_.stream));
    host_->slots[0] = subset_mean::FusedResult{};
  }

  ~SubsetMeanGpuWorker() override {
    (void)cudaStreamSynchronize(ctx_.stream);
    (void)cudaFreeHost(host_);
  }

  void begin_repeat() override {
    times_ = {};
    last_end_ = 0;
    host_->begin_ns = 0;
    kernel_.stamp(&host_dev_->begin_ns);
  }

  void submit(std::int64_t task) override {
    SB_EXPECTS(task >= 0 && task < num_tasks_, "subset-mean: task index out of range");
    if (free_.empty())
      throw Error("subset-mean GPU worker: more than 64 tasks in flight (prefetch too deep)");
    const int i = free_.back();
    free_.pop_back();
    tasks_[i] = task;
    host_->slots[i] = subset_mean::FusedResult{};  // end_ns = 0: not done
    kernel_.launch(subset_mean::task_block(n_, chunk_, task), seed_, &host_dev_->slots[i]);
    fifo_.push_back(i);
  }

  [[nodiscard]] std::size_t in_flight() const override { return fifo_.size(); }

  std::optional<TaskOutcome> poll(bool wait) override {
    if (fifo_.empty()) return std::nullopt;
    const int i = fifo_.front();
    // Not done yet: the stream's state tells a running task from a failed one. With `wait`, the
    // host has nothing else to do: it spins on the slot.
    while (!done(i)) {
      if (check_stream() && !done(i))
        throw Error("subset-mean GPU worker: the stream is idle but a task wrote no result");
      if (!wait) return std::nullopt;
      std::this_thread::yield();
    }
    fifo_.pop_front();
    std::atomic_thread_fence(std::memory_order_acquire);
    const volatile subset_mean::FusedResult& r = host_->slots[i];
    const std::int64_t task = tasks_[i];
    const auto block = subset_mean::task_block(n_, chunk_, task);
    const unsigned long long begin = *static_cast<volatile unsigned long long*>(&host_->begin_ns);
    TaskOutcome out;
    out.task = task;
    out.partial = {r.subset, r.full};
    out.start = since(begin, r.start_ns);
    out.end = since(begin, r.end_ns);
    out.bytes = 8 * block.rows * block.cols;
    out.phase = Phase::compute;
    // busy time: a block's first CTAs may start before the previous block's last ones end
    times_.compute += out.end - std::max(out.start, last_end_);
    last_end_ = out.end;
    free_.push_back(i);
    return out;
  }

  [[nodiscard]] PhaseTimes phase_times() const override { return times_; }

  /// Deep enough that the stream never runs dry between tasks, which are short
  /// (bench_subset_mean_gpu BM_SubsetMeanWorker: its gpu_span against the wall time).
  [[nodiscard]] int prefetch() const override { return 6; }

 private:
  /// Mapped pinned host memory the kernels write into.
  struct Mapped {
    unsigned long long begin_ns = 0;  ///< global timer at begin_repeat (FusedKernel::stamp)
    subset_mean::FusedResult slots[kSlots];
  };

  [[nodiscard]] bool done(int i) const {
    return *static_cast<volatile unsigned long long*>(&host_->slots[i].end_ns) != 0;
  }

  /// True when the stream has no work left; throws the error of a failed kernel.
  [[nodiscard]] bool check_stream() const {
    const cudaError_t rc = cudaStreamQuery(ctx_.stream);
    if (rc == cudaErrorNotReady) return false;
    SB_CUDA_CHECK(rc);
    return true;
  }

  /// Seconds from the repeat's stamp to `ns` (0 for a time before it).
  static double since(unsigned long long begin, unsigned long long ns) {
    return ns > begin ? 1e-9 * static_cast<double>(ns - begin) : 0.0;
  }

  GpuContext& ctx_;
  std::int64_t n_;
  std::int64_t chunk_;
  std::uint64_t seed_;
  std::int64_t num_tasks_ = 0;
  subset_mean::FusedKernel kernel_;
  Mapped* host_ = nullptr;      ///< the host's view
  Mapped* host_dev_ = nullptr;  ///< the same memory as the device sees it
  std::int64_t tasks_[kSlots] = {};
  std::vector<int> free_;
  std::deque<int> fifo_;
  double last_end_ = 0;
  PhaseTimes times_;
};

}  // namespace

std::unique_ptr<WorkerCase> make_gpu_worker(const CaseSpec& spec, const CaseEnv& env) {
  if (env.gpu == nullptr)
    throw EnvironmentError("subset-mean: GPU worker created without a GPU context");
  return std::make_unique<SubsetMeanGpuWorker>(spec, *env.gpu);
}

}  // namespace sb::subset_mean
