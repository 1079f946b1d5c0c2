// The scheduler side of the pair matrix (scheduler.hpp): a link's bandwidth is pair_bytes over
// the longer of the sender's and the receiver's time per transfer (a CUDA IPC copy is timed by
// its sender alone), its latency the sender's; the case's figures are the medians over the
// timed repeats, and each link is compared with the others of its kind (link_health.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "comms/link_health.hpp"
#include "comms/pair_partial.hpp"
#include "comms/scheduler.hpp"
#include "scalebench/stats.hpp"

namespace sb::comms {
namespace {

/// Worker names: "GPU 3" / "worker 2" on one node; "node7 GPU 3", "node7" (one worker per
/// node) or "node7 worker 2" across nodes.
std::vector<std::string> worker_labels(const std::vector<Identity>& ids) {
  std::set<std::string> hosts;
  std::map<std::string, int> per_host;
  for (const auto& id : ids) {
    hosts.insert(id.host);
    ++per_host[id.host];
  }
  std::vector<std::string> out;
  for (std::size_t r = 0; r < ids.size(); ++r) {
    const Identity& id = ids[r];
    const std::string local =
        id.gpu >= 0 ? fmt::format("GPU {}", id.gpu) : fmt::format("worker {}", r);
    if (hosts.size() <= 1) {
      out.push_back(local);
    } else if (id.gpu < 0 && per_host[id.host] == 1) {
      out.push_back(id.host);
    } else {
      out.push_back(id.host + " " + local);
    }
  }
  return out;
}

class PairsScheduler final : public SchedulerCase {
 public:
  PairsScheduler(const Config& cfg, int workers, int warmup)
      : cfg_(cfg),
        warmup_(warmup),
        n_(std::max(1, workers)),
        bytes_(static_cast<double>(cfg.pair_bytes / 4 * 4)),
        bw_(static_cast<std::size_t>(n_ * n_)),
        lat_(static_cast<std::size_t>(n_ * n_)) {}

  [[nodiscard]] std::int64_t num_tasks() const override { return 0; }
  void begin_repeat() override { parts_.assign(static_cast<std::size_t>(n_), {}); }
  void on_task(const TaskOutcome& /*outcome*/) override {}
  void on_worker_done(int rank, const std::vector<double>& partial) override {
    if (rank >= 0 && rank < n_) parts_[static_cast<std::size_t>(rank)] = partial;
  }

  nlohmann::json end_repeat() override {
    ++repeats_;
    std::vector<PairReport> reports;
    for (const auto& p : parts_) {
      auto r = decode_pairs(p, n_);
      if (!r) {
        ++missing_reports_;
        return {{"workers", n_}, {"complete", false}};
      }
      reports.push_back(std::move(*r));
    }
    if (ids_.empty()) {
      for (const auto& r : reports) ids_.push_back(r.id);
      labels_ = worker_labels(ids_);
      links_.resize(static_cast<std::size_t>(n_ * n_));
      transports_.resize(links_.size());
      for (int i = 0; i < n_; ++i)
        for (int j = 0; j < n_; ++j) {
          links_[at(i, j)] =
              reports[static_cast<std::size_t>(i)].rows[static_cast<std::size_t>(j)].link;
          transports_[at(i, j)] =
              reports[static_cast<std::size_t>(i)].rows[static_cast<std::size_t>(j)].transport;
        }
    }
    nlohmann::json bw = nlohmann::json::array(), lat = nlohmann::json::array();
    for (int i = 0; i < n_; ++i) {
      nlohmann::json bw_row = nlohmann::json::array(), lat_row = nlohmann::json::array();
      for (int j = 0; j < n_; ++j) {
        double b = 0, l = 0;
        if (i != j) {
          const PairRow& s = reports[static_cast<std::size_t>(i)].rows[static_cast<std::size_t>(j)];
          const PairRow& r = reports[static_cast<std::size_t>(j)].rows[static_cast<std::size_t>(i)];
          const double t = std::max(s.send_s, r.recv_s);
          b = t > 0 ? bytes_ / t : 0.0;
          l = s.latency_s;
          wrong_ += static_cast<std::int64_t>(r.recv_wrong);
          if (r.recv_wrong > 0 && first_wrong_.empty())
            first_wrong_ = fmt::format("first: {} wrong elements from {} to {}", r.recv_wrong,
                                       labels_[static_cast<std::size_t>(i)],
                                       labels_[static_cast<std::size_t>(j)]);
          if (b > 0) ++measured_;
          if (repeats_ > warmup_ && b > 0) {
            bw_[at(i, j)].push_back(b);
            lat_[at(i, j)].push_back(l);
          }
        }
        bw_row.push_back(b / 1e9);
        lat_row.push_back(l * 1e6);
      }
      bw.push_back(std::move(bw_row));
      lat.push_back(std::move(lat_row));
    }
    return {{"workers", n_},    {"bytes", bytes_},      {"labels", labels_},
            {"complete", true}, {"bandwidth_gbps", bw}, {"latency_us", lat}};
  }

