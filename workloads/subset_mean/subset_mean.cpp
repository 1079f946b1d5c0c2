// subset-mean: the workload's registry entry and its scheduler side.
#include "subset_mean/subset_mean.hpp"
#include "subset_mean/neumaier.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "scalebench/error.hpp"
#include "scalebench/workload_registration.hpp"
#include "subset_mean/export_inputs.hpp"
#include "subset_mean/memory_estimate.hpp"
#include "subset_mean/subset_mean_cpu.hpp"
#include "subset_mean/subset_mean_plan.hpp"

#if SCALEBENCH_HAVE_CUDA
#include "subset_mean/subset_mean_gpu.hpp"
#endif

namespace sb {
namespace subset_mean {
namespace {

double relative_difference(double a, double reference) {
  if (a == reference) return 0;
  return std::fabs(a - reference) / std::max(std::fabs(reference), 1e-300);
}

class Scheduler final : public SchedulerCase {
 public:
  explicit Scheduler(const CaseSpec& spec)
      : plan_(make_plan(spec.params)),
        subset_(static_cast<std::size_t>(plan_.tasks)),
        full_(static_cast<std::size_t>(plan_.tasks)),
        seen_(static_cast<std::size_t>(plan_.tasks)) {}

  [[nodiscard]] std::int64_t num_tasks() const override { return plan_.tasks; }

  void begin_repeat() override {
    std::fill(subset_.begin(), subset_.end(), 0.0);
    std::fill(full_.begin(), full_.end(), 0.0);
    std::fill(seen_.begin(), seen_.end(), 0);
    received_ = 0;
  }

  void on_task(const TaskOutcome& outcome) override {
    if (outcome.task < 0 || outcome.task >= plan_.tasks || outcome.partial.size() != 2)
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
    const auto count = static_cast<double>(plan_.count());
    const auto draws = static_cast<double>(plan_.draws());
    const double answer = plan_.mu + 1.0 + plan_.sigma * (s_sub / count);
    const double full_mean = plan_.mu + plan_.sigma * (s_all / draws);
    answers_.push_back(answer);
    full_means_.push_back(full_mean);
    min_received_ = std::min(min_received_, received_);
    return {{"answer", answer},       {"full_mean", full_mean}, {"count", plan_.count()},
            {"draws", plan_.draws()}, {"subset_sum_z", s_sub},  {"full_sum_z", s_all}};
  }

  std::vector<Check> validate(const std::vector<std::vector<double>>& /*worker_parts*/) override {
    std::vector<Check> checks;
    if (answers_.empty()) {
      checks.push_back({"answer", 0, 0, false, "no repeat finished"});
      return checks;
    }
    const double answer = answers_.back();
    const double full_mean = full_means_.back();
    const double count = static_cast<double>(plan_.count());
    Check a;
    a.name = "answer";
    a.value = std::fabs(answer - (plan_.mu + 1.0));
    a.limit = 6.0 * plan_.sigma / std::sqrt(count);
    a.pass = a.value <= a.limit;
    a.detail =
        fmt::format("|answer - {}| <= 6*{}/sqrt({})", plan_.mu + 1.0, plan_.sigma, plan_.count());
    checks.push_back(a);
    Check f;
    f.name = "full_mean";
    f.value = std::fabs(full_mean - plan_.mu);
    f.limit = 6.0 * plan_.sigma / static_cast<double>(plan_.n);
    f.pass = f.value <= f.limit;
    f.detail = fmt::format("|full_mean - {}| <= 6*{}/{} (all n^2 = {} draws)", plan_.mu,
                           plan_.sigma, plan_.n, plan_.draws());
    checks.push_back(f);
    Check t;
    t.name = "tasks";
    t.value = static_cast<double>(min_received_);
    t.limit = static_cast<double>(plan_.tasks);
    t.pass = min_received_ == plan_.tasks;
    t.detail = fmt::format("every one of the {} tasks folded in every repeat", plan_.tasks);
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
    w.units = static_cast<double>(plan_.draws());
    w.unit = "draws";
    w.bytes = 8.0 * static_cast<double>(plan_.draws());
    w.flops = 0;
    w.bound = Work::Bound::bytes;
    return w;
  }

