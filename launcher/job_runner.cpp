#include "job_runner.hpp"
#include "rank_environment.hpp"

#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <fstream>
#include <map>
#include <thread>

#include <fmt/format.h>

#include "batch/node_health.hpp"
#include "console.hpp"
#include "device_records.hpp"
#include "file_tail.hpp"
#include "job_end_cause.hpp"
#include "job_process.hpp"
#include "scalebench/clock.hpp"
#include "scalebench/error.hpp"
#include "scalebench/job_plan.hpp"
#include "scalebench/settings.hpp"
#include "scalebench/utc_time.hpp"
#include "stop_signals.hpp"

namespace sb {

nlohmann::json not_run_record(const CaseSpec& s, const std::string& status,
                              const std::string& msg) {
  return {{"type", "case"},
          {"index", s.index},
          {"id", s.id},
          {"workload", s.workload},
          {"path", std::string(to_string(s.path))},
          {"params", s.params.to_json()},
          {"preset", s.preset},
          {"device", device_of(s.path) == Device::gpu ? "gpu" : "cpu"},
          {"workers", 0},
          {"threads_per_worker", 0},
          {"warmup", s.warmup},
          {"status", status},
          {"message", msg},
          {"repeats", nlohmann::json::array()},
          {"started_utc", ""},
          {"ended_utc", utc_now()}};
}

/// What one job did.
struct JobEnd {
  int status = 0;          ///< wait status of mpiexec/srun
  bool end_seen = false;   ///< the scheduler wrote its "end ok" record
  int running_index = -1;  ///< the case that was running when the job ended, or -1
  int running_repeat = 0;  ///< its repeat then (of its timed repeats)
  bool running_warmup = false;
  bool running_setup = false;        ///< the case was in its set-up (no repeat yet)
  std::deque<std::string> log_tail;  ///< the job's last output lines
  OomWatch oom;                      ///< the OOM-kill counters of its memory cgroups
  std::string hung;  ///< why the launcher ended a job that stopped answering (or never started)
  bool startup_hung = false;  ///< it never finished its start-up (SCALEBENCH_STARTUP_TIMEOUT_S)
  [[nodiscard]] bool clean() const {
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 && end_seen;
  }
};

/// The job's end in words: its exit status, the rank that ended it and how, the OOM killer's
/// part (job_end_cause.hpp), and why the launcher ended it when it did.
std::string diagnose(const JobEnd& end) {
  const std::string d = describe_job_end(end.status, end.log_tail, end.oom);
  return end.hung.empty() ? d : end.hung + " (" + d + ")";
}

/// "rank 2 (node1, GPU 0)" from the launcher's placement.
std::string rank_name(const JobRunnerOptions& opt, int rank) {
  if (rank < 0 || rank >= static_cast<int>(opt.placement.size()))
    return fmt::format("rank {}", rank);
  const auto& p = opt.placement[static_cast<std::size_t>(rank)];
  const std::string host = p.node >= 0 && p.node < static_cast<int>(opt.allocation.nodes.size())
                               ? opt.allocation.nodes[static_cast<std::size_t>(p.node)].host
                               : std::string("?");
  if (p.scheduler) return fmt::format("rank {} (the scheduler, {})", rank, host);
  return p.gpu >= 0 ? fmt::format("rank {} ({}, GPU {})", rank, host, p.gpu)
                    : fmt::format("rank {} ({})", rank, host);
}

/// The job's processes on this host that are stopped (SIGSTOP, a debugger), by rank.
std::string stopped_ranks(const JobProcess& proc, const JobRunnerOptions& opt) {
  std::string out;
  for (const auto& p : proc.processes(true))
    if ((p.state == 'T' || p.state == 't') && p.rank >= 0)
      out += (out.empty() ? "" : ", ") + rank_name(opt, p.rank) + " is stopped (pid " +
             std::to_string(p.pid) + ")";
  return out;
}

/// Why a start-up hung: the ranks the scheduler still waited for, by host; or, when the
/// scheduler never wrote, how many ranks run here and that none got through MPI_Init.
std::string startup_hang(const JobProcess& proc, const JobRunnerOptions& opt,
                         const nlohmann::json& waiting, double limit_s) {
  const std::string head = fmt::format(
      "the MPI job did not finish its start-up within {:g} s "
      "(SCALEBENCH_STARTUP_TIMEOUT_S)",
      limit_s);
  if (waiting.is_array()) {
    std::map<std::string, std::vector<int>> by_host;
    for (const auto& r : waiting) {
      const int rank = r.get<int>();
      const auto& p = rank < static_cast<int>(opt.placement.size())
                          ? opt.placement[static_cast<std::size_t>(rank)]
                          : batch::RankPlacement{};
      const std::string host = p.node >= 0 && p.node < static_cast<int>(opt.allocation.nodes.size())
                                   ? opt.allocation.nodes[static_cast<std::size_t>(p.node)].host
                                   : std::string("?");
      by_host[host].push_back(rank);
    }
    std::string who;
    for (const auto& [host, ranks] : by_host) {
      std::string list;
      for (std::size_t i = 0; i < ranks.size() && i < 8; ++i)
        list += (list.empty() ? "" : ",") + std::to_string(ranks[i]);
      if (ranks.size() > 8) list += fmt::format(",... ({} ranks)", ranks.size());
      who += fmt::format("{}{} on {}", who.empty() ? "" : "; ", list, host);
    }
    const std::string stopped = stopped_ranks(proc, opt);
    return fmt::format("{}: the scheduler is up, but rank(s) {} never reported{}", head, who,
                       stopped.empty() ? std::string() : "; " + stopped);
  }
  int ranks_here = 0;
  for (const auto& p : proc.processes(true)) ranks_here += p.rank >= 0 ? 1 : 0;
  // A low open-file limit stops mpiexec itself (its pipes to the ranks): say what it is.
  rlimit files{};
  const std::string limit =
      ::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < 1024
          ? fmt::format("; the open-file limit, ulimit -n, is {}", files.rlim_cur)
          : std::string();
  const std::string stopped = stopped_ranks(proc, opt);
  return fmt::format(
      "{}: no rank got through MPI_Init ({} of the job's {} rank(s) run on this "
      "host{}{}){}",
      head, ranks_here, opt.placement.size(), limit, process_limit_hint(),
      stopped.empty() ? std::string() : "; " + stopped);
}

std::string diagnose_job_end(int status, const std::deque<std::string>& log_tail) {
  return describe_job_end(status, log_tail, OomWatch{});
}

batch::LaunchPlan prepare_job(int job, const std::vector<CaseSpec>& remaining,
                              const JobRunnerOptions& opt, JobPlan& plan) {
  plan.cases = remaining;
  plan.case_timeout_s = opt.case_timeout_s;
  plan.measure_ceilings = opt.measure_ceilings;
  plan.trace = opt.trace;
  plan.fresh_ceilings = opt.fresh_ceilings;
  plan.telemetry_period_s = opt.telemetry_period_s;
  plan.telemetry_gpu_min_s = opt.telemetry_gpu_min_s;
  plan.telemetry_counters_s = opt.telemetry_counters_s;
  plan.keep_throttled = opt.keep_throttled;
  plan.lifeline_path = opt.lifeline_path;
  plan.plugins = opt.plugins;
  plan.ab_side = opt.ab_side;
  plan.ab_run = opt.ab_run;
  plan.stream_path = fmt::format("{}/stream-{}.jsonl", opt.workdir, job);
  plan.stop_path = fmt::format("{}/stop", opt.workdir);
  const std::string plan_path = fmt::format("{}/plan-{}.json", opt.workdir, job);
  nlohmann::json pj = plan.to_json();
  pj["launch_epoch"] =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  {
    std::ofstream out(plan_path);
    out << pj.dump();
    if (!out) throw EnvironmentError(fmt::format("cannot write the job plan {}", plan_path));
  }
  batch::LaunchPlan lp = batch::plan_launch(opt.allocation, opt.placement, opt.rank_executable,
                                            {"--plan", plan_path}, opt.launch);
  add_side_environment(lp, opt.env);  // before the defaults: what a side sets, it keeps
  if (!opt.ab_run.empty()) add_ab_mark(lp, opt.ab_run);
  add_rank_environment(lp, opt.placement, opt.launch.extra);
  batch::write_launch_files(lp);  // host lists too long for a command line (thousands of ranks)
  return lp;
}

namespace {

/// Runs one job to its end: follows its records and output, passes stop signals on, ends a
/// stuck job. `done` receives every case record (by run index; each-* cases one per device).
JobEnd follow_job(const batch::LaunchPlan& lp, const JobPlan& plan, int job,
                  const std::vector<CaseSpec>& remaining, const JobRunnerOptions& opt,
                  std::map<int, std::vector<nlohmann::json>>& done, JobRunResult& result) {
  JobEnd end;
  end.oom.note(::getpid());  // the ranks start in the launcher's cgroups (unless moved)
  JobProcess proc(lp, fmt::format("{}/job-{}.log", opt.workdir, job));
  RecordTail records(plan.stream_path);
  FileTail log(fmt::format("{}/job-{}.log", opt.workdir, job));
  double last_activity = now();
  bool started = false;              // its start record came
  nlohmann::json waiting;            // the last startup_wait record's ranks
  std::string last_record = "none";  // what its last record said, for a job that goes quiet
  const double startup_limit = settings::startup_timeout_s();

  auto take_records = [&] {
    for (auto& rec : records.new_records()) {
      last_activity = now();
      const std::string type = rec.value("type", "");
      if (type == "start") {
        started = true;
        if (result.start.is_null()) result.start = rec;
        for (const auto& p : proc.processes()) end.oom.note(p.pid);
      } else if (type == "startup_wait") {
        waiting = rec.value("waiting", nlohmann::json::array());
      } else if (type == "setup" || type == "progress") {
        // A set-up record comes (durably) before any worker hears of the case: a job that dies
        // while the case allocates blames it, not the case before it or the ones after.
        end.running_index = -1;
        end.running_setup = type == "setup";
        end.running_repeat = rec.value("repeat", 0);
        end.running_warmup = rec.value("warmup", false);
        for (const auto& s : remaining)
          if (s.id == rec.value("id", "")) end.running_index = s.index;
        last_record =
            end.running_setup
                ? fmt::format("case {} entering its set-up", one_line(rec.value("id", "")))
                : fmt::format("case {} starting {}", one_line(rec.value("id", "")),
                              end.running_warmup
                                  ? std::string("a warm-up repeat")
                                  : fmt::format("repeat {}", end.running_repeat + 1));
      } else if (type == "case") {
        last_record = fmt::format("case {} finished", one_line(rec.value("id", "")));
        // A job the launcher found stopped may still write the running case's record as it
        // ends (OpenMPI sends SIGCONT before SIGTERM): the record says why it was ended.
        if (!end.hung.empty() && rec.value("status", "") != "ok")
          rec["message"] = rec.value("message", "") + "; " + end.hung;
        if (!result.lost_nodes.empty()) rec["nodes_lost"] = result.lost_nodes;
        // The scheduler numbers cases within its job; map back to the run's index by id (the
        // planned case's id for a device's record).
        for (const auto& s : remaining)
          if (s.id == planned_id_of(rec)) rec["index"] = s.index;
        auto& recs = done[rec.at("index").get<int>()];
        recs.push_back(rec);
        if (case_complete(recs)) end.running_index = -1;
      } else if (type == "end") {
        end.end_seen = rec.value("status", "") == "ok";
      }
      if (opt.on_record) opt.on_record(rec);  // may throw: ~JobProcess ends the job
    }
  };
  auto take_log = [&](bool all) {
    std::vector<std::string> lines = log.new_lines();
    if (all)
      if (std::string rest = log.rest(); !rest.empty()) lines.push_back(rest);
    for (auto& line : lines) {
      say(stderr, terminal_text(line) + "\n");
      end.log_tail.push_back(std::move(line));
      if (end.log_tail.size() > 60) end.log_tail.pop_front();
    }
  };

  while (proc.running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    take_log(false);
    take_records();
    if (opt.on_tick) opt.on_tick();
    if (const int sig = take_stop_signal(); sig != 0) {
      result.stop_signal = sig;
      if (sig == SIGUSR1) {
        // A time-limit warning: the running case finishes, then the scheduler (which looks
        // for the stop file before each case) ends the job cleanly. Not passed on: mpiexec
        // and srun would hand it to the ranks.
        std::ofstream(plan.stop_path) << "SIGUSR1\n";
      } else {
        proc.terminate();
      }
    }
    // A start-up that hangs (a rank stuck in MPI_Init, a starter that cannot fork) is ended.
    if (!started && startup_limit > 0 && proc.terminate_age() == 0 &&
        now() - proc.started() > startup_limit) {
      end.startup_hung = true;
      end.hung = startup_hang(proc, opt, waiting, startup_limit);
      proc.terminate();
    }
    // A stuck job (no record for longer than the case timeout allows) is ended.
    if (started && opt.case_timeout_s > 0 && proc.terminate_age() == 0 &&
        now() - last_activity > opt.case_timeout_s + 30) {
      const std::string stopped = stopped_ranks(proc, opt);
      end.hung = fmt::format("the job stopped answering: no record for {:.0f} s (the last: {}){}",
                             now() - last_activity, last_record,
                             stopped.empty() ? std::string() : "; " + stopped);
      proc.terminate();
    }
    if (proc.terminate_age() > 10) proc.kill_all();
  }
  proc.end(0);  // nothing of its process group lingers
  end.status = proc.status();
  take_log(true);
  take_records();
  return end;
}

}  // namespace

/// "repeat 2", "the warm-up", "its set-up": where the running case was when its job ended.
std::string running_step(const JobEnd& end) {
  if (end.running_setup) return "its set-up";
  return end.running_warmup ? std::string("the warm-up")
                            : fmt::format("repeat {}", end.running_repeat + 1);
}

/// "node3 stopped answering during repeat 2" for the case that ran when `lost` were lost.
std::string lost_message(const std::vector<std::string>& lost, const JobEnd& end,
                         const std::string& diagnosis) {
  std::string names;
  for (const auto& n : lost) names += (names.empty() ? "" : ", ") + n;
  return fmt::format("{} stopped answering during {} ({})", names, running_step(end), diagnosis);
}

JobRunResult run_jobs(const std::vector<CaseSpec>& cases, const JobRunnerOptions& options) {
  JobRunnerOptions opt = options;  // a lost node leaves the allocation
  JobRunResult result;
  std::map<int, std::vector<nlohmann::json>> done;  // by case index
  auto complete = [&](int index) {
    const auto it = done.find(index);
    return it != done.end() && case_complete(it->second);
  };
  std::vector<CaseSpec> remaining = cases;
  const int max_jobs = static_cast<int>(cases.size()) + 1;
  // A case that did not finish: its record, or one per device it did not report.
  auto record = [&](const CaseSpec& s, const std::string& status, const std::string& msg) {
    auto& recs = done[s.index];
    for (auto& r : unfinished_records(s, not_run_record(s, status, msg), result.start, recs)) {
      recs.push_back(std::move(r));
      if (opt.on_record) opt.on_record(recs.back());
    }
  };

  while (!remaining.empty() && result.stop_signal == 0) {
    if (result.jobs >= max_jobs) {
      for (const auto& s : remaining)
        record(s, "failed", "not run: too many MPI jobs failed before it");
      remaining.clear();
      break;
    }
    const int job = result.jobs++;
    JobPlan plan;
    const batch::LaunchPlan lp = prepare_job(job, remaining, opt, plan);
    const JobEnd end = follow_job(lp, plan, job, remaining, opt, done, result);
    const std::string diagnosis = diagnose(end);
    const bool stopped = result.stop_signal != 0;
    std::vector<std::string> lost;
    if (!end.clean() && !stopped) {
      lost = batch::lost_nodes(opt.allocation);
      // The launcher's own node (the first) cannot be lost and leave the launcher running.
      if (!lost.empty() && (lost.size() >= opt.allocation.nodes.size() ||
                            lost.front() == opt.allocation.nodes.front().host))
        lost.clear();
    }
    if (!end.clean() && end.running_index >= 0 && !complete(end.running_index)) {
      for (const auto& s : remaining)
        if (s.index == end.running_index)
          record(s, "failed",
                 stopped         ? fmt::format("interrupted by {} while running ({})",
                                               signal_name(result.stop_signal), diagnosis)
                 : !lost.empty() ? lost_message(lost, end, diagnosis)
                                 : fmt::format("failed: the job ended during {} ({})",
                                               running_step(end), diagnosis));
    }
    if (!lost.empty()) {
      result.lost_nodes.insert(result.lost_nodes.end(), lost.begin(), lost.end());
      opt.allocation = batch::without_nodes(opt.allocation, lost);
      opt.placement = batch::place_ranks(opt.allocation);
      say(stderr, fmt::format("scalebench: {}; the remaining cases run on {} node(s)\n",
                              lost_message(lost, end, diagnosis), opt.allocation.nodes.size()));
    }
    if (!end.clean() && !stopped && WIFEXITED(end.status) && WEXITSTATUS(end.status) == 127)
      throw EnvironmentError(fmt::format(
          "cannot start the MPI job ({}): is {} installed? Set SCALEBENCH_MPIEXEC to the MPI "
          "launcher",
          diagnosis, lp.argv.front()));
    std::vector<CaseSpec> next;
    for (const auto& s : remaining)
      if (!complete(s.index)) next.push_back(s);
    if (end.startup_hung && !stopped) {
      // An environment problem (exit 3): a first job that never started leaves no report; a
      // fresh job after a crash records the cases it could not run, and the run stops.
      if (result.start.is_null()) throw EnvironmentError(diagnosis);
      for (const auto& s : next) record(s, "failed", fmt::format("not run: {}", diagnosis));
      result.environment_error = diagnosis;
      next.clear();
    }
    if (!end.clean() && next.size() == remaining.size() && end.running_index < 0 && !stopped &&
        lost.empty()) {
      // The job died before running anything: retrying would loop.
      if (result.start.is_null())
        throw EnvironmentError(
            fmt::format("the MPI job failed to start: {}{}", diagnosis, process_limit_hint()));
      for (const auto& s : next) record(s, "failed", fmt::format("not run: {}", diagnosis));
      next.clear();
    }
    remaining = std::move(next);
  }
  for (const auto& s : remaining) {
    if (complete(s.index)) continue;
    auto& recs = done[s.index];
    const nlohmann::json whole =
        not_run_record(s, "skipped",
                       fmt::format("not run: stopped by {}", result.stop_signal != 0
                                                                 ? signal_name(result.stop_signal)
                                                                 : std::string("the launcher")));
    for (auto& r : unfinished_records(s, whole, result.start, recs)) recs.push_back(std::move(r));
  }
  for (const auto& s : cases)
    for (const auto& r : done.at(s.index)) result.cases.push_back(r);
  return result;
}

}  // namespace sb
