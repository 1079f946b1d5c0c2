// subset-mean's inputs for `scalebench datagen`: X row by row, and the answer by the CPU path.
#include "subset_mean/export_inputs.hpp"
#include "subset_mean/neumaier.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "scalebench/error.hpp"
#include "subset_mean/config.hpp"
#include "subset_mean/philox_simd.hpp"
#include "subset_mean/worker_cpu.hpp"

namespace sb::subset_mean {

InputExport export_inputs(const std::vector<Params>& variants) {
  SB_EXPECTS(variants.size() == 1, "subset-mean: datagen expects one case");
  const Config cfg = parse(variants.front());
  InputExport e;
  e.workload = "subset-mean";
  e.variants = variants;
  e.attrs = {{"n", cfg.n},
             {"chunk", cfg.chunk},
             {"seed", cfg.seed},
             {"mu", cfg.mu},
             {"sigma", cfg.sigma},
             {"recompute", "(x + 1)[::2, ::2].mean()"},
             {"subset", "rows i and columns j with i % 2 == 0 and j % 2 == 0"},
             {"tasks",
              "chunk x chunk blocks; task t is block row t // (n/chunk), block column "
              "t % (n/chunk)"}};

  InputArray x;
  x.path = std::string{"x"};
  x.dtype = InputDtype::f64;
  x.shape = {cfg.n, cfg.n};
  x.rows_per_fill = std::max<std::int64_t>(1, (std::int64_t{32} << 20) / (8 * cfg.n));
  x.attrs = {{"description",
              "X[i,j] = mu + sigma * Z(seed, i*n + j), Z the standard-normal "
              "Philox stream 0 (Box-Muller)"},
             {"philox_stream", static_cast<std::int64_t>(kStream)}};
  x.fill = [cfg](std::int64_t row0, std::int64_t rows, void* out, int /*threads*/) {
    auto* p = static_cast<double*>(out);
    const auto count = static_cast<std::size_t>(rows * cfg.n);
    data::simd::fill_normal(cfg.seed, kStream, static_cast<std::uint64_t>(row0 * cfg.n), count, p);
    for (std::size_t k = 0; k < count; ++k) p[k] = cfg.mu + cfg.sigma * p[k];
  };
  e.arrays.push_back(std::move(x));

  e.answer_bytes = 4096;
  e.answer = [cfg](int threads) {
    const auto& kernels = data::simd::best_kernels();
    std::vector<double> scratch(static_cast<std::size_t>(2 * cfg.chunk));
    std::vector<double> subset(static_cast<std::size_t>(cfg.tasks));
    std::vector<double> full(static_cast<std::size_t>(cfg.tasks));
    for (std::int64_t t = 0; t < cfg.tasks; ++t) {
      const BlockSums s = block_sums(cfg, t, kernels, threads, scratch.data());
      subset[static_cast<std::size_t>(t)] = s.subset;
      full[static_cast<std::size_t>(t)] = s.full;
    }
    const double s_sub = neumaier_sum(subset);
    const double s_all = neumaier_sum(full);
    const auto count = static_cast<double>(cfg.count());
    const auto draws = static_cast<double>(cfg.draws());
    return nlohmann::json{{"answer", cfg.mu + 1.0 + cfg.sigma * (s_sub / count)},
                          {"full_mean", cfg.mu + cfg.sigma * (s_all / draws)},
                          {"count", cfg.count()},
                          {"draws", cfg.draws()},
                          {"subset_sum_z", s_sub},
                          {"full_sum_z", s_all}};
  };
  return e;
}

}  // namespace sb::subset_mean
