// Rank 0: plans participants, hands out tasks dynamically, folds results, times repeats,
// validates, cross-checks paths, and streams every finished case.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <numeric>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "ab_turns.hpp"
#include "case_record.hpp"
#include "case_telemetry.hpp"
#include "each_device.hpp"
#include "message.hpp"
#include "participant_plan.hpp"
#include "participant_watch.hpp"
#include "progress_records.hpp"
#include "rank.hpp"
#include "repeat_timing.hpp"
#include "scalebench/case_forecast.hpp"
#include "scalebench/clock.hpp"
#include "scalebench/error.hpp"
#include "scalebench/lifeline.hpp"
#include "scalebench/nvml_probe.hpp"
#include "scalebench/settings.hpp"
#include "scalebench/stats.hpp"
#include "scalebench/system_info.hpp"
#include "scalebench/utc_time.hpp"
#include "scalebench/workload.hpp"
#include "startup_gather.hpp"
#include "task_dispatch.hpp"

namespace sb::detail {
namespace {

/// A failure that ends the case; `restart` asks for a fresh MPI job (workers may be stuck).
struct CaseFailure {
  std::string status;  // "failed" or "timeout"
  std::string message;
  bool restart = false;
};

class Scheduler {
 public:
  Scheduler(const JobPlan& plan, RankContext& ctx)
      : plan_(plan), ctx_(ctx), out_(plan.stream_path) {
    if (!plan.ab_side.empty()) ab_ = std::make_unique<AbTurns>(out_);  // an A/B run's side
  }

  int run() {
    // While the workers start, the launcher learns which ones it still waits for (a start-up
    // that hangs names them).
    StartupInfo startup = gather_startup(ctx_, [this](const std::vector<int>& missing, double t) {
      out_.write(startup_wait_record(missing, t), false);
    });
    workers_ = std::move(startup.workers);
    gpu_workers_ = std::move(startup.gpu_workers);
    gpu_skip_reason_ = std::move(startup.gpu_skip_reason);
    out_.write(startup.record, true);
    const int n = static_cast<int>(plan_.cases.size());
    for (int k = 0; k < n; ++k) {
      // The launcher asks for a stop between cases (batch time-limit warning).
      if (!plan_.stop_path.empty() && access(plan_.stop_path.c_str(), F_OK) == 0) {
        for (const auto& w : workers_) send_empty(ctx_.world, w.rank, kTagShutdown);
        out_.write({{"type", "end"}, {"status", "stopped"}}, true);
        return 0;
      }
      const CaseSpec& spec = plan_.cases[static_cast<std::size_t>(k)];
      if (ab_ && !ab_->wait_begin(spec.index)) {  // an A/B side begins each case when told
        for (const auto& w : workers_) send_empty(ctx_.world, w.rank, kTagShutdown);
        out_.write({{"type", "end"}, {"status", "stopped"}}, true);
        return 0;
      }
      // Durable before any worker hears of the case: a job that dies in its set-up blames it.
      out_.write(setup_record(spec, k, n), /*durable=*/true);
      bool restart = false;
      if (is_each_device(spec.path)) {
        // One record per device, each written as soon as its device is done.
        EachDevice each{plan_, ctx_, out_, references_, workers_, gpu_skip_reason_};
        restart = each.run(spec, k, n);
      } else {
        nlohmann::json record = run_case(spec, k, n, restart);
        out_.write(record, /*durable=*/true);
      }
      if (restart) {
        out_.write({{"type", "end"}, {"status", "restart"}, {"after_case", spec.index}}, true);
        MPI_Abort(ctx_.world, kExitRestart);
        return kExitRestart;
      }
    }
    for (const auto& w : workers_) send_empty(ctx_.world, w.rank, kTagShutdown);
    out_.write({{"type", "end"}, {"status", "ok"}}, true);
    return 0;
  }

 private:
  std::vector<WorkerInfo> participants(ExecPath path) const {
    switch (path) {
      case ExecPath::single_cpu:
        return {workers_.front()};
      case ExecPath::multi_cpu:
        return workers_;
      case ExecPath::single_gpu:
        return gpu_workers_.empty() ? std::vector<WorkerInfo>{}
                                    : std::vector<WorkerInfo>{gpu_workers_.front()};
      case ExecPath::multi_gpu:
        return gpu_workers_;
      case ExecPath::each_gpu:
      case ExecPath::each_node:
        break;  // EachDevice
    }
    return {};
  }