 private:
  Plan plan_;
  std::vector<double> subset_;
  std::vector<double> full_;
  std::vector<std::uint8_t> seen_;
  std::int64_t received_ = 0;
  std::int64_t min_received_ = INT64_MAX;
  std::vector<double> answers_;
  std::vector<double> full_means_;
};

std::unique_ptr<WorkerCase> make_worker(const CaseSpec& spec, const CaseEnv& env) {
  if (env.device == Device::cpu) return make_cpu_worker(spec, env);
#if SCALEBENCH_HAVE_CUDA
  return make_subset_mean_gpu_worker(spec, env);
#else
  throw EnvironmentError(
      "subset-mean: this scalebench was built without CUDA, so it has no GPU "
      "worker");
#endif
}

}  // namespace

std::unique_ptr<SchedulerCase> make_scheduler(const CaseSpec& spec) {
  return std::make_unique<Scheduler>(spec);
}

std::vector<Check> cross_check(const Fingerprint& reference, const Fingerprint& other) {
  std::vector<Check> checks;
  for (const char* key : {"answer", "full_mean"}) {
    Check c;
    c.name = key;  // the runtime prefixes "cross:"
    c.limit = 1e-12;
    const auto& r = reference.values;
    const auto& o = other.values;
    if (!r.is_object() || !o.is_object() || !r.contains(key) || !o.contains(key) ||
        !r[key].is_number() || !o[key].is_number()) {
      c.value = 1;
      c.pass = false;
      c.detail = fmt::format("{} missing from a fingerprint", key);
    } else {
      const double rv = r[key].get<double>();
      const double ov = o[key].get<double>();
      c.value = relative_difference(ov, rv);
      c.pass = c.value <= c.limit;
      c.detail = fmt::format(
          "|{0} - reference {0}| / |reference {0}| <= 1e-12 ({1:.17g} vs {2:.17g})", key, ov, rv);
    }
    checks.push_back(c);
  }
  return checks;
}

}  // namespace subset_mean

Workload subset_mean_workload() {
  Workload w;
  w.name = "subset-mean";
  w.description =
      "mean of (x + 1)[::2, ::2] for an n x n array of N(mu, sigma^2) draws (Dask array "
      "experiment); every one of the n^2 draws is made";
  w.keys = {{"n", "X is n x n (a multiple of chunk)"},
            {"chunk", "tasks are chunk x chunk blocks (even, divides n)"},
            {"seed", "Philox key of the data (default 42)"},
            {"mu", "mean of X (default 10)"},
            {"sigma", "standard deviation of X, > 0 (default 1)"},
            {"simd",
             "widest SIMD variant of the CPU generator: scalar | avx2 | avx512 (default: the "
             "widest this CPU runs; the same numbers either way)"}};
  w.preset = [](const std::string& preset) { return subset_mean::preset_params(preset); };
  w.expand = [](const Params& params) {
    (void)subset_mean::make_plan(params);  // throws sb::UsageError on bad values
    return std::vector<Params>{params};
  };
  // No more workers than blocks: a worker without one would only wait for the sum. More GPUs
  // pay from the tiny preset on (docs/performance.md, subset-mean tiny).
  w.plan_workers = [](const CaseSpec& spec, int available) {
    const subset_mean::Plan plan = subset_mean::make_plan(spec.params);
    WorkerPlan p{available, {}};
    if (plan.tasks < available)
      p = {static_cast<int>(plan.tasks),
           fmt::format("{} blocks of {} x {}: a worker without one would only wait", plan.tasks,
                       plan.chunk, plan.chunk)};
    return p;
  };
  w.make_scheduler = [](const CaseSpec& spec) { return subset_mean::make_scheduler(spec); };
  w.make_worker = [](const CaseSpec& spec, const CaseEnv& env) {
    return subset_mean::make_worker(spec, env);
  };
  w.cross_check = [](const Fingerprint& reference, const Fingerprint& other) {
    return subset_mean::cross_check(reference, other);
  };
  w.memory_needed = [](const CaseSpec& spec, const CaseEnv& env) {
    return subset_mean::memory_needed(spec, env);
  };
  w.export_inputs = [](const std::vector<Params>& variants) {
    return subset_mean::export_inputs(variants);
  };
  return w;
}

}  // namespace sb

SB_REGISTER_WORKLOAD(sb::subset_mean_workload);
