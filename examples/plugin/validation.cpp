// tiled-dgemm's validation (tiled_dgemm.hpp): each worker checks sampled entries of the panels it
// computed against an accurate reference and sums its panels of A by column; the scheduler
// checks the total of C against the identity sum_ij C_ij = sum_l (sum_i A_il) (sum_j B_lj).
// Both use a-priori rounding-error bounds, so a pass does not depend on a tuned tolerance.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "scalebench/error.hpp"
#include "tiled_dgemm.hpp"

namespace tiled_dgemm {
namespace {

constexpr double kUnitRoundoff = std::numeric_limits<double>::epsilon() / 2;

/// gamma_n = n u / (1 - n u): the relative error bound of n rounded operations in a row.
double gamma(double n) {
  return n * kUnitRoundoff / (1 - n * kUnitRoundoff);
}

/// splitmix64: a cheap, well-mixed hash of the sample's number.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// sum_l A_il B_lj as if in twice the working precision (Dot2 of Ogita, Rump and Oishi: TwoSum
/// and an exact product by fma), and sum_l |A_il B_lj|.
void reference_entry(const Config& c, std::int64_t i, std::int64_t j, double& value,
                     double& magnitude) {
  double s = 0;
  double err = 0;
  magnitude = 0;
  for (std::int64_t l = 0; l < c.k; ++l) {
    const double x = a_value(c, i, l);
    const double y = b_value(c, l, j);
    const double p = x * y;
    const double pe = std::fma(x, y, -p);
    const double t = s + p;
    const double z = t - s;
    err += ((s - (t - z)) + (p - z)) + pe;
    s = t;
    magnitude += std::abs(p);
  }
  value = s + err;
}

}  // namespace

Entry sample_entry(const Config& c, std::int64_t task, int s) {
  const std::uint64_t h = mix(c.seed ^ mix(static_cast<std::uint64_t>(task * kSamples + s)));
  return {c.row0(task) +
              static_cast<std::int64_t>((h >> 32) % static_cast<std::uint64_t>(c.rows(task))),
          static_cast<std::int64_t>((h & 0xFFFFFFFFull) % static_cast<std::uint64_t>(c.n))};
}

std::vector<double> validation_part(const Config& c, std::vector<std::int64_t> tasks,
                                    const std::vector<double>& samples, int threads) {
  std::sort(tasks.begin(), tasks.end());  // the same sums whatever order the tasks came in
  const double g = gamma(static_cast<double>(c.k));
  const auto count = static_cast<std::int64_t>(tasks.size()) * kSamples;
  std::vector<double> part(static_cast<std::size_t>(2 + 2 * c.k), 0.0);
  double worst = 0;
#pragma omp parallel for num_threads(threads) reduction(max : worst) schedule(dynamic)
  for (std::int64_t e = 0; e < count; ++e) {
    const std::int64_t task = tasks[static_cast<std::size_t>(e / kSamples)];
    const int s = static_cast<int>(e % kSamples);
    const Entry at = sample_entry(c, task, s);
    double ref = 0;
    double magnitude = 0;
    reference_entry(c, at.row, at.col, ref, magnitude);
    const double got = samples[static_cast<std::size_t>(task * kSamples + s)];
    // |computed - exact| <= gamma_k sum_l |A_il B_lj| for any order of the k products and
    // sums (fma or not); Dot2's own error is at most u |exact| + gamma_k^2 sum_l |A_il B_lj|.
    const double bound = g * (1 + g) * magnitude + 2 * kUnitRoundoff * std::abs(ref);
    // NaN or infinity: "infinitely wrong"
    const double ratio =
        std::isfinite(got) ? std::abs(got - ref) / bound : std::numeric_limits<double>::infinity();
    worst = std::max(worst, ratio);
  }
  part[0] = worst;
  part[1] = static_cast<double>(count);
  // Column sums of this worker's rows of A, and of their magnitudes; one column per iteration,
  // rows in task order: the same bits on every path.
  double* sum = part.data() + 2;
  double* magnitude = sum + c.k;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::int64_t l = 0; l < c.k; ++l)
    for (const std::int64_t t : tasks)
      for (std::int64_t i = c.row0(t); i < c.row0(t) + c.rows(t); ++i) {
        const double a = a_value(c, i, l);
        sum[l] += a;
        magnitude[l] += std::abs(a);
      }
  return part;
}

IdentityCheck check_total(const Config& c, double total, const std::vector<double>& column_sums,
                          const std::vector<double>& column_magnitudes) {
  SB_EXPECTS(static_cast<std::int64_t>(column_sums.size()) == c.k &&
                 static_cast<std::int64_t>(column_magnitudes.size()) == c.k,
             "tiled-dgemm: column sums of the wrong length");
  double expected = 0;
  double magnitude = 0;
  for (std::int64_t l = 0; l < c.k; ++l) {
    double row = 0;
    double row_magnitude = 0;
    for (std::int64_t j = 0; j < c.n; ++j) {
      const double b = b_value(c, l, j);
      row += b;
      row_magnitude += std::abs(b);
    }
    expected += column_sums[static_cast<std::size_t>(l)] * row;
    magnitude += column_magnitudes[static_cast<std::size_t>(l)] * row_magnitude;
  }
  // The total of C carries at most gamma_k (each entry) + gamma_{mn} (adding the entries) times
  // sum_ijl |A_il B_lj| = `magnitude`; the identity's side gamma_m + gamma_n + gamma_k of it.
  const double mn = static_cast<double>(c.m) * static_cast<double>(c.n);
  const double bound = gamma(mn + static_cast<double>(c.m + c.n + 2 * c.k)) * magnitude;
  IdentityCheck r;
  r.expected = expected;
  r.ratio = std::isfinite(total) ? std::abs(total - expected) / bound
                                 : std::numeric_limits<double>::infinity();
  return r;
}

}  // namespace tiled_dgemm