  /// Waits for one message from a participant; throws CaseFailure on a worker error or timeout.
  Message wait(double deadline) {
    Message m;
    Backoff backoff(wait_sleep_us_);
    double last_look = 0;
    while (!try_receive(ctx_.world, MPI_ANY_SOURCE, MPI_ANY_TAG, m)) {
      if (deadline > 0) {
        // A gap between two looks is time this rank itself did not run (stopped, starved).
        const double t = now();
        if (last_look > 0) stalled_s_ = std::max(stalled_s_, t - last_look);
        last_look = t;
        if (t > deadline) throw timed_out();
      }
      backoff.pause();
    }
    watch_.heard(m);
    if (m.tag == kTagError) {
      Reader r(m.data);
      throw CaseFailure{"failed", fmt::format("rank {}: {}", m.source, r.get_str()), false};
    }
    return m;
  }

  /// --case-timeout: the case's step and who had not finished it, doing what
  /// (participant_watch.hpp).
  CaseFailure timed_out() const {
    const std::string who = watched_ != nullptr ? watch_.unfinished(*watched_) : std::string();
    return CaseFailure{
        "timeout",
        fmt::format("case exceeded --case-timeout of {} s in {}{}{}", plan_.case_timeout_s,
                    watched_ != nullptr ? watch_.step(*watched_) : std::string("its set-up"),
                    who.empty() ? std::string() : ": not finished: " + who,
                    stalled_s_ > 2.0
                        ? fmt::format("; the scheduler itself did not run for {:.1f} s (stopped, "
                                      "or starved of CPU)",
                                      stalled_s_)
                        : std::string()),
        true};
  }

  /// The state of one case while it runs.
  struct CaseRun {
    CaseSpec spec;
    std::vector<WorkerInfo> parts;
    /// World rank -> rank within the case (-1: not in it); a vector, as a map's lookups per
    /// message grew with the workers (bench/bench_scheduler.cpp).
    std::vector<int> case_rank;
    double deadline = 0;  ///< --case-timeout, on sb::now(); 0: none
    std::unique_ptr<SchedulerCase> sc;
    bool begun = false;  ///< the workers hold their WorkerCase
    nlohmann::json repeats = nlohmann::json::array();
    nlohmann::json results = nlohmann::json::array();
    TaskEvents events;
    std::vector<double> totals;
    std::vector<double> computes;
    SchedulerCpu scheduler_cpu;  ///< this rank's CPU time per timed repeat
    std::vector<WorkerTelemetry> telemetry;
    double setup_s = 0;
  };

  nlohmann::json run_case(const CaseSpec& spec_in, int k, int n, bool& restart) {
    CaseRun run;
    run.spec = spec_in;
    run.parts = participants(run.spec.path);
    // A problem too small for more workers to help runs on the first few (participant_plan.hpp).
    const ParticipantPlan plan = plan_for(run.spec, static_cast<int>(run.parts.size()));
    run.parts.resize(static_cast<std::size_t>(plan.workers));
    run.spec.workers = static_cast<int>(run.parts.size());
    // GPU cases: the host is idle and repeats are short, so poll the workers closely.
    wait_sleep_us_ = device_of(run.spec.path) == Device::gpu ? kGpuPollUs : kCpuPollUs;
    nlohmann::json rec = record_head(run.spec);
    run.scheduler_cpu.host = ctx_.host;
    if (run.spec.path == ExecPath::single_gpu && !run.parts.empty()) {
      // The one device it measured, for the verdicts (results/include/scalebench/verdicts.hpp).
      rec["host"] = run.parts.front().host;
      rec["gpu"] = run.parts.front().node_gpu;
      rec["device_model"] = run.parts.front().model;
    }
    if (run.parts.empty()) {
      rec["status"] = "skipped";
      rec["message"] = gpu_skip_reason_;
      rec["ended_utc"] = utc_now();
      return rec;
    }
    if (const std::string why = cannot_run(run.spec, run.parts.size()); !why.empty()) {
      rec["status"] = "skipped";
      rec["not_applicable"] = true;  // the workload's nature, not a fault of this machine
      rec["message"] = why;
      rec["ended_utc"] = utc_now();
      return rec;
    }
    rec["threads_per_worker"] = threads_of(run, 0);
    rec["hosts"] = nlohmann::json::array();
    run.case_rank.assign(static_cast<std::size_t>(ctx_.size), -1);
    for (std::size_t i = 0; i < run.parts.size(); ++i) {
      rec["hosts"].push_back(run.parts[i].host);
      run.case_rank.at(static_cast<std::size_t>(run.parts[i].rank)) = static_cast<int>(i);
    }
    run.deadline = plan_.case_timeout_s > 0 ? now() + plan_.case_timeout_s : 0;
    watched_ = &run.parts;
    stalled_s_ = 0;
    try {
      const Workload& wl = find_workload(run.spec.workload);
      run.sc = wl.make_scheduler(run.spec);
      begin_case(run, rec);
      rec["repeat_stop"] = run_repeats(run, k, n);
      rec["warmup"] = run.spec.warmup;  // the warm-up repeats run
      rec["repeats"] = run.repeats;
      rec["results"] = run.results;
      rec["result"] = run.results.empty() ? nlohmann::json::object() : run.results.back();
      rec["task_events"] = run.events.to_json();
      validate_case(run, wl, rec);
      const CaseTelemetry t =
          combine_telemetry(run.telemetry, run.scheduler_cpu, run.totals.size());
      add_telemetry(rec, t);
      set_work_and_metrics(rec, run.sc->work(), run.totals, run.computes, t.throttled,
                           plan_.keep_throttled);
      // A workload's own figures (SchedulerCase::metrics) over the runtime's.
      if (const nlohmann::json own = run.sc->metrics(); own.is_object())
        for (const auto& [key, value] : own.items()) rec["metrics"][key] = value;
      record_participant_plan(rec, plan, device_of(run.spec.path) == Device::gpu);
    } catch (const CaseFailure& f) {
      rec["status"] = f.status;
      rec["message"] = f.message;
      // A single participant recovers by itself after reporting an error; several may be
      // stuck in collectives, so the job is restarted for the remaining cases.
      restart = f.restart || (run.begun && run.parts.size() > 1);
      if (!restart && run.begun)
        for (const auto& p : run.parts) send_empty(ctx_.world, p.rank, kTagCaseEnd);
    } catch (const std::exception& e) {
      rec["status"] = "failed";
      rec["message"] = e.what();
      restart = run.begun;
    }
    watched_ = nullptr;
    rec["ended_utc"] = utc_now();
    return rec;
  }

