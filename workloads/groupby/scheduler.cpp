// The scheduler side of a groupby case (scheduler.hpp).
#include "groupby/scheduler.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "groupby/config.hpp"
#include "groupby/protocol.hpp"
#include "groupby/validation.hpp"
#include "groupby/work_floor.hpp"
#include "scalebench/error.hpp"

namespace sb::groupby {
namespace {

class GroupbyScheduler final : public SchedulerCase {
 public:
  explicit GroupbyScheduler(const CaseSpec& spec)
      : cfg_(parse(spec.params)), workers_(spec.workers < 1 ? 1 : spec.workers) {}

  [[nodiscard]] std::int64_t num_tasks() const override { return cfg_.num_tasks(); }

  void begin_repeat() override {
    task_rows_.assign(static_cast<std::size_t>(cfg_.num_tasks()), 0.0);
    parts_.assign(static_cast<std::size_t>(workers_), {});
  }

  void on_task(const TaskOutcome& o) override {
    if (o.task >= 0 && o.task < cfg_.num_tasks() && !o.partial.empty())
      task_rows_[static_cast<std::size_t>(o.task)] = o.partial[0];
  }

  void on_worker_done(int rank, const std::vector<double>& partial) override {
    if (rank >= static_cast<int>(parts_.size())) parts_.resize(static_cast<std::size_t>(rank) + 1);
    parts_[static_cast<std::size_t>(rank)] = partial;
  }

  nlohmann::json end_repeat() override {
    const QueryDef& q = cfg_.def;
    const int w = record_width(q.fields);
    Summary sum;
    double shuffle = 0, send_total = 0, seconds = 0;
    std::vector<double> records;
    for (const auto& p : parts_) {
      if (p.size() < kHeaderWords) continue;
      sum.groups += p[kGroups];
      sum.sum_count += p[kSumCount];
      sum.sum_x += p[kSumSumX];
      sum.sum_y += p[kSumSumY];
      sum.sum_min_x += p[kSumMinX];
      sum.sum_max_x += p[kSumMaxX];
      shuffle += p[kShuffleBytes];
      send_total += p[kSendBytes];
      seconds = std::max(seconds, p[kCommSeconds]);
      const auto n = static_cast<std::size_t>(p[kRecords]);
      if (p.size() == kHeaderWords + n * w)
        records.insert(records.end(), p.begin() + kHeaderWords, p.end());
    }
    last_ = sum;
    double rows = 0;
    for (double r : task_rows_) rows += r;

    nlohmann::json j;
    j["query"] = std::string(to_string(q.query));
    j["rows"] = rows;
    j["groups"] = sum.groups;
    j["sum_count"] = sum.sum_count;
    j["sum_x"] = sum.sum_x;
    if (q.fields & kSumY) j["sum_y"] = sum.sum_y;
    if (q.fields & kMinX) j["sum_min_x"] = sum.sum_min_x;
    if (q.fields & kMaxX) j["sum_max_x"] = sum.sum_max_x;
    j["mean_x"] = sum.sum_count > 0 ? sum.sum_x / sum.sum_count : 0.0;
    if (!records.empty()) {
      // Low cardinality: the whole (small) result, with labels.
      nlohmann::json labels = nlohmann::json::array();
      std::vector<nlohmann::json> cols(q.outputs.size(), nlohmann::json::array());
      for (std::size_t i = 0; i + w <= records.size(); i += w) {
        std::int64_t key = 0;
        GroupState s;
        unpack_report_record(&records[i], q.fields, key, s);
        if (q.key_column == kColName && key >= 0 && key < kNumNames) {
          labels.push_back(std::string(kNames[static_cast<std::size_t>(key)]));
        } else {
          labels.push_back(key);
        }
        for (std::size_t c = 0; c < q.outputs.size(); ++c)
          cols[c].push_back(aggregate(s, q.outputs[c].agg, q.outputs[c].column));
      }
      j["table"][q.key_name] = labels;
      for (std::size_t c = 0; c < q.outputs.size(); ++c) j["table"][q.outputs[c].name] = cols[c];
    }
    if (workers_ > 1) {
      // nccl-tests' convention for alltoall: algbw = per-rank send size / time,
      // busbw = algbw * (n - 1) / n.
      const double n = workers_;
      const double algbw = seconds > 0 ? (send_total / n) / seconds : 0.0;
      nlohmann::json s;
      s["kind"] = q.high_cardinality ? "alltoall" : "reduce";
      s["bytes"] = shuffle;
      s["send_bytes"] = send_total;
      s["seconds"] = seconds;
      s["algbw_gbps"] = algbw / 1e9;
      s["busbw_gbps"] = q.high_cardinality ? algbw * (n - 1) / n / 1e9 : algbw / 1e9;
      j["shuffle"] = s;
    }
    fp_.values = nlohmann::json::object();
    fp_.values["rows"] = static_cast<double>(cfg_.rows);
    fp_.values["fields"] = q.fields;
    fp_.values["groups"] = sum.groups;
    fp_.values["sum_count"] = sum.sum_count;
    fp_.values["sum_x"] = sum.sum_x;
    if (q.fields & kSumY) fp_.values["sum_y"] = sum.sum_y;
    return j;
  }

  std::vector<Check> validate(const std::vector<std::vector<double>>& worker_parts) override {
    fp_.data.clear();
    return check_parts(cfg_, last_, worker_parts, &fp_.data);
  }

  [[nodiscard]] Fingerprint fingerprint() const override { return fp_; }

  [[nodiscard]] Work work() const override { return work_floor(cfg_); }

 private:
  Config cfg_;
  int workers_;
  std::vector<double> task_rows_;
  std::vector<std::vector<double>> parts_;
  Summary last_;
  Fingerprint fp_;
};

}  // namespace

std::unique_ptr<SchedulerCase> make_scheduler(const CaseSpec& spec) {
  return std::make_unique<GroupbyScheduler>(spec);
}

}  // namespace sb::groupby
