// subset-mean's scheduler side (subset_mean.hpp): per-task partial sums kept in task slots and
// folded in task order with Neumaier compensation, the repeat's answer, the checks and the work.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "scalebench/error.hpp"
#include "subset_mean/config.hpp"
#include "subset_mean/neumaier.hpp"
#include "subset_mean/subset_mean.hpp"

namespace sb::subset_mean {
namespace {

class Scheduler final : public SchedulerCase {
 public:
  explicit Scheduler(const CaseSpec& spec)
      : cfg_(parse(spec.params)),
        subset_(static_cast<std::size_t>(cfg_.tasks)),
        full_(static_cast<std::size_t>(cfg_.tasks)),
        seen_(static_cast<std::size_t>(cfg_.tasks)) {}

  [[nodiscard]] std::int64_t num_tasks() const override { return cfg_.tasks; }

  void begin_repeat() override {
    std::fill(subset_.begin(), subset_.end(), 0.0);
    std::fill(full_.begin(), full_.end(), 0.0);
    std::fill(seen_.begin(), seen_.end(), 0);
    received_ = 0;
  }

  void on_task(const TaskOutcome& outcome) override {
    if (outcome.task < 0 || outcome.task >= cfg_.tasks || outcome.partial.size() != 2)
      throw Error(fmt::format("subset-mean: bad partial for task {} ({} values)", outcome.task,
                              outcome.partial.size()));
    const auto t = static_cast<std::size_t>(outcome.task);
    subset_[t] = outcome.partial[0];
    full_[t] = outcome.partial[1];
    if (!seen_[t]) ++received_;
    seen_[t] = 1;
  }

  void on_worker_done(int /*rank*/, const std::vector<double>& /*partial*/) override {}

  nlohmann::json end_repeat() override {
    const double s_sub = neumaier_sum(subset_);
    const double s_all = neumaier_sum(full_);
    const auto count = static_cast<double>(cfg_.count());
    const auto draws = static_cast<double>(cfg_.draws());
    const double answer = cfg_.mu + 1.0 + cfg_.sigma * (s_sub / count);
    const double full_mean = cfg_.mu + cfg_.sigma * (s_all / draws);
    answers_.push_back(answer);
    full_means_.push_back(full_mean);
    min_received_ = std::min(min_received_, received_);
    return {{"answer", answer},      {"full_mean", full_mean}, {"count", cfg_.count()},
            {"draws", cfg_.draws()}, {"subset_sum_z", s_sub},  {"full_sum_z", s_all}};
  }

  std::vector<Check> validate(const std::vector<std::vector<double>>& /*worker_parts*/) override {
    std::vector<Check> checks;
    if (answers_.empty()) {
      checks.push_back({"answer", 0, 0, false, "no repeat finished"});
      return checks;
    }
    const double answer = answers_.back();
    const double full_mean = full_means_.back();
    const double count = static_cast<double>(cfg_.count());
    Check a;
    a.name = "answer";
    a.value = std::fabs(answer - (cfg_.mu + 1.0));
    a.limit = 6.0 * cfg_.sigma / std::sqrt(count);
    a.pass = a.value <= a.limit;
    a.detail =
        fmt::format("|answer - {}| <= 6*{}/sqrt({})", cfg_.mu + 1.0, cfg_.sigma, cfg_.count());
    checks.push_back(a);
    Check f;
    f.name = "full_mean";
    f.value = std::fabs(full_mean - cfg_.mu);
    f.limit = 6.0 * cfg_.sigma / static_cast<double>(cfg_.n);
    f.pass = f.value <= f.limit;
    f.detail = fmt::format("|full_mean - {}| <= 6*{}/{} (all n^2 = {} draws)", cfg_.mu, cfg_.sigma,
                           cfg_.n, cfg_.draws());
    checks.push_back(f);
    Check t;
    t.name = "tasks";
    t.value = static_cast<double>(min_received_);
    t.limit = static_cast<double>(cfg_.tasks);
    t.pass = min_received_ == cfg_.tasks;
    t.detail = fmt::format("every one of the {} tasks folded in every repeat", cfg_.tasks);
    checks.push_back(t);
    double spread = 0;
    for (std::size_t i = 0; i < answers_.size(); ++i) {
      spread = std::max(spread, relative_difference(answers_[i], answer));
      spread = std::max(spread, relative_difference(full_means_[i], full_mean));
    }
    Check r;
    r.name = "repeats_agree";
    r.value = spread;
    r.limit = 1e-12;
    r.pass = spread <= r.limit;
    r.detail = fmt::format("answer and full_mean of all {} repeats within 1e-12 relative",
                           answers_.size());
    checks.push_back(r);
    return checks;
  }

  [[nodiscard]] Fingerprint fingerprint() const override {
    Fingerprint fp;
    if (!answers_.empty())
      fp.values = {{"answer", answers_.back()}, {"full_mean", full_means_.back()}};
    return fp;
  }

  [[nodiscard]] Work work() const override {
    Work w;
    w.units = static_cast<double>(cfg_.draws());
    w.unit = "draws";
    w.bytes = 8.0 * static_cast<double>(cfg_.draws());
    w.flops = 0;
    w.bound = Work::Bound::bytes;
    return w;
  }

 private:
  Config cfg_;
  std::vector<double> subset_;
  std::vector<double> full_;
  std::vector<std::uint8_t> seen_;
  std::int64_t received_ = 0;
  std::int64_t min_received_ = INT64_MAX;
  std::vector<double> answers_;
  std::vector<double> full_means_;
};

}  // namespace

std::unique_ptr<SchedulerCase> make_scheduler(const CaseSpec& spec) {
  return std::make_unique<Scheduler>(spec);
}

}  // namespace sb::subset_mean
