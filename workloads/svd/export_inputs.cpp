// svd's inputs for `scalebench datagen`: A row block by row block, and its singular values by
// the workload's LAPACK reference.
#include "svd/export_inputs.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "scalebench/error.hpp"
#include "svd/config.hpp"
#include "svd/scheduler.hpp"
#include "svd/svd_data.hpp"

namespace sb::svd {

InputExport export_inputs(const std::vector<Params>& variants) {
  SB_EXPECTS(variants.size() == 1, "svd: datagen expects one case");
  const Config cfg = parse(variants.front());
  InputExport e;
  e.workload = "svd";
  e.variants = variants;
  e.attrs = {{"m", cfg.m},
             {"n", cfg.n},
             {"chunk", cfg.chunk},
             {"seed", cfg.seed},
             {"condition", cfg.condition},
             {"recompute", "numpy.linalg.svd(A, compute_uv=False)"},
             {"tasks", "row blocks of chunk rows; task t is A[t*chunk:(t+1)*chunk]"}};

  InputArray a;
  a.path = std::string{"A"};
  a.dtype = InputDtype::f64;
  a.shape = {cfg.m, cfg.n};
  a.rows_per_fill = std::max<std::int64_t>(1, (std::int64_t{16} << 20) / (8 * cfg.n));
  a.attrs = {{"description",
              "A[i,j] = s_j * U(0,1)(seed, i*n + j), U the uniform Philox "
              "stream 0, s_j = condition^(-j/(n-1)) (1 when condition = 1)"},
             {"philox_stream", 0}};
  const auto scales = column_scales(cfg);
  a.fill = [cfg, scales](std::int64_t row0, std::int64_t rows, void* out, int /*threads*/) {
    // The generator writes column-major (LAPACK's layout); the file is row-major.
    std::vector<double> col(static_cast<std::size_t>(rows * cfg.n));
    generate_rows(cfg, scales.data(), row0, rows, col.data(), rows);
    auto* p = static_cast<double*>(out);
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::int64_t j = 0; j < cfg.n; ++j) p[r * cfg.n + j] = col[r + j * rows];
  };
  e.arrays.push_back(std::move(a));

  if (cfg.reference_check()) {
    e.answer_bytes = 8 * cfg.n + 4096;
    const Params params = variants.front();
    e.answer = [params](int /*threads*/) {
      CaseSpec spec;
      spec.workload = "svd";
      spec.params = params;
      const std::vector<double> s = reference_singular_values(spec);
      const double smax = s.empty() ? 0.0 : s.front();
      const double smin = s.empty() ? 0.0 : s.back();
      return nlohmann::json{{"singular_values", s},
                            {"sigma_max", smax},
                            {"sigma_min", smin},
                            {"condition", smin > 0 ? smax / smin : INFINITY},
                            {"method", "LAPACK dgesvd of the whole matrix"}};
    };
  }
  return e;
}

}  // namespace sb::svd