  /// The case's participants (participant_plan.hpp); every worker when the workload is unknown
  /// here (run_case records that failure) or its plan throws.
  static ParticipantPlan plan_for(const CaseSpec& spec, int available) {
    try {
      return plan_participants(find_workload(spec.workload), spec, available,
                               settings::participants() == "auto");
    } catch (const std::exception&) {
      ParticipantPlan all;
      all.workers = all.available = available;
      return all;
    }
  }

  /// Why a case cannot run on its path (Workload::paths) or on `workers` workers
  /// (Workload::min_workers), "" when it can: the forecast's rule (case_forecast.hpp).
  static std::string cannot_run(const CaseSpec& spec, std::size_t workers) {
    const auto& all = workloads();
    const auto it = std::find_if(all.begin(), all.end(),
                                 [&](const Workload& w) { return w.name == spec.workload; });
    if (it == all.end()) return {};  // run_case reports an unknown workload
    return cannot_run_reason(*it, spec.path, workers);
  }

  /// The case rank of world rank `source`; a message from outside the case is an internal error.
  static int case_rank_of(const CaseRun& run, int source) {
    const int r = source >= 0 && static_cast<std::size_t>(source) < run.case_rank.size()
                      ? run.case_rank[static_cast<std::size_t>(source)]
                      : -1;
    if (r < 0)
      throw CaseFailure{
          "failed", fmt::format("internal: a message from rank {}, not in the case", source), true};
    return r;
  }

  /// CPU threads of the case's i-th participant (one on single-cpu).
  static int threads_of(const CaseRun& run, std::size_t i) {
    return run.spec.path == ExecPath::single_cpu ? 1 : run.parts[i].threads;
  }

  /// Each participant builds its WorkerCase (allocation happens here, untimed).
  void begin_case(CaseRun& run, nlohmann::json& rec) {
    const double t0 = now();
    watch_.begin(run.parts, ParticipantWatch::Stage::setup);
    // One message per worker, the spec made once (thousands of workers).
    nlohmann::json j = {{"spec", case_spec_to_json(run.spec)},
                        {"rank", 0},
                        {"size", run.spec.workers},
                        {"threads", 1},
                        {"series_points", series_points(run.spec.workers)}};
    for (std::size_t i = 0; i < run.parts.size(); ++i) {
      j["rank"] = static_cast<int>(i);
      j["threads"] = threads_of(run, i);
      Writer w;
      w.put_str(j.dump());
      send(ctx_.world, run.parts[i].rank, kTagCaseBegin, w);
    }
    run.begun = true;
    for (std::size_t i = 0; i < run.parts.size(); ++i) {
      const Message m = wait(run.deadline);
      if (m.tag != kTagReady)
        throw CaseFailure{"failed", fmt::format("internal: tag {} instead of ready", m.tag), true};
    }
    // Untimed: the workers' allocations and, in a multi-gpu case, any NCCL communicator made
    // for it (the first case on that many GPUs).
    run.setup_s = now() - t0;
    rec["setup_s"] = run.setup_s;
  }

