#pragma once
/// @file ab_runner.hpp
/// Runs an A/B run's two sides (ab_sides.hpp) side by side: one MPI job per side on the same
/// allocation, started one after the other, each its side's rank program, plugins and
/// environment. Case by case, both set the case up, then the launcher hands out turns: a
/// warm-up turn each, then rounds of one turn per side in random order, each turn `block`
/// timed repeats while the other side's ranks sleep (ab_protocol.hpp). A fixed --repeats N
/// ends a case when both sides have N; --repeats auto when the gate's rule on the rounds so far
/// has decided the change (compare.hpp: compare_rounds, is_decided; from --min-repeats per side
/// and kAbMinRounds rounds) or the budget (--max-repeats per side, --max-time of both sides'
/// turns) is spent. A side whose job dies is recorded as in any run (the running case
/// failed, with the repeats it took), the other side finishes that case on its own, and the
/// dead side's next job runs the cases left.

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "ab_sides.hpp"
#include "job_runner.hpp"
#include "scalebench/compare.hpp"

namespace sb {

/// Turns last about this long when --ab-block is auto: short enough that both sides see the
/// same moments of a shared machine, long enough that handing over a turn (a few ms) is small.
inline constexpr double kAbTurnTargetS = 0.1;
/// The most timed repeats of one turn when --ab-block is auto (sub-millisecond GPU repeats).
inline constexpr int kAbMaxBlock = 100;
/// `--repeats auto` in an A/B run: the fewest timed repeats per side before a decision, and the
/// seconds of both sides' turns a case may take (when the command line gives none).
inline constexpr int kAbMinRepeats = 10;
/// The fewest rounds a decision is made on: the interval resamples rounds, and a handful of
/// them cannot show how much the machine's moments differ. Later looks come after half as many
/// rounds again each time.
inline constexpr int kAbMinRounds = 8;
inline constexpr double kAbMaxTime = 60.0;

struct AbRunOptions {
  JobRunnerOptions jobs;                       ///< what both sides share (allocation, limits...)
  std::array<AbSide, 2> sides;                 ///< [0] baseline, [1] current
  std::array<std::vector<CaseSpec>, 2> cases;  ///< per side, the same planned cases in order
  int block = 0;                               ///< timed repeats per turn; 0: auto
  std::uint64_t seed = 0;                      ///< of the turn order
  results::CompareOptions compare;             ///< --repeats auto decides by this rule
  bool auto_repeats = false;
  int repeats = 5;  ///< a fixed count per side
  int min_repeats = kAbMinRepeats;
  int max_repeats = 100;
  double max_time_s = kAbMaxTime;
  /// Every record of either side as it arrives (side 0 baseline, 1 current).
  std::function<void(int side, const nlohmann::json&)> on_record;
};

struct AbRunResult {
  std::array<nlohmann::json, 2> start;               ///< each side's first start record
  std::array<std::vector<nlohmann::json>, 2> cases;  ///< each side's case records, plan order
  nlohmann::json turns = nlohmann::json::array();    ///< /ab/turns rows
  int jobs = 0;                                      ///< MPI jobs started, both sides
  int stop_signal = 0;
};

/// Runs the A/B run; throws sb::EnvironmentError when a side's first job cannot start.
[[nodiscard]] AbRunResult run_ab_jobs(const AbRunOptions& options);

}  // namespace sb
