// tiled-dgemm on a GPU: Philox kernels for A and B, a shared-memory tiled DGEMM kernel, the
// panel's sums in two deterministic passes, and the worker that queues a task's kernels on the
// worker's stream (tiled_dgemm.hpp).
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <deque>
#include <vector>

#include "scalebench/error.hpp"
#include "scalebench/gpu_context.cuh"
#include "scalebench/philox.cuh"
#include "tiled_dgemm.hpp"

namespace tiled_dgemm {
namespace {

constexpr int kTile = 16;        ///< C tile per thread block: kTile x kTile threads
constexpr int kSumBlocks = 256;  ///< first pass of the sums: fixed, so the order is fixed
constexpr int kSumThreads = 256;

/// out[r, c] = uniform(seed, (row0 + r) * width + c, stream) - 1/2 for r < rows, c < width.
__global__ void uniform_matrix(double* out, long long row0, long long rows, long long width,
                               unsigned long long seed, unsigned stream) {
  const long long count = rows * width;
  for (long long e = blockIdx.x * static_cast<long long>(blockDim.x) + threadIdx.x; e < count;
       e += static_cast<long long>(gridDim.x) * blockDim.x)
    out[e] =
        sb::data::gpu::uniform(seed, static_cast<unsigned long long>(row0 * width + e), stream) -
        0.5;
}

/// C (rows x n) = A (rows x k) B (k x n): each block stages a kTile x kTile tile of A and of B in
/// shared memory per step along k; each thread accumulates one entry of C with fused
/// multiply-adds, l in order.
__global__ void dgemm_tiled(const double* __restrict__ a, const double* __restrict__ b,
                            double* __restrict__ c, int rows, int n, int k, int k_used) {
  __shared__ double as[kTile][kTile];
  __shared__ double bs[kTile][kTile + 1];  // +1: no bank conflicts on the column reads
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int row = blockIdx.y * kTile + ty;
  const int col = blockIdx.x * kTile + tx;
  double acc = 0;
  for (int l0 = 0; l0 < k_used; l0 += kTile) {
    as[ty][tx] =
        (row < rows && l0 + tx < k_used) ? a[static_cast<long long>(row) * k + l0 + tx] : 0.0;
    bs[ty][tx] = (l0 + ty < k_used && col < n) ? b[static_cast<long long>(l0 + ty) * n + col] : 0.0;
    __syncthreads();
#pragma unroll
    for (int l = 0; l < kTile; ++l) acc = fma(as[ty][l], bs[l][tx], acc);
    __syncthreads();
  }
  if (row < rows && col < n) c[static_cast<long long>(row) * n + col] = acc;
}

/// First pass of sum and sum of squares: block b folds a fixed grid-stride share.
__global__ void sums_partial(const double* c, long long count, double2* partial) {
  __shared__ double2 s[kSumThreads];
  double2 v = make_double2(0, 0);
  for (long long e = blockIdx.x * static_cast<long long>(kSumThreads) + threadIdx.x; e < count;
       e += static_cast<long long>(kSumBlocks) * kSumThreads) {
    v.x += c[e];
    v.y += c[e] * c[e];
  }
  s[threadIdx.x] = v;
  __syncthreads();
  for (int w = kSumThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) {
      s[threadIdx.x].x += s[threadIdx.x + w].x;
      s[threadIdx.x].y += s[threadIdx.x + w].y;
    }
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = s[0];
}

/// Second pass, one thread: the block partials in order, then the task's sampled entries.
struct SampleOffsets {
  long long at[kSamples];  ///< entry offsets in the panel
};
__global__ void sums_final(const double2* partial, double* out, const double* c,
                           SampleOffsets offsets, double* samples) {
  double2 v = make_double2(0, 0);
  for (int b = 0; b < kSumBlocks; ++b) {
    v.x += partial[b].x;
    v.y += partial[b].y;
  }
  out[0] = v.x;
  out[1] = v.y;
  for (int s = 0; s < kSamples; ++s) samples[s] = c[offsets.at[s]];
}

/// The GPU worker. B is made once in device memory (untimed). A task takes a slot: its panel of
/// A is generated, multiplied by B into its panel of C, summed, and the two sums copied to
/// pinned host memory, all queued on the worker's stream between CUDA events that give the
/// task's start, the end of generation and its end. poll() reads the oldest slot's events.
class GpuWorker final : public sb::WorkerCase {
 public:
  static constexpr int kSlots = 3;  ///< prefetch() + 1 tasks in flight

