// tiled-dgemm's scheduler side: the task list, the fold of the panels' sums, validation from
// the workers' sampled entries, the fingerprint and the work (tiled_dgemm.hpp).
#include <cmath>
#include <cstdint>
#include <limits>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "scalebench/error.hpp"
#include "tiled_dgemm.hpp"

namespace tiled_dgemm {
namespace {

class Scheduler final : public sb::SchedulerCase {
 public:
  explicit Scheduler(const sb::CaseSpec& spec) : c_(parse(spec.params)) {}

  [[nodiscard]] std::int64_t num_tasks() const override { return c_.tasks(); }

  void begin_repeat() override {
    sum_.assign(static_cast<std::size_t>(c_.tasks()), 0.0);
    sum_squares_.assign(sum_.size(), 0.0);
    seen_.assign(sum_.size(), 0);
  }

  void on_task(const sb::TaskOutcome& o) override {
    if (o.task < 0 || o.task >= c_.tasks() || o.partial.size() != 2)
      throw sb::Error(fmt::format("tiled-dgemm: bad partial of task {}", o.task));
    const auto t = static_cast<std::size_t>(o.task);
    if (seen_[t]++ != 0) throw sb::Error(fmt::format("tiled-dgemm: task {} came twice", o.task));
    sum_[t] = o.partial[0];
    sum_squares_[t] = o.partial[1];
  }

  void on_worker_done(int, const std::vector<double>&) override {}

  /// The sums folded in task order: the same answer whichever worker ran which panel.
  nlohmann::json end_repeat() override {
    double sum = 0;
    double squares = 0;
    for (std::size_t t = 0; t < sum_.size(); ++t) {
      if (seen_[t] == 0) throw sb::Error(fmt::format("tiled-dgemm: task {} never came", t));
      sum += sum_[t];
      squares += sum_squares_[t];
    }
    last_ = {{"sum", sum}, {"sum_squares", squares}, {"entries", c_.m * c_.n}};
    return last_;
  }

  /// Every worker checked the sampled entries of the panels it computed in the last repeat.
  std::vector<sb::Check> validate(const std::vector<std::vector<double>>& parts) override {
    double worst = 0;
    double checked = 0;
    for (const auto& p : parts) {
      if (p.size() != 2) throw sb::Error("tiled-dgemm: bad validation message");
      worst = std::max(worst, p[0]);
      checked += p[1];
    }
    const double expected = static_cast<double>(c_.tasks() * kSamples);
    const double squares = last_.value("sum_squares", 0.0);
    return {{"sampled_error_vs_bound", worst, 1.0, worst <= 1.0,
             fmt::format("max over {} sampled entries of |C_ij - Dot2 reference| / (gamma_k "
                         "sum_l |A_il B_lj|), gamma_k = k u / (1 - k u)",
                         checked)},
            {"sampled_entries", checked, expected, checked == expected,
             "sampled entries checked = tasks x 8 (every panel of the last repeat)"},
            {"sum_squares_finite", squares, 0.0, std::isfinite(squares) && squares > 0,
             "sum of C^2 is finite and > 0"}};
  }

  [[nodiscard]] sb::Fingerprint fingerprint() const override { return {last_, {}}; }

  /// 2 m n k flop, bound by flops: efficiency is against the DGEMM (CPU) or fp64 GEMM (GPU)
  /// ceiling. Bytes: the least any DGEMM moves (A and B read, C written once).
  [[nodiscard]] sb::Work work() const override {
    const double flops =
        2.0 * static_cast<double>(c_.m) * static_cast<double>(c_.n) * static_cast<double>(c_.k);
    sb::Work w;
    w.units = flops;
    w.unit = "flop";
    w.flops = flops;
    w.bytes = 8.0 * static_cast<double>(c_.m * c_.k + c_.k * c_.n + c_.m * c_.n);
    w.bound = sb::Work::Bound::flops;
    return w;
  }

 private:
  Config c_;
  std::vector<double> sum_;
  std::vector<double> sum_squares_;
  std::vector<int> seen_;
  nlohmann::json last_ = nlohmann::json::object();
};

/// splitmix64: a cheap, well-mixed hash of the sample's number.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

/// sum_l A_il B_lj as if in twice the working precision (Dot2: TwoSum and an exact product by
/// fma), and sum_l |A_il B_lj|.
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

std::unique_ptr<sb::SchedulerCase> make_scheduler(const sb::CaseSpec& spec) {
  return std::make_unique<Scheduler>(spec);
}

Entry sample_entry(const Config& c, std::int64_t task, int s) {
  const std::uint64_t h = mix(c.seed ^ mix(static_cast<std::uint64_t>(task * kSamples + s)));
  return {c.row0(task) +
              static_cast<std::int64_t>((h >> 32) % static_cast<std::uint64_t>(c.rows(task))),
          static_cast<std::int64_t>((h & 0xFFFFFFFFull) % static_cast<std::uint64_t>(c.n))};
}

std::vector<double> check_samples(const Config& c, const std::vector<std::int64_t>& tasks,
                                  const std::vector<double>& samples, int threads) {
  const double u = std::numeric_limits<double>::epsilon() / 2;
  const double gamma = static_cast<double>(c.k) * u / (1 - static_cast<double>(c.k) * u);
  const auto count = static_cast<std::int64_t>(tasks.size()) * kSamples;
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
    const double bound = gamma * magnitude;
    // a NaN or an infinity fails the check as "infinitely wrong"
    const double ratio =
        std::isfinite(got) ? std::abs(got - ref) / bound : std::numeric_limits<double>::infinity();
    worst = std::max(worst, ratio);
  }
  return {worst, static_cast<double>(count)};
}

}  // namespace tiled_dgemm
