#pragma once
/// @file job_plan.hpp
/// What the launcher asks one MPI job to do (a JSON file passed to scalebench-rank), and the
/// stream of JSON-lines records the scheduler writes back while it runs.
///
/// Stream records (one JSON object per line, each flushed; case records also fsync'ed):
///   {"type":"start", "system":{...}, "startup":{...}, "ranks":N, "workers":W, "nodes":K}
///   {"type":"progress", "case":k, "cases":N, "id":..., "repeat":r, "repeats":R, "warmup":w}
///   {"type":"case", ...case record, see docs/architecture.md...}
///   {"type":"end", "status":"ok"}
/// An A/B side's job also writes "ab_ready" and "ab_turn" records (ab_protocol.hpp).

#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/workload.hpp"

namespace sb {

struct JobPlan {
  std::vector<CaseSpec> cases;
  std::string stream_path;            ///< where the scheduler appends records
  double case_timeout_s = 0;          ///< 0: none
  bool measure_ceilings = true;       ///< STREAM triad / DGEMM (and GPU copy / GEMM) at start-up
  std::string stop_path;              ///< when this file exists, stop before the next case
  bool trace = false;                 ///< `run --trace`: workloads print their step timelines
  std::string lifeline_path;          ///< the launcher's lifeline (lifeline.hpp); empty: none
  bool fresh_ceilings = false;        ///< measure the ceilings anew (not from the cache)
  double telemetry_period_s = 0.02;   ///< between readings while a repeat runs; < 0: no telemetry
  double telemetry_gpu_min_s = 0.01;  ///< the least time between two GPU readings
  double telemetry_counters_s = 1.0;  ///< the least time between two GPU error-counter readings
  bool keep_throttled = false;        ///< `run --keep-throttled`: throttled repeats count
  /// Workload plugins (plugins.hpp) every rank loads, in this order, before it plans:
  /// absolute paths the launcher has loaded and checked.
  std::vector<std::string> plugins;
  /// An A/B run's side ("baseline" or "current", ab_protocol.hpp): the scheduler measures only
  /// in the turns the launcher hands it. Empty: an ordinary job.
  std::string ab_side;
  /// An A/B run's mark, the same in both sides' plans and in their ranks' environment as
  /// SCALEBENCH_AB_RUN (ab_protocol.hpp): the other side's ranks on a GPU are not other users.
  std::string ab_run;

  [[nodiscard]] nlohmann::json to_json() const;
  static JobPlan from_json(const nlohmann::json& j);
};

[[nodiscard]] nlohmann::json case_spec_to_json(const CaseSpec& spec);
[[nodiscard]] CaseSpec case_spec_from_json(const nlohmann::json& j);

/// Appends records to the stream file; each line is flushed, `durable` ones fsync'ed.
class StreamWriter {
 public:
  explicit StreamWriter(const std::string& path);
  ~StreamWriter();
  StreamWriter(const StreamWriter&) = delete;
  StreamWriter& operator=(const StreamWriter&) = delete;
  void write(const nlohmann::json& record, bool durable);
  /// fsync's every record written so far: records written as one batch (durable = false) made
  /// durable at once.
  void sync();
  /// Seconds spent in write() so far (run --trace shows a repeat's share).
  [[nodiscard]] double seconds_writing() const { return seconds_writing_; }

 private:
  std::FILE* f_ = nullptr;
  double seconds_writing_ = 0;
};

}  // namespace sb
