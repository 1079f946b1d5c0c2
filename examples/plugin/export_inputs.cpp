// tiled-dgemm's inputs for `scalebench datagen` (scalebench/input_export.hpp): A and B with the
// workers' generators, and C's sums by the CPU kernel, folded as the scheduler folds them.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "scalebench/error.hpp"
#include "tiled_dgemm.hpp"

namespace tiled_dgemm {

sb::InputExport export_inputs(const std::vector<sb::Params>& variants) {
  SB_EXPECTS(variants.size() == 1, "tiled-dgemm: datagen expects one case");
  const Config c = parse(variants.front());
  sb::InputExport e;
  e.workload = "tiled-dgemm";
  e.variants = variants;
  e.attrs = {{"m", c.m},       {"n", c.n},
             {"k", c.k},       {"tile", c.tile},
             {"seed", c.seed}, {"recompute", "C = A @ B; answer: C.sum(), (C * C).sum()"}};
  auto matrix = [&](const char* name, std::int64_t rows, std::int64_t cols, unsigned stream) {
    sb::InputArray a;
    a.path = name;
    a.dtype = sb::InputDtype::f64;
    a.shape = {rows, cols};
    a.rows_per_fill = std::max<std::int64_t>(1, (std::int64_t{16} << 20) / (8 * cols));
    a.attrs = {
        {"description", std::string(name) + "[i,j] = uniform(seed, i*" + (stream == 0 ? "k" : "n") +
                            " + j, stream " + std::to_string(stream) + ") - 1/2"},
        {"philox_stream", stream}};
    return a;
  };
  sb::InputArray array_a = matrix("A", c.m, c.k, 0);
  array_a.fill = [c](std::int64_t row0, std::int64_t rows, void* out, int threads) {
    generate_a(c, row0, rows, static_cast<double*>(out), threads);
  };
  sb::InputArray array_b = matrix("B", c.k, c.n, 1);
  array_b.fill = [c](std::int64_t row0, std::int64_t rows, void* out, int /*threads*/) {
    auto* p = static_cast<double*>(out);
    for (std::int64_t l = 0; l < rows; ++l)
      for (std::int64_t j = 0; j < c.n; ++j) p[l * c.n + j] = b_value(c, row0 + l, j);
  };
  e.arrays.push_back(std::move(array_a));
  e.arrays.push_back(std::move(array_b));

  // The answer costs the product itself: only up to a few GFLOP.
  if (2.0 * static_cast<double>(c.m) * static_cast<double>(c.n) * static_cast<double>(c.k) <=
      1e10) {
    e.answer_bytes = 4096;
    e.answer = [c](int threads) {
      std::vector<double> b(static_cast<std::size_t>(c.k * c.n));
      std::vector<double> a(static_cast<std::size_t>(c.tile * c.k));
      std::vector<double> panel(static_cast<std::size_t>(c.tile * c.n));
      generate_b(c, b.data(), threads);
      double sum = 0;
      double squares = 0;
      for (std::int64_t t = 0; t < c.tasks(); ++t) {
        const std::int64_t rows = c.rows(t);
        generate_a(c, c.row0(t), rows, a.data(), threads);
        panel_product(c, a.data(), rows, b.data(), panel.data(), threads);
        double s = 0;
        double q = 0;
        for (std::int64_t i = 0; i < rows * c.n; ++i) {
          s += panel[static_cast<std::size_t>(i)];
          q += panel[static_cast<std::size_t>(i)] * panel[static_cast<std::size_t>(i)];
        }
        sum += s;
        squares += q;
      }
      return nlohmann::json{{"sum", sum},
                            {"sum_squares", squares},
                            {"method", "the CPU worker's panel product, sums folded per panel"}};
    };
  }
  return e;
}

}  // namespace tiled_dgemm
