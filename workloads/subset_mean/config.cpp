// subset-mean parameters: presets and checks.
#include "subset_mean/config.hpp"

#include <cmath>

#include <fmt/format.h>

#include "scalebench/error.hpp"
#include "subset_mean/philox_simd.hpp"

namespace sb::subset_mean {

Config parse(const Params& params) {
  Config p;
  p.n = params.i64("n", 2);
  p.chunk = params.i64("chunk", 2);
  if (p.chunk % 2 != 0)
    throw UsageError(fmt::format("subset-mean: chunk ({}) must be even", p.chunk));
  if (p.n % p.chunk != 0)
    throw UsageError(
        fmt::format("subset-mean: n ({}) must be a multiple of chunk ({})", p.n, p.chunk));
  // n is even now (a multiple of an even chunk). n^2 must fit int64 (element indices).
  constexpr std::int64_t kMaxN = 3037000499;  // floor(sqrt(2^63 - 1))
  if (p.n > kMaxN)
    throw UsageError(
        fmt::format("subset-mean: n ({}) is too large: n^2 must fit 64 bits "
                    "(n <= {})",
                    p.n, kMaxN));
  p.blocks_per_row = p.n / p.chunk;
  if (p.blocks_per_row > (std::int64_t{1} << 11))  // nb^2 <= kMaxTasks
    throw UsageError(
        fmt::format("subset-mean: n/chunk = {} gives {} tasks (at most {}); use a "
                    "larger chunk",
                    p.blocks_per_row, p.blocks_per_row * p.blocks_per_row, kMaxTasks));
  p.tasks = p.blocks_per_row * p.blocks_per_row;
  if (params.has("seed")) p.seed = params.u64("seed");
  if (params.has("mu")) p.mu = params.f64("mu");
  if (params.has("sigma")) p.sigma = params.f64("sigma");
  if (!(p.sigma > 0))
    throw UsageError(fmt::format("subset-mean: sigma ({}) must be positive", p.sigma));
  if (params.has("simd") && !data::simd::parse_isa(params.str("simd"), p.simd))
    throw UsageError(fmt::format("subset-mean: simd must be scalar, avx2 or avx512 (got '{}')",
                                 params.str("simd")));
  return p;
}

Params preset_params(const std::string& preset) {
  struct Row {
    const char* name;
    const char* n;
    const char* chunk;
  };
  static constexpr Row kPresets[] = {{"tiny", "2000", "500"},
                                     {"small", "20000", "2000"},
                                     {"seed", "100000", "10000"},
                                     {"large", "500000", "10000"}};
  for (const Row& r : kPresets) {
    if (preset == r.name) {
      Params p;
      p.set("n", r.n);
      p.set("chunk", r.chunk);
      p.set("seed", "42");
      return p;
    }
  }
  throw UsageError(
      fmt::format("subset-mean: unknown preset '{}' (known: tiny, small, seed, large)", preset));
}

}  // namespace sb::subset_mean
