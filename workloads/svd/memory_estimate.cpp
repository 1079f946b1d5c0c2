// svd's memory per worker, from the buffers tsqr_cpu.cpp and tsqr_gpu.cu allocate up front: a
// worker keeps every row block it owns (the block with its reflectors and its U_i, chunk x n
// each) until U is formed, plus n x n factors per block and per merge of the reduction tree.
// Dispatch is dynamic; the estimate takes this worker's even share, ceil(blocks / workers),
// which is also what both engines allocate before the first repeat.
#include "svd/memory_estimate.hpp"

#include <algorithm>
#include <cstdint>

#include "svd/config.hpp"
#include "svd/sketch.hpp"
#include "svd/tree.hpp"

namespace sb::svd {

MemoryNeed memory_needed(const CaseSpec& spec, const CaseEnv& env) {
  const Config cfg = parse(spec.params);
  const double n = static_cast<double>(cfg.n);
  const double chunk = static_cast<double>(cfg.chunk);
  const double nn = n * n;
  const double cn = chunk * n;
  const int size = std::max(1, env.size);
  const int rank = std::clamp(env.rank, 0, size - 1);
  const std::int64_t share = (cfg.blocks() + size - 1) / size;
  double receives = 0;
  for (const auto& step : tree_steps(rank, size))
    if (step.receive) receives += 1;
  constexpr double d = sizeof(double);
  MemoryNeed need;
  if (env.device == Device::cpu) {
    const double nb = std::min(32.0, n);   // tree-merge block size (dtpqrt)
    const double qnb = std::min(64.0, n);  // block-QR block size (dgeqrt)
    // Block slots, allocated up front for share + 1 blocks: A_i, U_i, T_i, R, X, T of a merge.
    const double slots = static_cast<double>(std::min<std::int64_t>(share + 1, cfg.blocks()));
    double doubles = slots * (2 * cn + qnb * n + 2 * nn + nb * n);
    // Workspaces of every pool thread and the main thread.
    doubles += (std::max(1, env.threads) + 1) * (2 * qnb * n + nb * n);
    // This worker's zero R and U_R piece, and the cross-worker merges it receives.
    doubles += 2 * nn + receives * (2 * nn + nb * n);
    // Rank 0: the SVD of R (input, V^T, dgesdd's ~4n^2 workspace, dsyevd's 2n^2).
    if (rank == 0) doubles += 2 * nn + 4 * nn + 2 * nn;
    // Sketch mode: one Y shared by the pool (64-bit fixed point) and its doubles (2n x n each),
    // R_s and R_c, dgeqrf's tau, and every thread's 32-bit hit list (chunk x kSketchLayers). The
    // Grams of the blocks go into the slots' R buffers.
    if (cfg.cpu_sketch()) {
      const double sk = static_cast<double>(sketch_height(cfg.n));
      doubles += 2 * sk * n + 2 * nn + n +
                 (std::max(1, env.threads) + 1) * chunk * kSketchLayers * 4.0 / d;
    }
    // Untimed validation: one block and its U S V^T, and the n x n sums.
    doubles += 2 * cn + nn;
    need.host_bytes = doubles * d + static_cast<double>(cfg.blocks()) * sizeof(void*);
  } else {
    // tsqr_gpu.cu: a fixed part, per-block A_i, U_i, tau_i and stacked R and X pieces, and at
    // least 1 GiB for cuSOLVER workspaces, all within 85% of the free memory.
    const double fixed = 4 * n * d + 6 * nn * d + 2 * nn * d * (1 + receives) + receives * n * d;
    const double per_block = 2 * cn * d + n * d + 2 * nn * d;
    // Sketch mode: Y = S A in fixed point and as doubles (2n x n each), R_c, R_c^-1 X, 1/scales.
    const double sk = static_cast<double>(sketch_height(cfg.n));
    // (R_c, R_c^-1 X, R_s, 8 streams' partial Grams; tsqr_gpu.cu's kStreams in the worker.)
    const double sketch = cfg.gpu_sketch() ? 2 * sk * n * d + (3 + 8) * nn * d + n * d : 0.0;
    need.device_bytes =
        (fixed + sketch + static_cast<double>(share) * per_block + static_cast<double>(1 << 30)) /
        0.85;
    // Host: the untimed validation's copy of one block and the n x n sums.
    need.host_bytes = (cn + 4 * nn) * d;
  }
  return need;
}

}  // namespace sb::svd
