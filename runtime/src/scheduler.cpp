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

#include "message.hpp"
#include "rank.hpp"
#include "scalebench/clock.hpp"
#include "scalebench/error.hpp"
#include "scalebench/lifeline.hpp"
#include "scalebench/nvml_probe.hpp"
#include "scalebench/stats.hpp"
#include "scalebench/system_info.hpp"
#include "scalebench/workload.hpp"
#include "startup_gather.hpp"

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
      : plan_(plan), ctx_(ctx), out_(plan.stream_path) {}

  int run() {
    StartupInfo startup = gather_startup(ctx_);
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
      bool restart = false;
      nlohmann::json record = run_case(spec, k, n, restart);
      out_.write(record, /*durable=*/true);
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
    }
    return {};
  }

  /// Waits for one message from a participant; throws CaseFailure on a worker error or timeout.
  Message wait(double deadline) {
    Message m;
    Backoff backoff(wait_sleep_us_);
    while (!try_receive(ctx_.world, MPI_ANY_SOURCE, MPI_ANY_TAG, m)) {
      if (deadline > 0 && now() > deadline)
        throw CaseFailure{"timeout",
                          fmt::format("case exceeded --case-timeout of {} s", plan_.case_timeout_s),
                          true};
      backoff.pause();
    }
    if (m.tag == kTagError) {
      Reader r(m.data);
      throw CaseFailure{"failed", fmt::format("rank {}: {}", m.source, r.get_str()), false};
    }
    return m;
  }

  /// The state of one case while it runs.
  struct CaseRun {
    CaseSpec spec;
    std::vector<WorkerInfo> parts;
    std::map<int, int> case_rank;  ///< world rank -> rank within the case
    double deadline = 0;           ///< --case-timeout, on sb::now(); 0: none
    std::unique_ptr<SchedulerCase> sc;
    bool begun = false;  ///< the workers hold their WorkerCase
    nlohmann::json repeats = nlohmann::json::array();
    nlohmann::json results = nlohmann::json::array();
    nlohmann::json events = {
        {"repeat", nlohmann::json::array()}, {"worker", nlohmann::json::array()},
        {"task", nlohmann::json::array()},   {"phase", nlohmann::json::array()},
        {"start", nlohmann::json::array()},  {"end", nlohmann::json::array()},
        {"bytes", nlohmann::json::array()}};
    std::vector<double> totals;
  };

  nlohmann::json run_case(const CaseSpec& spec_in, int k, int n, bool& restart) {
    CaseRun run;
    run.spec = spec_in;
    run.parts = participants(run.spec.path);
    run.spec.workers = static_cast<int>(run.parts.size());
    // GPU cases: the host is idle and repeats are short, so poll the workers closely.
    wait_sleep_us_ = device_of(run.spec.path) == Device::gpu ? kGpuPollUs : 500;
    nlohmann::json rec = record_head(run.spec);
    if (run.parts.empty()) {
      rec["status"] = "skipped";
      rec["message"] = gpu_skip_reason_;
      rec["ended_utc"] = utc_now();
      return rec;
    }
    if (const std::string why = cannot_run(run.spec, run.parts.size()); !why.empty()) {
      rec["status"] = "skipped";
      rec["message"] = why;
      rec["ended_utc"] = utc_now();
      return rec;
    }
    rec["threads_per_worker"] = threads_of(run, 0);
    rec["hosts"] = nlohmann::json::array();
    for (std::size_t i = 0; i < run.parts.size(); ++i) {
      rec["hosts"].push_back(run.parts[i].host);
      run.case_rank[run.parts[i].rank] = static_cast<int>(i);
    }
    run.deadline = plan_.case_timeout_s > 0 ? now() + plan_.case_timeout_s : 0;
    try {
      const Workload& wl = find_workload(run.spec.workload);
      run.sc = wl.make_scheduler(run.spec);
      begin_case(run);
      rec["repeat_stop"] = run_repeats(run, k, n);
      rec["repeats"] = run.repeats;
      rec["results"] = run.results;
      rec["result"] = run.results.empty() ? nlohmann::json::object() : run.results.back();
      rec["task_events"] = run.events;
      validate_case(run, wl, rec);
      add_work_and_metrics(run, rec);
      if (const nlohmann::json own = run.sc->metrics(); own.is_object())
        for (const auto& [key, value] : own.items()) rec["metrics"][key] = value;
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
    rec["ended_utc"] = utc_now();
    return rec;
  }

  /// Why a case cannot run on its path (Workload::paths) or on `workers` workers
  /// (Workload::min_workers), "" when it can.
  static std::string cannot_run(const CaseSpec& spec, std::size_t workers) {
    const auto& all = workloads();
    const auto it = std::find_if(all.begin(), all.end(),
                                 [&](const Workload& w) { return w.name == spec.workload; });
    if (it == all.end()) return {};  // run_case reports an unknown workload
    const Workload& wl = *it;
    if (!runs_on(wl, spec.path))
      return fmt::format("{} does not run on {}", spec.workload, to_string(spec.path));
    if (static_cast<int>(workers) >= wl.min_workers) return {};
    const bool gpu = device_of(spec.path) == Device::gpu;
    return fmt::format(
        "{} needs at least {} workers and {} has {} here ({}: run on {} or more)", spec.workload,
        wl.min_workers, to_string(spec.path), workers,
        gpu ? "one worker per GPU" : "one CPU worker per GPU, or per node without GPUs",
        gpu ? fmt::format("{} GPUs", wl.min_workers) : fmt::format("{} nodes", wl.min_workers));
  }

  /// The case record's identity, before anything runs.
  static nlohmann::json record_head(const CaseSpec& spec) {
    return {{"type", "case"},
            {"index", spec.index},
            {"id", spec.id},
            {"workload", spec.workload},
            {"path", std::string(to_string(spec.path))},
            {"params", spec.params.to_json()},
            {"preset", spec.preset},
            {"device", device_of(spec.path) == Device::gpu ? "gpu" : "cpu"},
            {"workers", spec.workers},
            {"threads_per_worker", 0},
            {"warmup", spec.warmup},
            {"status", "ok"},
            {"message", ""},
            {"started_utc", utc_now()}};
  }

  /// CPU threads of the case's i-th participant (one on single-cpu).
  static int threads_of(const CaseRun& run, std::size_t i) {
    return run.spec.path == ExecPath::single_cpu ? 1 : run.parts[i].threads;
  }

  /// Each participant builds its WorkerCase (allocation happens here, untimed).
  void begin_case(CaseRun& run) {
    for (std::size_t i = 0; i < run.parts.size(); ++i) {
      nlohmann::json j = {{"spec", case_spec_to_json(run.spec)},
                          {"rank", static_cast<int>(i)},
                          {"size", run.spec.workers},
                          {"threads", threads_of(run, i)}};
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
  }

  /// The warm-up repeats, then timed ones until the case's repeat rule says stop; returns why
  /// it stopped and the median's spread then (the case record's `repeat_stop`).
  nlohmann::json run_repeats(CaseRun& run, int k, int n) {
    for (int r = 0; r < run.spec.warmup; ++r) run_repeat(run, r, k, n);
    const RepeatRule rule = run.spec.repeat_rule();
    const double t0 = now();
    RepeatStop stop;
    for (int r = run.spec.warmup; !stop.stop; ++r) {
      run_repeat(run, r, k, n);
      stop = repeat_stop(rule, run.totals, now() - t0);
    }
    nlohmann::json out = {{"reason", stop.reason},
                          {"repeats", static_cast<int>(run.totals.size())},
                          {"spread", std::isfinite(stop.spread) ? stop.spread : 0.0}};
    if (rule.adaptive()) {
      out["min_repeats"] = rule.min_repeats;
      out["max_repeats"] = rule.max_repeats;
      out["max_time_s"] = rule.max_time_s;
      out["target_spread"] = rule.target_spread;
    }
    return out;
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
    const std::int64_t ntasks = run.sc->num_tasks();
    std::int64_t next = 0;
    PhaseTimes phases;
    const double t0 = now();
    Writer rb;
    rb.put<std::int32_t>(r);
    for (const auto& p : run.parts) send(ctx_.world, p.rank, kTagRepeatBegin, rb);
    std::size_t done = 0;
    while (done < run.parts.size()) {
      const Message m = wait(run.deadline);
      Reader rd(m.data);
      const int crank = run.case_rank.at(m.source);
      if (m.tag == kTagRequest) {
        const int want = rd.get<std::int32_t>();
        const int count = rd.get<std::int32_t>();
        for (int i = 0; i < count; ++i) {
          TaskOutcome o;
          o.task = rd.get<std::int64_t>();
          o.start = rd.get<double>();
          o.end = rd.get<double>();
          o.bytes = rd.get<std::int64_t>();
          o.phase = static_cast<Phase>(rd.get<std::int32_t>());
          o.partial = rd.get_vec<double>();
          run.sc->on_task(o);
          if (measured) add_event(run, r - spec.warmup, crank, o);
        }
        if (want > 0) {
          std::vector<std::int64_t> ids;
          while (static_cast<int>(ids.size()) < want && next < ntasks) ids.push_back(next++);
          Writer w;
          w.put_vec(ids);
          send(ctx_.world, m.source, kTagAssign, w);
        }
      } else if (m.tag == kTagDone) {
        phases.generate = std::max(phases.generate, rd.get<double>());
        phases.compute = std::max(phases.compute, rd.get<double>());
        phases.communicate = std::max(phases.communicate, rd.get<double>());
        run.sc->on_worker_done(crank, rd.get_vec<double>());
        ++done;
      } else {
        throw CaseFailure{"failed", fmt::format("internal: unexpected tag {} in a repeat", m.tag),
                          true};
      }
    }
    const double total = now() - t0;
    nlohmann::json result = run.sc->end_repeat();
    if (!measured) return;
    run.totals.push_back(total);
    run.repeats.push_back({{"generate", phases.generate},
                           {"compute", phases.compute},
                           {"communicate", phases.communicate},
                           {"total", total}});
    run.results.push_back(std::move(result));
  }

  static void add_event(CaseRun& run, int repeat, int worker, const TaskOutcome& o) {
    auto& e = run.events;
    e["repeat"].push_back(repeat);
    e["worker"].push_back(worker);
    e["task"].push_back(o.task);
    e["phase"].push_back(std::string(to_string(o.phase)));
    e["start"].push_back(o.start);
    e["end"].push_back(o.end);
    e["bytes"].push_back(o.bytes);
  }

  /// Outside the timed region: every worker's part of the validation, the workload's checks,
  /// and the cross-check against the first case of the same workload and parameters.
  void validate_case(CaseRun& run, const Workload& wl, nlohmann::json& rec) {
    for (const auto& p : run.parts) send_empty(ctx_.world, p.rank, kTagValidate);
    std::vector<std::vector<double>> vparts(run.parts.size());
    for (std::size_t i = 0; i < run.parts.size(); ++i) {
      const Message m = wait(run.deadline);
      if (m.tag != kTagValidation)
        throw CaseFailure{"failed", fmt::format("internal: tag {} instead of validation", m.tag),
                          true};
      Reader rd(m.data);
      vparts[static_cast<std::size_t>(run.case_rank.at(m.source))] = rd.get_vec<double>();
    }
    for (const auto& p : run.parts) send_empty(ctx_.world, p.rank, kTagCaseEnd);
    run.begun = false;

    std::vector<Check> checks = run.sc->validate(vparts);
    const Fingerprint fp = run.sc->fingerprint();
    const std::string key = run.spec.workload + "|" + run.spec.params.canonical();
    if (auto it = references_.find(key); it != references_.end()) {
      for (Check c : wl.cross_check(it->second.second, fp)) {
        c.name = "cross:" + c.name;
        c.detail += " (vs " + it->second.first + ")";
        checks.push_back(c);
      }
    } else {
      references_.emplace(key, std::make_pair(std::string(to_string(run.spec.path)), fp));
    }
    nlohmann::json validation = nlohmann::json::array();
    std::string failed;
    for (const auto& c : checks) {
      validation.push_back({{"name", c.name},
                            {"value", c.value},
                            {"limit", c.limit},
                            {"pass", c.pass},
                            {"detail", c.detail}});
      if (!c.pass && failed.empty())
        failed = fmt::format("validation failed: {} = {:.3g} exceeds {:.3g} ({})", c.name, c.value,
                             c.limit, c.detail);
    }
    rec["validation"] = validation;
    if (!failed.empty()) {
      rec["status"] = "failed";
      rec["message"] = failed;
    }
  }

  /// The work one repeat does and the case's headline figures.
  static void add_work_and_metrics(const CaseRun& run, nlohmann::json& rec) {
    const Work work = run.sc->work();
    rec["work"] = {{"units", work.units},
                   {"unit", work.unit},
                   {"bytes", work.bytes},
                   {"flops", work.flops},
                   {"bound", work.bound == Work::Bound::bytes ? "bytes" : "flops"}};
    const double med = results::median(run.totals);
    std::vector<double> computes;
    for (const auto& rr : run.repeats) computes.push_back(rr.at("compute").get<double>());
    const double med_compute = results::median(computes);
    rec["metrics"] = {{"median_s", med},
                      {"throughput", work.units / med},
                      {"throughput_unit", work.unit + "/s"},
                      {"gbytes_per_s", work.bytes / med / 1e9},
                      {"gflops", work.flops / med / 1e9},
                      {"median_compute_s", med_compute},
                      {"compute_throughput", med_compute > 0 ? work.units / med_compute : 0.0}};
  }

  const JobPlan& plan_;
  RankContext& ctx_;
  StreamWriter out_;
  std::vector<WorkerInfo> workers_;
  std::vector<WorkerInfo> gpu_workers_;
  std::string gpu_skip_reason_;
  std::map<std::string, std::pair<std::string, Fingerprint>> references_;
  int wait_sleep_us_ = 500;  ///< longest sleep between probes in wait() (short for GPU cases)
};

}  // namespace

int run_scheduler(const JobPlan& plan, RankContext& ctx) {
  if (ctx.size < 2)
    throw EnvironmentError("scalebench needs at least 2 MPI ranks (a scheduler and a worker)");
  // The job never outlives its launcher: when the launcher is gone (killed, kill -9 included),
  // this rank exits at once and the MPI starter ends every other rank (a rank that exits
  // without MPI_Finalize ends an OpenMPI or srun --kill-on-bad-exit job). Every finished case
  // is already durable in the record stream, which `scalebench recover` folds into the report.
  const LifelineWatch lifeline(plan.lifeline_path, 0.5,
                               [] { std::_Exit(protocol::kExitLauncherGone); });
  Scheduler s(plan, ctx);
  return s.run();
}

}  // namespace sb::detail
