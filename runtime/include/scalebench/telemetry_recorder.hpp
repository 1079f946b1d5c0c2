#pragma once
/// @file telemetry_recorder.hpp
/// Samples a worker's telemetry sources on a thread of its own while the timed repeats run:
/// one reading when a repeat begins, one when it ends (so that sub-millisecond repeats get
/// readings too), and one every `period_s` between them. Marking a repeat costs the worker's
/// thread a lock and a wake-up only; the readings happen on the recorder's thread, and the
/// case's telemetry travels to the scheduler after the timed repeats (message kTagTelemetry).
///
/// The period: 20 ms gives a 100 ms repeat five readings while the sampling thread's share of
/// one core stays at the reading's cost over 20 ms (bench/bench_telemetry.cpp; figures in
/// docs/performance.md, "Node acceptance").

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/repeat_telemetry.hpp"
#include "scalebench/telemetry_source.hpp"

namespace sb {

inline constexpr double kDefaultTelemetryPeriodS = 0.02;

class TelemetryRecorder {
 public:
  /// `period_s` <= 0: readings at the marks only.
  TelemetryRecorder(std::vector<std::unique_ptr<TelemetrySource>> sources, double period_s);
  ~TelemetryRecorder();
  TelemetryRecorder(const TelemetryRecorder&) = delete;
  TelemetryRecorder& operator=(const TelemetryRecorder&) = delete;

  /// Forgets the readings of an earlier case; `gpu`: the GPU sources take part.
  void begin_case(bool gpu);
  /// Timed repeat `repeat` (0-based) begins / ends: a reading is taken at once on the
  /// recorder's thread. Never blocks on a reading.
  void begin_repeat(int repeat) noexcept;
  void end_repeat(int repeat) noexcept;
  /// Waits for the readings the marks asked for and returns the case's telemetry:
  ///   {"period_s", "sources": {describe() of each}, "repeats": [to_json(RepeatTelemetry)..],
  ///    "series": {"t": [..], "repeat": [..], "cpu_mhz": [..], "gpu_sm_mhz": [..], ...},
  ///    "energy": {"gpu"|"cpu": {"joules", "seconds", "t_begin_unix", "t_end_unix", "updates"}}
  ///    (the energy counters from the first timed reading to the last),
  ///    "summaries": {source name: its case_summary(), ...}}
  /// `series` holds at most `max_series` readings (every k-th), t in s since the first timed
  /// repeat began; GPU columns only in GPU cases.
  [[nodiscard]] nlohmann::json finish_case(std::size_t max_series);
  /// The sources' describe(), merged.
  [[nodiscard]] nlohmann::json describe() const;

 private:
  struct Mark {
    int repeat;
    bool begin;
  };
  struct Reading {
    TelemetrySample s;
    int repeat;
  };
  void loop();

  std::vector<std::unique_ptr<TelemetrySource>> sources_;
  double period_s_;
  mutable std::mutex m_;
  std::condition_variable wake_;
  std::condition_variable served_;
  std::deque<Mark> pending_;
  std::vector<Reading> readings_;
  int active_ = -1;  ///< the repeat running, -1 between repeats
  bool gpu_ = false;
  bool busy_ = false;  ///< a reading is being taken
  /// Per source: the longest and the summed time of one read() in this case (the sampler's
  /// own cost, reported as `read_s`).
  std::vector<double> read_max_s_, read_sum_s_;
  std::vector<std::size_t> read_n_;
  std::vector<double> last_read_;  ///< per source: sb::now() of its last read this case, 0: none
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace sb
