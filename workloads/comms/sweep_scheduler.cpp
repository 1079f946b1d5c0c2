// The scheduler side of a collective's sweep (scheduler.hpp): per size, the time is the mean
// over the workers of each one's time per call (nccl-tests averages its ranks' times), the
// bandwidths follow from it (sweep.hpp), and every worker's wrong elements are added up.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "comms/scheduler.hpp"
#include "comms/sweep.hpp"
#include "scalebench/stats.hpp"

namespace sb::comms {
namespace {

class SweepScheduler final : public SchedulerCase {
 public:
  SweepScheduler(const Config& cfg, int workers, int warmup)
      : cfg_(cfg),
        warmup_(warmup),
        n_(std::max(1, workers)),
        coll_(*cfg.collective),
        sizes_(sweep_sizes(cfg, n_)),
        times_(sizes_.size()) {}

  [[nodiscard]] std::int64_t num_tasks() const override { return 0; }
  void begin_repeat() override { parts_.assign(static_cast<std::size_t>(n_), {}); }
  void on_task(const TaskOutcome& /*outcome*/) override {}
  void on_worker_done(int rank, const std::vector<double>& partial) override {
    if (rank >= 0 && rank < n_) parts_[static_cast<std::size_t>(rank)] = partial;
  }

  nlohmann::json end_repeat() override {
    ++repeats_;
    nlohmann::json rows = nlohmann::json::array();
    std::int64_t wrong = 0;
    ceiling_ = -1;
    nvlinks_ = -1;
    for (std::size_t w = 0; w < parts_.size(); ++w) {
      const auto& p = parts_[w];
      if (p.size() < kSweepHeaderWords) continue;
      ceiling_ = ceiling_ < 0 ? p[0] : std::min(ceiling_, p[0]);
      nvlinks_ = nvlinks_ < 0 ? p[1] : std::min(nvlinks_, p[1]);
    }
    for (std::size_t k = 0; k < sizes_.size(); ++k) {
      const Layout& l = sizes_[k].layout;
      double sum = 0;
      int reported = 0;
      std::int64_t size_wrong = 0;
      for (std::size_t w = 0; w < parts_.size(); ++w) {
        const auto& p = parts_[w];
        const std::size_t at = kSweepHeaderWords + k * kSizeWords;
        if (p.size() < at + kSizeWords || p[at] != static_cast<double>(l.bytes)) continue;
        ++reported;
        sum += p[at + 1];
        const auto bad = static_cast<std::int64_t>(p[at + 2]);
        size_wrong += bad;
        if (bad > 0 && first_wrong_.empty())
          first_wrong_ = fmt::format("first: {} wrong of {} B on worker {}, element {}", bad,
                                     l.bytes, w, static_cast<std::int64_t>(p[at + 3]));
      }
      if (reported == n_) ++complete_sizes_;
      const double t = reported > 0 ? sum / reported : 0.0;
      if (reported == n_ && repeats_ > warmup_) times_[k].push_back(t);
      const Bandwidth bw = bandwidth(coll_, l, t, n_);
      rows.push_back({{"bytes", l.bytes},
                      {"count", l.count},
                      {"time_s", t},
                      {"algbw_gbps", bw.algbw / 1e9},
                      {"busbw_gbps", bw.busbw / 1e9},
                      {"wrong", size_wrong}});
      wrong += size_wrong;
    }
    wrong_ += wrong;
    nlohmann::json j = {
        {"op", std::string(coll_.name)}, {"ranks", n_}, {"sizes", rows}, {"wrong", wrong}};
    if (!rows.empty()) {
      j["bytes"] = rows.back()["bytes"];
      j["algbw_gbps"] = rows.back()["algbw_gbps"];
      j["busbw_gbps"] = rows.back()["busbw_gbps"];
    }
    return j;
  }