  std::vector<Check> validate(const std::vector<std::vector<double>>& /*parts*/) override {
    std::vector<Check> checks;
    Check w;
    w.name = "wrong_elements";
    w.value = static_cast<double>(wrong_);
    w.limit = 0;
    w.pass = wrong_ == 0 && missing_reports_ == 0;
    w.detail = fmt::format(
        "every bandwidth transfer's receive buffer equals the sender's Philox payload, in each "
        "of {} repeats{}",
        repeats_, first_wrong_.empty() ? "" : "; " + first_wrong_);
    checks.push_back(w);
    Check p;
    p.name = "pairs";
    p.value = static_cast<double>(measured_);
    p.limit = static_cast<double>(n_) * (n_ - 1) * repeats_;
    p.pass = measured_ == static_cast<std::int64_t>(p.limit) && n_ > 1;
    p.detail = fmt::format("all {} ordered pairs of the {} workers measured in every repeat",
                           n_ * (n_ - 1), n_);
    checks.push_back(p);
    return checks;
  }

  [[nodiscard]] Fingerprint fingerprint() const override {
    Fingerprint fp;
    fp.values = {{"op", "pairs"}, {"wrong", static_cast<double>(wrong_)}};
    return fp;
  }

  [[nodiscard]] Work work() const override {
    Work w;  // nothing counted: the figures are per link (metrics())
    w.unit = "bytes";
    return w;
  }