  /// The warm-up repeats, then timed ones until the case's repeat rule says stop; returns why
  /// it stopped and the median's spread then (the case record's `repeat_stop`).
  nlohmann::json run_repeats(CaseRun& run, int k, int n) {
    if (ab_) return run_ab_turns(run, k, n);
    int r = warm_up(run, k, n);
    const RepeatRule rule = run.spec.repeat_rule();
    const double t0 = now();
    RepeatStop stop;
    for (; !stop.stop; ++r) {
      run_repeat(run, r, k, n);
      stop = repeat_stop(rule, run.totals, now() - t0);
    }
    return repeat_stop_record(rule, stop, run.totals.size());
  }

  /// The warm-up repeats; returns how many ran. `last_s`: the last one's wall time.
  int warm_up(CaseRun& run, int k, int n, double* last_s = nullptr) {
    // run.spec.warmup grows to the warm-up repeats run (repeat_rule.hpp: warm_up_more).
    double first_end = 0;  // when the first warm-up repeat ended
    int r = 0;
    for (; warm_up_more(r, run.spec.warmup, r == 0 ? 0.0 : now() - first_end); ++r) {
      run.spec.warmup = std::max(run.spec.warmup, r + 1);
      const double t0 = now();
      run_repeat(run, r, k, n);
      if (last_s != nullptr) *last_s = now() - t0;
      if (r == 0) first_end = now();
    }
    return r;
  }

  /// An A/B side: the warm-up and timed repeats run in the launcher's turns (ab_turns.hpp);
  /// between turns the workers are parked and the case's time limit is paused.
  nlohmann::json run_ab_turns(CaseRun& run, int k, int n) {
    int r = 0;
    double parked_at = 0;
    AbCaseSteps steps;
    steps.warm_up = [&] {
      double last = 0;
      r = warm_up(run, k, n, &last);
      return last;
    };
    steps.timed_repeat = [&](int turn) {
      run_repeat(run, r++, k, n);
      run.repeats.back()["turn"] = turn;
      return run.totals.back();
    };
    steps.park = [&](bool park) {
      if (park) {
        for (const auto& p : run.parts) send_empty(ctx_.world, p.rank, kTagPark);
        parked_at = now();
        return;
      }
      if (run.deadline > 0) run.deadline += now() - parked_at;
      for (const auto& p : run.parts) send_empty(ctx_.world, p.rank, kTagResume);
      for (std::size_t i = 0; i < run.parts.size(); ++i)
        if (const Message m = wait(run.deadline); m.tag != kTagReady)
          throw CaseFailure{"failed", fmt::format("internal: tag {} instead of ready", m.tag),
                            true};
    };
    return ab_->run_case(run.spec, run.setup_s, steps);
  }

