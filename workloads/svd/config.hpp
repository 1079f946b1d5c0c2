#pragma once
/// @file config.hpp
/// Parameters of one svd case, checked, plus the quantities derived from them.

#include <cstdint>
#include <string>
#include <vector>

#include "scalebench/exec_path.hpp"
#include "scalebench/gpu_transport_kind.hpp"
#include "scalebench/params.hpp"

namespace sb::svd {

/// A case's sizes. A is m x n, split into m / chunk row blocks of chunk rows (chunk >= n).
struct Config {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t chunk = 0;
  std::uint64_t seed = 42;
  double condition = 1;  ///< 1: plain; c > 1: column j scaled by c^(-j/(n-1))
  /// SVD of R on CPUs: auto (eigen-decomposition of R^T R by dsyevd when cond(R) <= 100, else
  /// dgesdd) or gesdd (always dgesdd, divide and conquer).
  std::string cpu_svd = "auto";
  /// SVD of R on GPUs: auto (Gram eigen-decomposition when cond(R) <= 100, else gesvdj),
  /// gesvdj (Jacobi), gesvd (QR iteration) or gesvdp (polar decomposition).
  std::string gpu_svd = "auto";
  /// A GPU worker's first QR level: blocks (cuSOLVER geqrf of every block, then of the stacked
  /// R factors), stack (the worker's blocks are generated into one tall matrix and factored
  /// by one geqrf), sketch (the stacked rows by sketch-preconditioned Cholesky QR, see
  /// tsqr_gpu.cuh) or auto: sketch when m >= 8n (and n <= 8192), else stack when chunk < 4n
  /// (short blocks make the stacked R factors nearly as large as the blocks themselves, so
  /// factoring each block is work done twice), else blocks.
  std::string gpu_local = "auto";
  /// A CPU worker's first QR level: householder (dgeqrt of every block, dtpqrt tree of their R
  /// factors), sketch (sketch-preconditioned Cholesky QR of the worker's blocks, see
  /// tsqr_cpu.hpp; Householder QR of the preconditioned blocks when its check fails) or auto:
  /// sketch when m >= 8n.
  std::string cpu_local = "auto";
  /// Sketch mode's acceptance test: the Cholesky factor of the preconditioned rows must have
  /// max |diag| / min |diag| below this, else the worker takes Householder QR of those rows.
  /// Parameter `sketch_check` (tests set 1 to force the fallback).
  double sketch_diag_ratio = 30.0;
  /// GPU sketch mode: a row slice of the solve A R_s^-1 and of the Gram matrix has at least
  /// slice_rows * n rows (parameter slice_rows, 1..kMaxSliceRows; optional tuning).
  std::int64_t slice_rows = kDefaultSliceRows;
  static constexpr std::int64_t kDefaultSliceRows = 32;
  static constexpr std::int64_t kMaxSliceRows = 1'000'000;
  /// How the multi-GPU path moves its R factors, sketch and Gram matrices between the GPUs
  /// (parameter `comm`, optional: nccl, or mpi-host staged through host memory).
  GpuTransportKind comm = GpuTransportKind::nccl;
  /// Whether a CPU worker factors its blocks by the sketch (cpu_local resolved).
  [[nodiscard]] bool cpu_sketch() const {
    return cpu_local == "sketch" || (cpu_local == "auto" && m >= 8 * n);
  }
  /// Whether a GPU worker factors its rows by the sketch (gpu_local resolved).
  [[nodiscard]] bool gpu_sketch() const {
    return gpu_local == "sketch" || (gpu_local == "auto" && m >= 8 * n && n <= 8192);
  }
  /// Whether a GPU worker keeps its blocks as one stacked matrix (stack or sketch).
  [[nodiscard]] bool gpu_stack() const {
    return gpu_local == "stack" || gpu_sketch() || (gpu_local == "auto" && chunk < 4 * n);
  }

  [[nodiscard]] std::int64_t blocks() const { return m / chunk; }
  /// The problem's nominal work per repeat, the unit of svd's throughput and speedups
  /// (docs/specification.md §4.2): 6mn^2, a Householder TSQR's 2mn^2 (QR) + 2mn^2 (forming Q) +
  /// 2mn^2 (U), whatever algorithm runs, so that every path of a case counts the same work.
  [[nodiscard]] double flops() const;
  /// The flops the algorithm that runs on `device` does per repeat, for its efficiency against
  /// the fp64 GEMM ceiling (docs/workloads.md): its terms in m n^2 only, the n^3 terms of the
  /// final factorisations left out (a lower bound): sketch-preconditioned Cholesky QR 4mn^2
  /// (A R_s^-1, its Gram, U as one product of 2mn^2); Householder TSQR 6mn^2 (QR 2mn^2, U from
  /// the reflectors 4mn^2).
  [[nodiscard]] double algorithm_flops(Device device) const;
  /// Whether the scheduler also checks against LAPACK dgesvd of the whole matrix.
  [[nodiscard]] bool reference_check() const { return m <= 20000 && n <= 1000; }
};

/// Known keys with their one-line help.
const std::vector<std::pair<std::string, std::string>>& keys();

/// The parameters of a preset: tiny, small, seed or large. Throws sb::UsageError otherwise.
Params preset(const std::string& name);

/// Reads and validates the parameters; throws sb::UsageError with one clear line.
Config parse(const Params& params);

/// Column scales s_j = condition^(-j/(n-1)) (all 1 when condition == 1).
std::vector<double> column_scales(const Config& cfg);

}  // namespace sb::svd
