#include "svd/config.hpp"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "scalebench/error.hpp"

namespace sb::svd {

double Config::flops() const {
  return 6.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(n);
}

double Config::algorithm_flops(Device device) const {
  const bool sketch = device == Device::gpu ? gpu_sketch() : cpu_sketch();
  return (sketch ? 4.0 : 6.0) * static_cast<double>(m) * static_cast<double>(n) *
         static_cast<double>(n);
}

const std::vector<std::pair<std::string, std::string>>& keys() {
  static const std::vector<std::pair<std::string, std::string>> k = {
      {"m", "rows of A"},
      {"n", "columns of A (n <= chunk)"},
      {"chunk", "rows per block (one task each; m must be a multiple)"},
      {"seed", "Philox key of the data"},
      {"condition",
       "1 = plain uniform A; c > 1 scales column j by c^(-j/(n-1)) (badly conditioned A)"},
      {"cpu_svd",
       "SVD of R on CPUs: auto (default: dsyevd of R^T R when cond(R) <= 100, else dgesdd) or "
       "gesdd"},
      {"cpu_local",
       "first QR level on CPUs: auto (default: sketch when m >= 8n, else householder), "
       "householder (dgeqrt of every block, dtpqrt tree of their R factors) or sketch "
       "(sketch-preconditioned Cholesky QR of the worker's blocks, Householder QR when its check "
       "fails)"},
      {"gpu_svd",
       "SVD of R on GPUs: auto (default: eigen-decomposition of R^T R when cond(R) <= 100, "
       "else gesvdj), gesvdj, gesvd or gesvdp"},
      {"gpu_local",
       "first QR level on GPUs: auto (default: sketch when m >= 8n, else stack when chunk < 4n, "
       "else blocks), blocks (geqrf of every block, then of the stacked R factors), stack (one "
       "geqrf of the worker's stacked blocks) or sketch (sketch-preconditioned Cholesky QR of "
       "the stacked blocks, Householder QR when its check fails)"},
      {"sketch_check",
       "the sketch's check (CPU and GPU): the largest spread max/min of the diagonal of "
       "chol(A_p^T A_p) accepted (default 30); beyond it Householder QR takes over. 1 forces "
       "that fallback (tests)"},
      {"slice_rows",
       "GPU sketch: a row slice of the solve and the Gram matrix has at least slice_rows * n "
       "rows, 1..10^6 (default 32): more rows make fewer, larger products over the streams"},
      {"comm", kGpuTransportHelp},
  };
  return k;
}

Params preset(const std::string& name) {
  struct Row {
    const char* name;
    const char* m;
    const char* n;
    const char* chunk;
  };
  static const Row rows[] = {{"tiny", "2000", "50", "500"},
                             {"small", "20000", "500", "2000"},
                             {"seed", "10000", "1000", "1000"},
                             {"large", "2000000", "1000", "100000"}};
  for (const auto& r : rows) {
    if (name != r.name) continue;
    Params p;
    p.set("m", r.m);
    p.set("n", r.n);
    p.set("chunk", r.chunk);
    p.set("seed", "42");
    p.set("condition", "1");
    return p;
  }
  throw UsageError(fmt::format("svd: unknown preset '{}' (known: tiny, small, seed, large)", name));
}

Config parse(const Params& params) {
  Config c;
  c.m = params.i64("m");
  c.n = params.i64("n");
  c.chunk = params.i64("chunk");
  c.seed = params.has("seed") ? params.u64("seed") : 42;
  c.condition = params.has("condition") ? params.f64("condition") : 1.0;
  if (params.has("cpu_svd")) c.cpu_svd = params.str("cpu_svd");
  if (c.cpu_svd != "auto" && c.cpu_svd != "gesdd")
    throw UsageError(fmt::format("svd: cpu_svd must be auto or gesdd (got '{}')", c.cpu_svd));
  if (params.has("cpu_local")) c.cpu_local = params.str("cpu_local");
  if (c.cpu_local != "auto" && c.cpu_local != "householder" && c.cpu_local != "sketch")
    throw UsageError(
        fmt::format("svd: cpu_local must be auto, householder or sketch (got '{}')", c.cpu_local));
  if (params.has("gpu_svd")) c.gpu_svd = params.str("gpu_svd");
  if (c.gpu_svd != "auto" && c.gpu_svd != "gesvdj" && c.gpu_svd != "gesvd" && c.gpu_svd != "gesvdp")
    throw UsageError(
        fmt::format("svd: gpu_svd must be auto, gesvdj, gesvd or gesvdp (got '{}')", c.gpu_svd));
  if (params.has("gpu_local")) c.gpu_local = params.str("gpu_local");
  if (c.gpu_local != "auto" && c.gpu_local != "blocks" && c.gpu_local != "stack" &&
      c.gpu_local != "sketch")
    throw UsageError(fmt::format("svd: gpu_local must be auto, blocks, stack or sketch (got '{}')",
                                 c.gpu_local));
  if (params.has("sketch_check")) c.sketch_diag_ratio = params.f64("sketch_check");
  if (!(c.sketch_diag_ratio >= 1.0) || !std::isfinite(c.sketch_diag_ratio))
    throw UsageError(fmt::format("svd: sketch_check must be a finite number >= 1 (got {})",
                                 c.sketch_diag_ratio));
  if (params.has("slice_rows")) {
    const std::string& text = params.str("slice_rows");
    std::int64_t v = 0;
    try {
      v = parse_int(text, "slice_rows");
    } catch (const UsageError&) {
      v = 0;  // reported below, with the range
    }
    if (v < 1 || v > Config::kMaxSliceRows)
      throw UsageError(
          fmt::format("svd: slice_rows must be an integer in [1, 10^6] (got '{}')", text));
    c.slice_rows = v;
  }
  if (params.has("comm")) {
    const auto t = parse_gpu_transport(params.str("comm"));
    if (!t)
      throw UsageError(
          fmt::format("svd: comm must be nccl or mpi-host (got '{}')", params.str("comm")));
    c.comm = *t;
  }
  constexpr std::int64_t int_max = std::numeric_limits<int>::max();
  if (c.chunk < c.n)
    throw UsageError(fmt::format(
        "svd: chunk ({}) must be >= n ({}): every row block must be at least as tall as wide",
        c.chunk, c.n));
  if (c.m % c.chunk != 0)
    throw UsageError(fmt::format("svd: m ({}) must be a multiple of chunk ({})", c.m, c.chunk));
  if (c.chunk > int_max / c.n)
    throw UsageError(fmt::format(
        "svd: a block of chunk x n = {} x {} elements is too large (at most {} elements)", c.chunk,
        c.n, int_max));
  if (c.m > std::numeric_limits<std::int64_t>::max() / 8 / c.n)
    throw UsageError(fmt::format("svd: m x n = {} x {} does not fit 64-bit indexing", c.m, c.n));
  if (c.blocks() > int_max / c.n)
    throw UsageError(
        fmt::format("svd: too many blocks ({}) for n = {}: the stacked R factors exceed {} rows; "
                    "raise chunk",
                    c.blocks(), c.n, int_max));
  if (c.gpu_local == "sketch" && c.n > 8192)
    throw UsageError(fmt::format("svd: gpu_local=sketch takes n <= 8192 (got n = {})", c.n));
  if (!(c.condition >= 1.0) || !std::isfinite(c.condition) || c.condition > 1e15)
    throw UsageError(
        fmt::format("svd: condition must be in [1, 1e15] (got {})", params.str("condition")));
  return c;
}

std::vector<double> column_scales(const Config& cfg) {
  std::vector<double> s(static_cast<std::size_t>(cfg.n), 1.0);
  if (cfg.condition != 1.0 && cfg.n > 1) {
    const double denom = static_cast<double>(cfg.n - 1);
    for (std::int64_t j = 0; j < cfg.n; ++j)
      s[static_cast<std::size_t>(j)] = std::pow(cfg.condition, -static_cast<double>(j) / denom);
  }
  return s;
}

}  // namespace sb::svd