  [[nodiscard]] nlohmann::json metrics() const override {
    nlohmann::json m = nlohmann::json::object();
    if (ids_.empty()) return m;
    std::vector<LinkFigure> figures;
    nlohmann::json table = nlohmann::json::array();
    nlohmann::json bw = nlohmann::json::array(), lat = nlohmann::json::array();
    for (int i = 0; i < n_; ++i) {
      nlohmann::json bw_row = nlohmann::json::array(), lat_row = nlohmann::json::array();
      for (int j = 0; j < n_; ++j) {
        const auto& b = bw_[at(i, j)];
        const double mb = b.empty() ? 0.0 : median(b);
        const double ml = b.empty() ? 0.0 : median(lat_[at(i, j)]);
        bw_row.push_back(mb / 1e9);
        lat_row.push_back(ml * 1e6);
        if (i == j || b.empty()) continue;
        const Link& link = links_[at(i, j)];
        figures.push_back({labels_[static_cast<std::size_t>(i)],
                           labels_[static_cast<std::size_t>(j)], link.kind, mb, ml});
        const Identity& from = ids_[static_cast<std::size_t>(i)];
        const Identity& to = ids_[static_cast<std::size_t>(j)];
        table.push_back({{"src", i},
                         {"dst", j},
                         {"src_name", labels_[static_cast<std::size_t>(i)]},
                         {"dst_name", labels_[static_cast<std::size_t>(j)]},
                         {"src_host", from.host},
                         {"src_gpu", from.gpu},
                         {"dst_host", to.host},
                         {"dst_gpu", to.gpu},
                         {"kind", std::string(link_kind_name(link.kind))},
                         {"topology", link.detail},
                         {"transport", std::string(transport_name(transports_[at(i, j)]))},
                         {"bandwidth_gbps", mb / 1e9},
                         {"latency_us", ml * 1e6}});
      }
      bw.push_back(std::move(bw_row));
      lat.push_back(std::move(lat_row));
    }
    if (figures.empty()) return m;
    // Each link against its peers of the same kind, also as the contract's `verdicts` (one row
    // of the report's verdict table per link: SchedulerCase::metrics(), workload.hpp).
    const std::vector<LinkHealth> health = judge_links(figures);
    nlohmann::json verdicts = nlohmann::json::array();
    for (std::size_t k = 0; k < health.size(); ++k) {
      table[k]["slow"] = health[k].slow;
      table[k]["peers"] = health[k].peers;
      table[k]["peer_bandwidth_gbps"] = health[k].peer_bandwidth / 1e9;
      table[k]["health"] = health[k].reason;
      nlohmann::json v = {
          {"subject", figures[k].src + " -> " + figures[k].dst},
          {"host", table[k]["src_host"]},
          {"device", table[k]["src_gpu"]},
          {"kind", table[k]["kind"]},
          {"value", figures[k].bandwidth},
          {"unit", "B/s"},
          {"verdict", health[k].slow ? "slow" : "ok"},
          {"expected", health[k].peer_bandwidth > 0 ? health[k].peer_bandwidth
                                                    : std::numeric_limits<double>::quiet_NaN()},
          {"peers", health[k].peers},
          {"reason", health[k].reason}};
      verdicts.push_back(std::move(v));
    }
    const auto slowest =
        std::min_element(figures.begin(), figures.end(),
                         [](const auto& a, const auto& b) { return a.bandwidth < b.bandwidth; });
    std::vector<double> all;
    for (const auto& f : figures) all.push_back(f.bandwidth);
    m["labels"] = labels_;
    m["bandwidth_gbps"] = bw;
    m["latency_us"] = lat;
    m["links"] = table;
    m["verdicts"] = verdicts;
    m["median_link_gbps"] = median(all) / 1e9;
    m["slowest_link_gbps"] = slowest->bandwidth / 1e9;
    m["slowest_link"] = slowest->src + " -> " + slowest->dst;
    m["notes"] = slow_link_notes(figures);
    m["throughput"] = slowest->bandwidth;
    m["throughput_unit"] = "B/s slowest link";
    return m;
  }

 private:
  [[nodiscard]] std::size_t at(int i, int j) const { return static_cast<std::size_t>(i * n_ + j); }

  Config cfg_;
  int warmup_;
  int n_;
  double bytes_;  ///< bytes of one bandwidth transfer (whole float32 elements)
  std::vector<std::vector<double>> parts_;
  std::vector<Identity> ids_;
  std::vector<std::string> labels_;
  std::vector<Link> links_;               ///< [i * n + j]: from i to j
  std::vector<Transport> transports_;     ///< [i * n + j]
  std::vector<std::vector<double>> bw_;   ///< [i * n + j]: B/s of each timed repeat
  std::vector<std::vector<double>> lat_;  ///< [i * n + j]: seconds of each timed repeat
  int repeats_ = 0;
  std::int64_t wrong_ = 0;
  std::int64_t measured_ = 0;
  int missing_reports_ = 0;
  std::string first_wrong_;
};

}  // namespace

std::unique_ptr<SchedulerCase> make_pairs_scheduler(const Config& cfg, int workers, int warmup) {
  return std::make_unique<PairsScheduler>(cfg, workers, warmup);
}

}  // namespace sb::comms
