#include "svd/scheduler.hpp"

#include <lapacke.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include <fmt/format.h>

#include "scalebench/error.hpp"
#include "svd/config.hpp"
#include "svd/lapack_check.hpp"
#include "svd/routines.hpp"
#include "svd/svd_data.hpp"

namespace sb::svd {

namespace {

constexpr double kResidualLimit = 1e-12;
constexpr double kOrthogonalityLimit = 1e-10;
constexpr double kSigmaLimit = 1e-10;

/// max_i |a_i - b_i| / max(a), or infinity when the sizes differ or nothing is there.
double sigma_distance(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.empty() || a.size() != b.size()) return INFINITY;
  const double top = *std::max_element(a.begin(), a.end());
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) d = std::max(d, std::fabs(a[i] - b[i]));
  return top > 0 ? d / top : d;
}

Check make_check(std::string name, double value, double limit, std::string detail) {
  Check c;
  c.name = std::move(name);
  c.value = value;
  c.limit = limit;
  c.pass = std::isfinite(value) && value <= limit;
  c.detail = std::move(detail);
  return c;
}

class Scheduler final : public SchedulerCase {
 public:
  explicit Scheduler(const CaseSpec& spec) : spec_(spec), cfg_(parse(spec.params)) {}

  [[nodiscard]] std::int64_t num_tasks() const override { return cfg_.blocks(); }

  void begin_repeat() override {
    sigma_.clear();
    roots_ = 0;
    local_routines_.clear();
    svd_routine_.clear();
    seen_.assign(static_cast<std::size_t>(cfg_.blocks()), 0);
  }

  void on_task(const TaskOutcome& outcome) override {
    if (outcome.task >= 0 && outcome.task < cfg_.blocks())
      ++seen_[static_cast<std::size_t>(outcome.task)];
  }

  void on_worker_done(int rank, const std::vector<double>& partial) override {
    FinishPartial p = decode_finish(partial);
    local_routines_[rank] = std::move(p.local_routine);
    if (p.sigma.empty()) return;
    ++roots_;
    sigma_ = std::move(p.sigma);
    svd_routine_ = std::move(p.svd_routine);
  }

  nlohmann::json end_repeat() override {
    if (roots_ != 1 || sigma_.size() != static_cast<std::size_t>(cfg_.n))
      throw Error(fmt::format(
          "svd: expected {} singular values from the tree root, got {} partial(s) of size {}",
          cfg_.n, roots_, sigma_.size()));
    tasks_ok_ = std::all_of(seen_.begin(), seen_.end(), [](int c) { return c == 1; });
    last_sigma_ = sigma_;
    nlohmann::json j = summary();
    j["local_routine"] = combine_local_routines(local_routines_);
    j["svd_routine"] = svd_routine_;
    return j;
  }

  std::vector<Check> validate(const std::vector<std::vector<double>>& parts) override {
    std::vector<Check> checks;
    const std::vector<double>* root = nullptr;
    for (const auto& p : parts)
      if (p.size() == 3) root = &p;
    if (root == nullptr) {
      checks.push_back(make_check("residual", INFINITY, kResidualLimit,
                                  "no validation figures arrived from the tree root"));
      return checks;
    }
    residual_ = (*root)[1] > 0 ? std::sqrt((*root)[0] / (*root)[1]) : INFINITY;
    orthogonality_ = (*root)[2];
    checks.push_back(
        make_check("residual", residual_, kResidualLimit, "||A - U S V^T||_F / ||A||_F <= 1e-12"));
    checks.push_back(make_check("orthogonality", orthogonality_, kOrthogonalityLimit,
                                "||U^T U - I||_F <= 1e-10"));
    checks.push_back(make_check("tasks", tasks_ok_ ? 0.0 : 1.0, 0.0,
                                "every row block factored exactly once in the last repeat"));
    if (cfg_.reference_check()) {
      const auto ref = reference_singular_values(spec_);
      checks.push_back(make_check("reference", sigma_distance(ref, last_sigma_), kSigmaLimit,
                                  "max_i |s_i - s_dgesvd_i| / s_max <= 1e-10 (LAPACK dgesvd of "
                                  "the whole matrix)"));
    }
    return checks;
  }

  [[nodiscard]] Fingerprint fingerprint() const override {
    Fingerprint f;
    f.values = summary();
    f.values["residual"] = residual_;
    f.values["orthogonality"] = orthogonality_;
    f.data = last_sigma_;
    return f;
  }

  [[nodiscard]] Work work() const override {
    Work w;
    w.units = cfg_.flops();  // nominal: every path of the case counts the same work
    w.unit = "flop";
    w.flops = cfg_.algorithm_flops(device_of(spec_.path));
    // A written and read by the block QRs, U written: the least traffic of a repeat.
    w.bytes = 3.0 * 8.0 * static_cast<double>(cfg_.m) * static_cast<double>(cfg_.n);
    w.bound = Work::Bound::flops;
    return w;
  }

 private:
  [[nodiscard]] nlohmann::json summary() const {
    nlohmann::json j;
    const double smax = last_sigma_.empty() ? 0.0 : last_sigma_.front();
    const double smin = last_sigma_.empty() ? 0.0 : last_sigma_.back();
    j["sigma_max"] = smax;
    j["sigma_min"] = smin;
    j["condition"] = smin > 0 ? smax / smin : INFINITY;
    j["m"] = cfg_.m;
    j["n"] = cfg_.n;
    j["blocks"] = cfg_.blocks();
    return j;
  }

  CaseSpec spec_;
  Config cfg_;
  std::vector<double> sigma_, last_sigma_;
  std::vector<int> seen_;
  std::map<int, std::string> local_routines_;  ///< by case rank, this repeat
  std::string svd_routine_;                    ///< the root's, this repeat
  int roots_ = 0;
  bool tasks_ok_ = false;
  double residual_ = NAN;
  double orthogonality_ = NAN;
};

}  // namespace

std::unique_ptr<SchedulerCase> make_scheduler(const CaseSpec& spec) {
  return std::make_unique<Scheduler>(spec);
}

std::vector<Check> cross_check(const Fingerprint& reference, const Fingerprint& other) {
  return {make_check("singular_values", sigma_distance(reference.data, other.data), kSigmaLimit,
                     "max_i |s_i - s_ref_i| / s_max <= 1e-10 against the reference path")};
}

std::vector<double> reference_singular_values(const CaseSpec& spec) {
  const Config cfg = parse(spec.params);
  const auto scales = column_scales(cfg);
  std::vector<double> a(static_cast<std::size_t>(cfg.m * cfg.n));
  generate_rows(cfg, scales.data(), 0, cfg.m, a.data(), cfg.m);
  std::vector<double> s(static_cast<std::size_t>(cfg.n));
  std::vector<double> superb(static_cast<std::size_t>(cfg.n));
  SB_LAPACK_CHECK(LAPACKE_dgesvd(
      LAPACK_COL_MAJOR, 'N', 'N', static_cast<lapack_int>(cfg.m), static_cast<lapack_int>(cfg.n),
      a.data(), static_cast<lapack_int>(cfg.m), s.data(), nullptr, 1, nullptr, 1, superb.data()));
  return s;
}

}  // namespace sb::svd
