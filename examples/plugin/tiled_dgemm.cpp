// tiled-dgemm: the workload's description and its registration (tiled_dgemm.hpp).
#include "tiled_dgemm.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "scalebench/error.hpp"
#include "scalebench/workload_registration.hpp"

namespace tiled_dgemm {
namespace {

/// Paths agree when both sums do to 1e-10 of their scale: the paths add in other orders (the
/// GPU with fused multiply-adds), a few ulps apart, while one wrong entry moves the sum of
/// squares by about 1 / (m n) of itself.
std::vector<sb::Check> cross_check(const sb::Fingerprint& ref, const sb::Fingerprint& other) {
  const double ref_sq = ref.values.at("sum_squares").get<double>();
  const double sq = other.values.at("sum_squares").get<double>();
  const double entries = ref.values.at("entries").get<double>();
  const double d_sq = std::abs(sq - ref_sq) / ref_sq;
  // the sum of entries of either sign: against the scale of sum |C_ij| <= sqrt(entries * sumsq)
  const double scale = std::sqrt(entries * ref_sq);
  const double d_sum =
      std::abs(other.values.at("sum").get<double>() - ref.values.at("sum").get<double>()) / scale;
  constexpr double kLimit = 1e-10;
  return {{"cross_sum_squares", d_sq, kLimit, d_sq <= kLimit,
           "|sum C^2 - reference| / reference sum C^2"},
          {"cross_sum", d_sum, kLimit, d_sum <= kLimit,
           "|sum C - reference| / sqrt(entries * reference sum C^2)"}};
}

/// A, B and a C panel per worker; on a GPU the same in device memory.
sb::MemoryNeed memory_needed(const sb::CaseSpec& spec, const sb::CaseEnv& env) {
  const Config c = parse(spec.params);
  const double bytes = 8.0 * static_cast<double>(c.k * c.n + 4 * c.tile * (c.k + c.n));
  const double samples = 8.0 * static_cast<double>(c.tasks() * kSamples);
  sb::MemoryNeed need;
  need.host_bytes = env.device == sb::Device::gpu ? samples : bytes + samples;
  need.device_bytes = env.device == sb::Device::gpu ? bytes + samples : 0;
  return need;
}

}  // namespace

}  // namespace tiled_dgemm

namespace {

sb::Workload tiled_dgemm_workload() {
  sb::Workload w;
  w.name = "tiled-dgemm";
  w.description =
      "C = A B of Philox uniforms, a panel of `tile` rows of C per task: a blocked CPU loop "
      "nest, a shared-memory tiled CUDA kernel (example plugin)";
  w.keys = {{"m", "rows of A and C"},
            {"n", "columns of B and C"},
            {"k", "columns of A, rows of B"},
            {"tile", "rows of C per task (<= m)"},
            {"seed", "Philox key of A and B (default 42)"}};
  w.preset = tiled_dgemm::preset;
  w.expand = [](const sb::Params& p) {
    (void)tiled_dgemm::parse(p);  // one clear line on bad values, before anything runs
    return std::vector<sb::Params>{p};
  };
  w.make_scheduler = tiled_dgemm::make_scheduler;
  w.make_worker = [](const sb::CaseSpec& spec,
                     const sb::CaseEnv& env) -> std::unique_ptr<sb::WorkerCase> {
    if (env.device == sb::Device::gpu) {
#if TILED_DGEMM_GPU
      return tiled_dgemm::make_gpu_worker(spec, env);
#else
      throw sb::EnvironmentError("tiled-dgemm: this plugin was built without its CUDA kernel");
#endif
    }
    return tiled_dgemm::make_cpu_worker(spec, env);
  };
  w.cross_check = tiled_dgemm::cross_check;
  w.memory_needed = tiled_dgemm::memory_needed;
  w.export_inputs = tiled_dgemm::export_inputs;
  w.weak_scale = tiled_dgemm::weak_scale;
  return w;
}

}  // namespace

SB_REGISTER_WORKLOAD(tiled_dgemm_workload);
