#pragma once
/// @file case_record.hpp
/// (runtime internals) The parts of a case record (docs/architecture.md, "Case record") that
/// every way of running a case shares: its head, validation with the cross-check against the
/// first case of the same workload and parameters, work and metrics with throttled repeats
/// left out of the median.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/repeat_rule.hpp"
#include "scalebench/workload.hpp"

namespace sb::detail {

/// The record's identity before anything runs (status ok, no repeats).
[[nodiscard]] nlohmann::json record_head(const CaseSpec& spec);

/// The first case of each workload and parameters is the reference the later ones are
/// cross-checked against (single-cpu when it runs, docs/specification.md §3).
class CrossCheckReferences {
 public:
  /// The cross-checks of `fp` against the reference ("cross:" names, "(vs PATH)" details); none
  /// when this is the first case of its kind, which then becomes the reference under `label`.
  std::vector<Check> check(const CaseSpec& spec, const Workload& wl, const Fingerprint& fp,
                           const std::string& label);

 private:
  std::map<std::string, std::pair<std::string, Fingerprint>> refs_;
};

/// A case's finished tasks while its repeats run: plain columns, made JSON once for the record
/// (a JSON value per field and task cost the scheduler more than the rest of its dispatch:
/// bench/bench_scheduler.cpp).
struct TaskEvents {
  std::vector<std::int32_t> repeat, worker;
  std::vector<std::int64_t> task, bytes;
  std::vector<Phase> phase;
  std::vector<double> start, end;
  /// Appends a task of timed repeat `repeat` that case rank `worker` finished.
  void add(int repeat, int worker, const TaskOutcome& o);
  /// rec["task_events"]: columns of equal length (docs/report-schema.md).
  [[nodiscard]] nlohmann::json to_json() const;
};

/// rec["repeat_stop"]: why the case stopped taking repeats under `rule`, after `repeats`.
[[nodiscard]] nlohmann::json repeat_stop_record(const RepeatRule& rule, const RepeatStop& stop,
                                                std::size_t repeats);

/// rec["validation"] from `checks`; a failed check makes the case failed with its message.
void set_validation(nlohmann::json& rec, const std::vector<Check>& checks);

/// rec["work"] and rec["metrics"]. The medians use the repeats not left out: by default those
/// marked throttled (`throttled[i]`) or host-stalled (rec["repeats"][i]["host_stall"], marked
/// `host_stalled` there: host_stall.hpp), unless `keep_throttled` or every repeat is marked.
/// metrics also says `throttled_repeats`, `host_stalled_repeats`, `left_out_repeats` and
/// `median_runtime_s` (the repeats' `runtime`, when rec["repeats"] has them).
void set_work_and_metrics(nlohmann::json& rec, const Work& work, const std::vector<double>& totals,
                          const std::vector<double>& computes, const std::vector<bool>& throttled,
                          bool keep_throttled);

}  // namespace sb::detail