  /// Repeat r (warm-up repeats first): hands out the tasks as the workers ask for them, folds
  /// their outcomes and times the repeat from its begin to the last worker's done.
  void run_repeat(CaseRun& run, int r, int k, int n) {
    const CaseSpec& spec = run.spec;
    const bool measured = r >= spec.warmup;
    out_.write({{"type", "progress"},
                {"case", k},
                {"cases", n},
                {"id", spec.id},
                {"workload", spec.workload},
                {"path", std::string(to_string(spec.path))},
                {"repeat", r - spec.warmup},
                {"repeats", spec.repeats},
                {"auto", spec.repeat_rule().adaptive()},
                {"warmup", !measured}},
               false);
    run.sc->begin_repeat();
    std::int64_t next = 0;
    RepeatTiming timing;
    const double cpu0 = process_cpu_s();
    timing.begin(out_.seconds_writing());
    Writer rb;
    rb.put<std::int32_t>(measured ? r - spec.warmup : -1);  // the timed repeat, -1: warm-up
    watch_.begin(run.parts, ParticipantWatch::Stage::repeat, measured ? r - spec.warmup : -1);
    for (const auto& p : run.parts) send(ctx_.world, p.rank, kTagRepeatBegin, rb);
    std::size_t done = 0;
    while (done < run.parts.size()) {
      const Message m = wait(run.deadline);
      Reader rd(m.data);
      const int crank = case_rank_of(run, m.source);
      if (m.tag == kTagRequest) {
        const std::int64_t first = next;
        answer_request(ctx_.world, m.source, crank, rd, *run.sc, run.events,
                       measured ? r - spec.warmup : -1, next);
        watch_.assigned(m.source, first, next);
      } else if (m.tag == kTagDone) {
        const RepeatDone d = get_done(rd);
        timing.on_done(crank, d);
        run.sc->on_worker_done(crank, d.partial);
        ++done;
      } else {
        throw CaseFailure{"failed", fmt::format("internal: unexpected tag {} in a repeat", m.tag),
                          true};
      }
    }
    const double total = timing.end(out_.seconds_writing());
    const double cpu = process_cpu_s() - cpu0;
    nlohmann::json result = run.sc->end_repeat();
    if (plan_.trace)
      std::fputs(timing.trace_lines(spec.id, measured ? r - spec.warmup : -1).c_str(), stderr);
    if (!measured) return;
    run.totals.push_back(total);
    run.computes.push_back(timing.phases().compute);
    run.scheduler_cpu.own_cpu_s.push_back(cpu);
    run.repeats.push_back(timing.record());
    run.results.push_back(std::move(result));
  }

  /// Outside the timed region: every worker's part of the validation and its telemetry, the
  /// workload's checks, and the cross-check against the first case of the same workload and
  /// parameters.
  void validate_case(CaseRun& run, const Workload& wl, nlohmann::json& rec) {
    watch_.begin(run.parts, ParticipantWatch::Stage::validation);
    for (const auto& p : run.parts) send_empty(ctx_.world, p.rank, kTagValidate);
    std::vector<std::vector<double>> vparts(run.parts.size());
    for (std::size_t i = 0; i < 2 * run.parts.size(); ++i) {
      const Message m = wait(run.deadline);
      const int crank = case_rank_of(run, m.source);
      Reader rd(m.data);
      if (m.tag == kTagValidation) {
        vparts[static_cast<std::size_t>(crank)] = rd.get_vec<double>();
      } else if (m.tag == kTagTelemetry) {
        const WorkerInfo& w = run.parts[static_cast<std::size_t>(crank)];
        run.telemetry.push_back({crank, w.host, w.node_gpu, nlohmann::json::parse(rd.get_str())});
      } else {
        throw CaseFailure{"failed", fmt::format("internal: tag {} instead of validation", m.tag),
                          true};
      }
    }
    for (const auto& p : run.parts) send_empty(ctx_.world, p.rank, kTagCaseEnd);
    run.begun = false;

    std::vector<Check> checks = run.sc->validate(vparts);
    for (Check c : references_.check(run.spec, wl, run.sc->fingerprint(),
                                     std::string(to_string(run.spec.path))))
      checks.push_back(std::move(c));
    set_validation(rec, checks);
  }

  const JobPlan& plan_;
  RankContext& ctx_;
  StreamWriter out_;
  std::vector<WorkerInfo> workers_;
  std::vector<WorkerInfo> gpu_workers_;
  std::string gpu_skip_reason_;
  CrossCheckReferences references_;
  int wait_sleep_us_ = 500;      ///< longest sleep between probes in wait() (short for GPU cases)
  std::unique_ptr<AbTurns> ab_;  ///< an A/B run's side: repeats in the launcher's turns
  ParticipantWatch watch_;       ///< what each participant was last doing (a timeout names them)
  const std::vector<WorkerInfo>* watched_ = nullptr;  ///< the running case's participants
  double stalled_s_ = 0;  ///< the longest this rank did not run while it waited, this case
};

}  // namespace

int run_scheduler(const JobPlan& plan, RankContext& ctx) {
  if (ctx.size < 2)
    throw EnvironmentError("scalebench needs at least 2 MPI ranks (a scheduler and a worker)");
  // The job never outlives its launcher: when the launcher is gone (killed, kill -9 included),
  // this rank exits at once and the MPI starter ends every other rank (a rank that exits
  // without MPI_Finalize ends an OpenMPI or srun --kill-on-bad-exit job). Every finished case
  // is already durable in the record stream, which `scalebench recover` folds into the report.
  const LifelineWatch lifeline(plan.lifeline_path, 0.5, [] { std::_Exit(kExitLauncherGone); });
  Scheduler s(plan, ctx);
  return s.run();
}

}  // namespace sb::detail
