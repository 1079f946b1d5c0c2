#include "job_runner.hpp"
#include "rank_environment.hpp"

#include <signal.h>
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
  std::deque<std::string> log_tail;  ///< the job's last output lines
  [[nodiscard]] bool clean() const {
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 && end_seen;
  }
};

}  // namespace

std::string diagnose_job_end(int status, const std::deque<std::string>& log_tail) {
  std::string d;
  if (WIFEXITED(status)) {
    d = fmt::format("MPI job exited with status {}", WEXITSTATUS(status));
  } else if (WIFSIGNALED(status)) {
    d = fmt::format("MPI job killed by signal {}", WTERMSIG(status));
  }
  for (const auto& line : log_tail) {
    if (line.find("exited on signal") != std::string::npos ||
        line.find("noticed that process rank") != std::string::npos ||
        line.find("scalebench-rank") != std::string::npos ||
        line.find("cannot start") != std::string::npos ||
        line.find("killed") != std::string::npos || line.find("Killed") != std::string::npos) {
      d += ": " + one_line(line);
      break;
    }
  }
  return d;
}

namespace {

/// The job's end in words: its exit status and the most telling line of its output.
std::string diagnose(const JobEnd& end) {
  return diagnose_job_end(end.status, end.log_tail);
}

}  // namespace

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
  JobProcess proc(lp, fmt::format("{}/job-{}.log", opt.workdir, job));
  RecordTail records(plan.stream_path);
  FileTail log(fmt::format("{}/job-{}.log", opt.workdir, job));
  double last_activity = now();

  auto take_records = [&] {
    for (auto& rec : records.new_records()) {
      last_activity = now();
      const std::string type = rec.value("type", "");
      if (type == "start") {
        if (result.start.is_null()) result.start = rec;
      } else if (type == "progress") {
        end.running_index = -1;
        end.running_repeat = rec.value("repeat", 0);
        end.running_warmup = rec.value("warmup", false);
        for (const auto& s : remaining)
          if (s.id == rec.value("id", "")) end.running_index = s.index;
      } else if (type == "case") {
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
      say(stderr, line + "\n");
      end.log_tail.push_back(std::move(line));
      if (end.log_tail.size() > 60) end.log_tail.pop_front();
    }
  };

  while (proc.running()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    take_log(false);
    take_records();
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
    // A stuck job (no record for longer than the case timeout allows) is ended.
    if (opt.case_timeout_s > 0 && proc.terminate_age() == 0 &&
        now() - last_activity > opt.case_timeout_s + 30)
      proc.terminate();
    if (proc.terminate_age() > 10) proc.kill_all();
  }
  proc.end(0);  // nothing of its process group lingers
  end.status = proc.status();
  take_log(true);
  take_records();
  return end;
}

}  // namespace

/// "node3 stopped answering during repeat 2" for the case that ran when `lost` were lost.
std::string lost_message(const std::vector<std::string>& lost, const JobEnd& end,
                         const std::string& diagnosis) {
  std::string names;
  for (const auto& n : lost) names += (names.empty() ? "" : ", ") + n;
  return fmt::format("{} stopped answering during {} ({})", names,
                     end.running_warmup ? std::string("the warm-up")
                                        : fmt::format("repeat {}", end.running_repeat + 1),
                     diagnosis);
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
                 stopped ? fmt::format("interrupted by {} while running ({})",
                                       signal_name(result.stop_signal), diagnosis)
                 : !lost.empty()
                     ? lost_message(lost, end, diagnosis)
                     : fmt::format("failed: the job ended while it ran ({})", diagnosis));
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
    if (!end.clean() && next.size() == remaining.size() && end.running_index < 0 && !stopped &&
        lost.empty()) {
      // The job died before running anything: retrying would loop.
      if (result.start.is_null())
        throw EnvironmentError(fmt::format("the MPI job failed to start: {}", diagnosis));
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