  std::vector<Check> validate(const std::vector<std::vector<double>>& /*parts*/) override {
    std::vector<Check> checks;
    Check w;
    w.name = "wrong_elements";
    w.value = static_cast<double>(wrong_);
    w.limit = 0;
    w.pass = wrong_ == 0;
    w.detail = fmt::format(
        "every output element of every size equals the sum or copy of the Philox payloads it "
        "comes from (nccl-tests -c), in each of {} repeats{}",
        repeats_, first_wrong_.empty() ? "" : "; " + first_wrong_);
    checks.push_back(w);
    Check s;
    s.name = "sizes";
    const auto want = static_cast<double>(sizes_.size()) * repeats_;
    s.value = static_cast<double>(complete_sizes_);
    s.limit = want;
    s.pass = complete_sizes_ == static_cast<std::int64_t>(want) && !sizes_.empty();
    s.detail = fmt::format("each of the {} sizes measured by all {} workers in every repeat",
                           sizes_.size(), n_);
    checks.push_back(s);
    return checks;
  }

  [[nodiscard]] Fingerprint fingerprint() const override {
    Fingerprint fp;
    fp.values = {{"op", std::string(coll_.name)},
                 {"sizes", static_cast<double>(sizes_.size())},
                 {"wrong", static_cast<double>(wrong_)}};
    return fp;
  }

  [[nodiscard]] Work work() const override {
    Work w;  // nothing counted: a sweep's figures are per size (metrics())
    w.unit = "bytes";
    return w;
  }

  [[nodiscard]] nlohmann::json metrics() const override {
    nlohmann::json rows = nlohmann::json::array();
    Bandwidth last, peak;
    double first_time = NAN;
    for (std::size_t k = 0; k < sizes_.size(); ++k) {
      if (times_[k].empty()) continue;
      const double t = median(times_[k]);
      const Bandwidth bw = bandwidth(coll_, sizes_[k].layout, t, n_);
      if (std::isnan(first_time)) first_time = t;
      last = bw;
      peak.busbw = std::max(peak.busbw, bw.busbw);
      peak.algbw = std::max(peak.algbw, bw.algbw);
      rows.push_back({{"bytes", sizes_[k].layout.bytes},
                      {"time_s", t},
                      {"algbw_gbps", bw.algbw / 1e9},
                      {"busbw_gbps", bw.busbw / 1e9}});
    }
    nlohmann::json m = nlohmann::json::object();
    if (rows.empty()) return m;
    m["sizes"] = rows;
    m["busbw_gbps"] = last.busbw / 1e9;
    m["algbw_gbps"] = last.algbw / 1e9;
    m["peak_busbw_gbps"] = peak.busbw / 1e9;
    m["smallest_time_s"] = first_time;
    m["throughput"] = last.busbw;
    m["throughput_unit"] = "B/s busbw";
    if (ceiling_ > 0) {
      // The nominal rate of the slowest link a worker has to the others (NVLink only).
      m["efficiency"] = last.busbw / ceiling_;
      m["ceiling"] = nvlinks_ > 0 ? fmt::format("NVLink NV{}", static_cast<int>(nvlinks_))
                                  : std::string("link");
      m["ceiling_value"] = ceiling_;
      m["ceiling_unit"] = "B/s";
    }
    return m;
  }

 private:
  Config cfg_;
  int warmup_;  ///< the first end_repeat calls are warm-ups: checked, not timed
  int n_;
  const Collective& coll_;
  std::vector<SweepSize> sizes_;
  std::vector<std::vector<double>> parts_;
  std::vector<std::vector<double>> times_;  ///< per size: the mean time of each full repeat
  int repeats_ = 0;
  std::int64_t wrong_ = 0;
  std::int64_t complete_sizes_ = 0;
  std::string first_wrong_;
  double ceiling_ = -1;  ///< min over workers of their slowest link's nominal rate (0: unknown)
  double nvlinks_ = -1;
};

}  // namespace

std::unique_ptr<SchedulerCase> make_sweep_scheduler(const Config& cfg, int workers, int warmup) {
  return std::make_unique<SweepScheduler>(cfg, workers, warmup);
}

}  // namespace sb::comms
