#pragma once
/// @file tiled_dgemm.hpp
/// tiled-dgemm, an example of a workload built outside scalebench (docs/writing-a-workload.md):
/// C = A B for an m x k matrix A and a k x n matrix B of Philox uniforms in [-1/2, 1/2)
/// (scalebench/philox.hpp):
///   A[i,l] = uniform(seed, i k + l, stream 0) - 1/2,   B[l,j] = uniform(seed, l n + j, stream 1) -
///   1/2
/// A task is a panel of `tile` rows of C: its worker generates that panel of A and multiplies it
/// by B, which every worker generates once, before the first repeat. A task's partial is the sum
/// and the sum of squares of its panel of C; the worker keeps eight sampled entries of the panel
/// for validation. The scheduler folds the sums in task order. Validation (untimed) checks the
/// sampled entries against a twice-as-precise dot product (Ogita-Rump-Oishi's Dot2) and the
/// total of C against an identity, both within a-priori rounding-error bounds; paths are
/// cross-checked on the two sums.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "config.hpp"
#include "scalebench/philox.hpp"
#include "scalebench/workload.hpp"

namespace tiled_dgemm {

inline double a_value(const Config& c, std::int64_t i, std::int64_t l) {
  return sb::data::uniform(c.seed, static_cast<std::uint64_t>(i * c.k + l), 0) - 0.5;
}
inline double b_value(const Config& c, std::int64_t l, std::int64_t j) {
  return sb::data::uniform(c.seed, static_cast<std::uint64_t>(l * c.n + j), 1) - 0.5;
}

/// Entries of each task's panel kept for validation.
inline constexpr int kSamples = 8;

/// Row and column of sample s of `task` (a hash of task and s: the same on every path).
struct Entry {
  std::int64_t row = 0;
  std::int64_t col = 0;
};
[[nodiscard]] Entry sample_entry(const Config& c, std::int64_t task, int s);

/// A worker's part of the validation (validation.cpp), over the panels of `tasks` it computed
/// in the last repeat, whose sampled entries are `samples[task * kSamples + s]`:
///   [0] the largest |entry - accurate reference| / its rounding-error bound (pass: <= 1),
///   [1] the entries checked,
///   [2, 2 + k) the column sums of those rows of A, [2 + k, 2 + 2k) of their magnitudes.
[[nodiscard]] std::vector<double> validation_part(const Config& c, std::vector<std::int64_t> tasks,
                                                  const std::vector<double>& samples, int threads);

/// The total of C against sum_l (sum_i A_il) (sum_j B_lj), from the workers' column sums of A
/// (summed over workers) and B generated here.
struct IdentityCheck {
  double expected = 0;  ///< the identity's value
  double ratio = 0;     ///< |total - expected| / rounding-error bound (pass: <= 1)
};
[[nodiscard]] IdentityCheck check_total(const Config& c, double total,
                                        const std::vector<double>& column_sums,
                                        const std::vector<double>& column_magnitudes);

/// Rows [row0, row0 + rows) of A into `a` (rows x k, row-major), with `threads` threads.
void generate_a(const Config& c, std::int64_t row0, std::int64_t rows, double* a, int threads);
/// The whole of B (k x n, row-major).
void generate_b(const Config& c, double* b, int threads);

/// C_panel = A_panel B on the CPU (rows x n), blocked for the caches, rows spread over
/// `threads` OpenMP threads. Every entry is summed over l in order, whatever the threads.
void panel_product(const Config& c, const double* a, std::int64_t rows, const double* b,
                   double* out, int threads);

std::unique_ptr<sb::WorkerCase> make_cpu_worker(const sb::CaseSpec& spec, const sb::CaseEnv& env);
#if TILED_DGEMM_GPU
std::unique_ptr<sb::WorkerCase> make_gpu_worker(const sb::CaseSpec& spec, const sb::CaseEnv& env);
#endif

#ifndef TILED_DGEMM_EXTRA_WORK_PERCENT
#define TILED_DGEMM_EXTRA_WORK_PERCENT 0
#endif
/// A build made with -DTILED_DGEMM_EXTRA_WORK_PERCENT=p computes about p% of each task's panel
/// a second time (to the same values), as a slower commit of the kernel would, for trying an A/B
/// run of two builds (docs/ci.md): the CPU worker that many of the panel's rows, the GPU worker
/// the whole panel over that share of the inner dimension (k), rounded up to whole tiles. 0 in a
/// normal build.
inline std::int64_t extra_rows(std::int64_t rows) {
  return rows * TILED_DGEMM_EXTRA_WORK_PERCENT / 100;
}
inline std::int64_t extra_inner(std::int64_t k) {
  return k * TILED_DGEMM_EXTRA_WORK_PERCENT / 100;
}

/// The scheduler side (scheduler.cpp).
std::unique_ptr<sb::SchedulerCase> make_scheduler(const sb::CaseSpec& spec);

/// datagen: A and B, and C's sums by the CPU kernel when that takes little time.
[[nodiscard]] sb::InputExport export_inputs(const std::vector<sb::Params>& variants);

}  // namespace tiled_dgemm
