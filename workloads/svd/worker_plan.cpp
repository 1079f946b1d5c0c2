// How many workers a multi-* svd case uses (worker_plan.hpp).
#include "svd/worker_plan.hpp"

#include <algorithm>
#include <cstdint>

#include <fmt/format.h>

namespace sb::svd {
namespace {

constexpr std::int64_t kRowsPerColumn = 8;  ///< rows per GPU, in multiples of n
constexpr double kLocalFlops = 2e9;         ///< 2 (m/k) n^2 per GPU

}  // namespace

WorkerPlan plan_workers(const Config& c, Device device, int available) {
  WorkerPlan p{available, {}};
  if (c.blocks() < p.workers) {
    p.workers = static_cast<int>(std::max<std::int64_t>(1, c.blocks()));
    p.why = fmt::format("{} row blocks of {} rows: a worker without one would only wait",
                        c.blocks(), c.chunk);
  }
  if (device != Device::gpu || p.workers <= 1) return p;
  const double n = static_cast<double>(c.n);
  const double by_shape = static_cast<double>(c.m / (kRowsPerColumn * c.n));
  const double by_work = 2.0 * static_cast<double>(c.m) * n * n / kLocalFlops;
  const int fit = static_cast<int>(std::max(1.0, std::min(by_shape, by_work)));
  if (fit >= p.workers) return p;
  return {fit, fmt::format("{} x {}: each GPU needs at least {} rows ({}n) and 2 GFlop of local "
                           "QR for more GPUs to pay; the n x n work none of them shrinks would "
                           "dominate",
                           c.m, c.n, kRowsPerColumn * c.n, kRowsPerColumn)};
}

}  // namespace sb::svd