  GpuWorker(const sb::CaseSpec& spec, const sb::CaseEnv& env)
      : c_(parse(spec.params)), ctx_(*env.gpu), stream_(ctx_.stream), threads_(env.threads) {
    SB_CUDA_CHECK(cudaSetDevice(ctx_.device));
    SB_CUDA_CHECK(cudaMalloc(&b_, sizeof(double) * c_.k * c_.n));
    SB_CUDA_CHECK(cudaMalloc(&samples_, sizeof(double) * c_.tasks() * kSamples));
    SB_CUDA_CHECK(cudaMallocHost(&host_sums_, sizeof(double) * 2 * kSlots));
    SB_CUDA_CHECK(cudaEventCreate(&repeat_begin_));
    for (Slot& s : slots_) {
      SB_CUDA_CHECK(cudaMalloc(&s.a, sizeof(double) * c_.tile * c_.k));
      SB_CUDA_CHECK(cudaMalloc(&s.c, sizeof(double) * c_.tile * c_.n));
      SB_CUDA_CHECK(cudaMalloc(&s.partial, sizeof(double2) * kSumBlocks));
      SB_CUDA_CHECK(cudaMalloc(&s.sums, sizeof(double) * 2));
      SB_CUDA_CHECK(cudaEventCreate(&s.start));
      SB_CUDA_CHECK(cudaEventCreate(&s.generated));
      SB_CUDA_CHECK(cudaEventCreate(&s.end));
    }
    for (int i = kSlots - 1; i >= 0; --i) free_.push_back(i);
    uniform_matrix<<<1024, 256, 0, stream_>>>(b_, 0, c_.k, c_.n, c_.seed, 1);
    SB_CUDA_CHECK_LAUNCH();
    SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  ~GpuWorker() override {
    (void)cudaStreamSynchronize(stream_);
    for (Slot& s : slots_) {
      (void)cudaFree(s.a);
      (void)cudaFree(s.c);
      (void)cudaFree(s.partial);
      (void)cudaFree(s.sums);
      (void)cudaEventDestroy(s.start);
      (void)cudaEventDestroy(s.generated);
      (void)cudaEventDestroy(s.end);
    }
    (void)cudaEventDestroy(repeat_begin_);
    (void)cudaFreeHost(host_sums_);
    (void)cudaFree(samples_);
    (void)cudaFree(b_);
  }

  void begin_repeat() override {
    times_ = {};
    done_.clear();
    SB_CUDA_CHECK(cudaEventRecord(repeat_begin_, stream_));
  }

  void submit(std::int64_t task) override {
    SB_EXPECTS(task >= 0 && task < c_.tasks(), "tiled-dgemm: task out of range");
    if (free_.empty()) throw sb::Error("tiled-dgemm: more tasks in flight than slots");
    const int i = free_.back();
    free_.pop_back();
    Slot& s = slots_[i];
    s.task = task;
    const int rows = static_cast<int>(c_.rows(task));
    SampleOffsets offsets{};
    for (int k = 0; k < kSamples; ++k) {
      const Entry at = sample_entry(c_, task, k);
      offsets.at[k] = (at.row - c_.row0(task)) * c_.n + at.col;
    }
    SB_CUDA_CHECK(cudaEventRecord(s.start, stream_));
    uniform_matrix<<<1024, 256, 0, stream_>>>(s.a, c_.row0(task), rows, c_.k, c_.seed, 0);
    SB_CUDA_CHECK_LAUNCH();
    SB_CUDA_CHECK(cudaEventRecord(s.generated, stream_));
    const dim3 grid(static_cast<unsigned>((c_.n + kTile - 1) / kTile),
                    static_cast<unsigned>((rows + kTile - 1) / kTile));
    const int k = static_cast<int>(c_.k);
    if (const std::int64_t again = extra_inner(c_.k); again > 0) {
      // The whole panel over the first whole tiles of the inner dimension, before the product
      // overwrites it: the extra work is spread over every block, so its time is its share of
      // the flops (a few extra blocks would cost a whole wave of the kernel).
      const int k_extra =
          static_cast<int>(std::min<std::int64_t>(c_.k, (again + kTile - 1) / kTile * kTile));
      dgemm_tiled<<<grid, dim3(kTile, kTile), 0, stream_>>>(s.a, b_, s.c, rows,
                                                            static_cast<int>(c_.n), k, k_extra);
      SB_CUDA_CHECK_LAUNCH();
    }
    dgemm_tiled<<<grid, dim3(kTile, kTile), 0, stream_>>>(s.a, b_, s.c, rows,
                                                          static_cast<int>(c_.n), k, k);
    SB_CUDA_CHECK_LAUNCH();
    sums_partial<<<kSumBlocks, kSumThreads, 0, stream_>>>(s.c, rows * c_.n, s.partial);
    SB_CUDA_CHECK_LAUNCH();
    sums_final<<<1, 1, 0, stream_>>>(s.partial, s.sums, s.c, offsets, samples_ + task * kSamples);
    SB_CUDA_CHECK_LAUNCH();
    SB_CUDA_CHECK(cudaMemcpyAsync(host_sums_ + 2 * i, s.sums, sizeof(double) * 2,
                                  cudaMemcpyDeviceToHost, stream_));
    SB_CUDA_CHECK(cudaEventRecord(s.end, stream_));
    fifo_.push_back(i);
  }

  [[nodiscard]] std::size_t in_flight() const override { return fifo_.size(); }

  std::optional<sb::TaskOutcome> poll(bool wait) override {
    if (fifo_.empty()) return std::nullopt;
    const int i = fifo_.front();
    Slot& s = slots_[i];
    if (wait) {
      SB_CUDA_CHECK(cudaEventSynchronize(s.end));
    } else {
      const cudaError_t rc = cudaEventQuery(s.end);
      if (rc == cudaErrorNotReady) return std::nullopt;
      SB_CUDA_CHECK(rc);
    }
    fifo_.pop_front();
    float start_ms = 0, generated_ms = 0, end_ms = 0;
    SB_CUDA_CHECK(cudaEventElapsedTime(&start_ms, repeat_begin_, s.start));
    SB_CUDA_CHECK(cudaEventElapsedTime(&generated_ms, repeat_begin_, s.generated));
    SB_CUDA_CHECK(cudaEventElapsedTime(&end_ms, repeat_begin_, s.end));
    times_.generate += 1e-3 * (generated_ms - start_ms);
    times_.compute += 1e-3 * (end_ms - generated_ms);
    sb::TaskOutcome o;
    o.task = s.task;
    o.start = 1e-3 * start_ms;
    o.end = 1e-3 * end_ms;
    o.partial = {host_sums_[2 * i], host_sums_[2 * i + 1]};
    o.bytes = 8 * (c_.rows(s.task) * (c_.k + c_.n));
    done_.push_back(s.task);
    free_.push_back(i);
    return o;
  }

  [[nodiscard]] sb::PhaseTimes phase_times() const override { return times_; }

  /// Untimed: the sampled entries back to the host, checked there like the CPU worker's.
  std::vector<double> validate() override {
    std::vector<double> host(static_cast<std::size_t>(c_.tasks() * kSamples));
    SB_CUDA_CHECK(cudaMemcpyAsync(host.data(), samples_, sizeof(double) * host.size(),
                                  cudaMemcpyDeviceToHost, stream_));
    SB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return validation_part(c_, done_, host, threads_);
  }

  [[nodiscard]] int prefetch() const override { return kSlots - 1; }

 private:
  struct Slot {
    std::int64_t task = -1;
    double* a = nullptr;
    double* c = nullptr;
    double2* partial = nullptr;
    double* sums = nullptr;
    cudaEvent_t start = nullptr;
    cudaEvent_t generated = nullptr;
    cudaEvent_t end = nullptr;
  };

  Config c_;
  sb::GpuContext& ctx_;
  cudaStream_t stream_;
  int threads_;
  double* b_ = nullptr;
  double* samples_ = nullptr;
  double* host_sums_ = nullptr;  ///< pinned: two sums per slot
  cudaEvent_t repeat_begin_ = nullptr;
  std::array<Slot, kSlots> slots_{};
  std::vector<int> free_;
  std::deque<int> fifo_;
  std::vector<std::int64_t> done_;
  sb::PhaseTimes times_;
};

}  // namespace

std::unique_ptr<sb::WorkerCase> make_gpu_worker(const sb::CaseSpec& spec, const sb::CaseEnv& env) {
  if (env.gpu == nullptr) throw sb::EnvironmentError("tiled-dgemm: GPU worker without a GPU");
  return std::make_unique<GpuWorker>(spec, env);
}

}  // namespace tiled_dgemm
