// tiled-dgemm's scheduler side: the task list, the fold of the panels' sums, validation from
// the workers' parts (validation.cpp), the fingerprint and the work (tiled_dgemm.hpp).
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

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

  /// Every worker checked the sampled entries of the panels it computed in the last repeat and
  /// summed their rows of A by column; the total of C is checked here against those sums.
  std::vector<sb::Check> validate(const std::vector<std::vector<double>>& parts) override {
    const auto k = static_cast<std::size_t>(c_.k);
    double worst = 0;
    double checked = 0;
    std::vector<double> column_sums(k, 0.0);
    std::vector<double> column_magnitudes(k, 0.0);
    for (const auto& p : parts) {
      if (p.size() != 2 + 2 * k) throw sb::Error("tiled-dgemm: bad validation message");
      worst = std::max(worst, p[0]);
      checked += p[1];
      for (std::size_t l = 0; l < k; ++l) {
        column_sums[l] += p[2 + l];
        column_magnitudes[l] += p[2 + k + l];
      }
    }
    const double expected = static_cast<double>(c_.tasks() * kSamples);
    const double total = last_.value("sum", 0.0);
    const IdentityCheck identity = check_total(c_, total, column_sums, column_magnitudes);
    return {{"sampled_error_vs_bound", worst, 1.0, worst <= 1.0,
             fmt::format("max over {} sampled entries of |C_ij - Dot2 reference| / (gamma_k "
                         "sum_l |A_il B_lj| + the reference's error), gamma_k = k u / (1 - k u)",
                         checked)},
            {"sampled_entries", checked, expected, checked == expected,
             "sampled entries checked = tasks x 8 (every panel of the last repeat)"},
            {"sum_vs_identity", identity.ratio, 1.0, identity.ratio <= 1.0,
             fmt::format("|sum C - sum_l colsum(A)_l rowsum(B)_l| / rounding-error bound "
                         "(identity: {:.17g})",
                         identity.expected)}};
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

}  // namespace

std::unique_ptr<sb::SchedulerCase> make_scheduler(const sb::CaseSpec& spec) {
  return std::make_unique<Scheduler>(spec);
}

}  // namespace tiled_dgemm
