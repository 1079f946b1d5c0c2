// subset-mean's inputs for `scalebench datagen`: X row by row, and the answer by the CPU path.
#include "subset_mean/export_inputs.hpp"
#include "subset_mean/neumaier.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "scalebench/error.hpp"
#include "subset_mean/philox_simd.hpp"
#include "subset_mean/subset_mean_cpu.hpp"
#include "subset_mean/subset_mean_plan.hpp"

namespace sb::subset_mean {

InputExport export_inputs(const std::vector<Params>& variants) {
  SB_EXPECTS(variants.size() == 1, "subset-mean: datagen expects one case");
  const Plan plan = make_plan(variants.front());
  InputExport e;
  e.workload = "subset-mean";
  e.variants = variants;
  e.attrs = {{"n", plan.n},
             {"chunk", plan.chunk},
             {"seed", plan.seed},
             {"mu", plan.mu},
             {"sigma", plan.sigma},
             {"recompute", "(x + 1)[::2, ::2].mean()"},
             {"subset", "rows i and columns j with i % 2 == 0 and j % 2 == 0"},
             {"tasks",
              "chunk x chunk blocks; task t is block row t // (n/chunk), block column "
              "t % (n/chunk)"}};

  InputArray x;
  x.path = std::string{"x"};
  x.dtype = InputDtype::f64;
  x.shape = {plan.n, plan.n};
  x.rows_per_fill = std::max<std::int64_t>(1, (std::int64_t{32} << 20) / (8 * plan.n));
  x.attrs = {{"description",
              "X[i,j] = mu + sigma * Z(seed, i*n + j), Z the standard-normal "
              "Philox stream 0 (Box-Muller)"},
             {"philox_stream", static_cast<std::int64_t>(kStream)}};
  x.fill = [plan](std::int64_t row0, std::int64_t rows, void* out, int /*threads*/) {
    auto* p = static_cast<double*>(out);
    const auto count = static_cast<std::size_t>(rows * plan.n);
    data::simd::fill_normal(plan.seed, kStream, static_cast<std::uint64_t>(row0 * plan.n), count,
                            p);
    for (std::size_t k = 0; k < count; ++k) p[k] = plan.mu + plan.sigma * p[k];
  };
  e.arrays.push_back(std::move(x));

  e.answer_bytes = 4096;
  e.answer = [plan](int threads) {
    const auto& kernels = data::simd::best_kernels();
    std::vector<double> scratch(static_cast<std::size_t>(2 * plan.chunk));
    std::vector<double> subset(static_cast<std::size_t>(plan.tasks));
    std::vector<double> full(static_cast<std::size_t>(plan.tasks));
    for (std::int64_t t = 0; t < plan.tasks; ++t) {
      const BlockSums s = block_sums(plan, t, kernels, threads, scratch.data());
      subset[static_cast<std::size_t>(t)] = s.subset;
      full[static_cast<std::size_t>(t)] = s.full;
    }
    const double s_sub = neumaier_sum(subset);
    const double s_all = neumaier_sum(full);
    const auto count = static_cast<double>(plan.count());
    const auto draws = static_cast<double>(plan.draws());
    return nlohmann::json{{"answer", plan.mu + 1.0 + plan.sigma * (s_sub / count)},
                          {"full_mean", plan.mu + plan.sigma * (s_all / draws)},
                          {"count", plan.count()},
                          {"draws", plan.draws()},
                          {"subset_sum_z", s_sub},
                          {"full_sum_z", s_all}};
  };
  return e;
}

}  // namespace sb::subset_mean
