#pragma once
/// @file ab_protocol.hpp
/// An A/B run (`scalebench run --baseline ...`, docs/ci.md): two MPI jobs on the same
/// allocation, one per side (baseline, current), each a scalebench-rank of that side's build.
/// Both plan the same cases in the same order; the launcher hands out turns, so that only one
/// side measures at a time while the other's ranks sleep (scheduler: a blocking read of its
/// standard input; workers: parked, probing every 2 ms).
///
///   probe      `scalebench-rank --probe [--plugin LIB.so]...` (no MPI) prints one JSON line:
///              {"protocol": kProtocol, "version", "git_sha", "build_type", "workloads": [..],
///              "plugins": [{path, workloads, api_version, sha256}]}, exit 0; a bad plugin or
///              setting: one line on stderr, exit 2. Builds before the A/B protocol have no
///              --probe: the launcher refuses them with one line before any job starts.
///   plan       JobPlan::ab_side ("baseline" or "current"), "ab_protocol": kProtocol and
///              JobPlan::ab_run, the run's mark, also in every rank's environment as
///              kRunVariable (a worker does not count the other side's ranks on its GPU as
///              other users: they are parked).
///   commands   (launcher -> scheduler, one line each on the scheduler's standard input)
///                begin I    set up case I (the run's index; the next of the job's plan)
///                turn I R T case I (the run's index): its warm-up repeats on its first turn,
///                           then R timed repeats (R = 0: the warm-up alone); T numbers the
///                           turn in the run (both sides), recorded with each repeat
///                end I      case I has all its repeats: validate it, write its record, then
///                           set up the next case
///                stop       end the job instead of beginning another case (end of input
///                           means the same; mid-case it fails the case: interrupted)
///   records    (scheduler -> launcher, in the stream; each fsync'ed: the launcher may read it
///              from another host)
///                {"type":"ab_ready", "index", "id", "setup_s"}   case set up, workers parked
///                {"type":"ab_turn", "index", "turn", "totals": [s..], "warmup",
///                 "warmup_last_s"}                               a turn done, workers parked
///              and the case records as in any job (their repeats carry "turn").

#include <string_view>

namespace sb::ab {

/// Bumped whenever the plan, the commands or the records change incompatibly.
inline constexpr int kProtocol = 1;

inline constexpr std::string_view kBaseline = "baseline";
inline constexpr std::string_view kCurrent = "current";
/// Names the run's mark in both sides' ranks' environment (JobPlan::ab_run).
inline constexpr const char* kRunVariable = "SCALEBENCH_AB_RUN";

inline constexpr std::string_view kRecordReady = "ab_ready";
inline constexpr std::string_view kRecordTurn = "ab_turn";

/// The failure of a case whose commands ended before its `end` (the launcher stopping the run, or
/// the MPI job ending around the scheduler).
inline constexpr std::string_view kInterrupted =
    "interrupted: the launcher's commands ended while the case ran";

/// The first argument of scalebench-rank that asks for the probe.
inline constexpr std::string_view kProbeFlag = "--probe";

}  // namespace sb::ab
