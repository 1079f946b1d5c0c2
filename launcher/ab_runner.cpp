#include "ab_runner.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "console.hpp"
#include "file_tail.hpp"
#include "job_process.hpp"
#include "scalebench/ab_protocol.hpp"
#include "scalebench/clock.hpp"
#include "scalebench/error.hpp"
#include "scalebench/stats.hpp"
#include "stop_signals.hpp"

namespace sb {
namespace {

using json = nlohmann::json;

/// Wakes the launcher when a job writes to its folder (inotify), so that a turn's end is seen at
/// once without polling the files between; where inotify sees nothing (a network file system
/// written from another host) the timeout reads them anyway.
class ChangeWatch {
 public:
  ChangeWatch() : fd_(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {}
  ~ChangeWatch() {
    if (fd_ >= 0) ::close(fd_);
  }
  ChangeWatch(const ChangeWatch&) = delete;
  ChangeWatch& operator=(const ChangeWatch&) = delete;
  void add(const std::string& dir) {
    if (fd_ >= 0) (void)::inotify_add_watch(fd_, dir.c_str(), IN_MODIFY | IN_CREATE);
  }
  /// Up to `timeout_ms` for a change (a signal ends it early too).
  void wait(int timeout_ms) {
    if (fd_ < 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(timeout_ms));
      return;
    }
    pollfd p{fd_, POLLIN, 0};
    if (::poll(&p, 1, timeout_ms) > 0) {
      alignas(inotify_event) char buf[4096];
      while (::read(fd_, buf, sizeof buf) > 0) {
      }
    }
  }

 private:
  int fd_ = -1;
};

/// One side's MPI job (a fresh one after a crash) and what it has said.
struct SideJob {
  int side = 0;
  std::string name;
  JobRunnerOptions opt;
  std::vector<CaseSpec> cases;  ///< all the side's planned cases
  std::unique_ptr<JobProcess> proc;
  std::unique_ptr<RecordTail> records;
  std::unique_ptr<FileTail> log;
  std::deque<std::string> log_tail;
  int jobs = 0;
  bool started = false;       ///< this job's start record arrived
  bool gave_up = false;       ///< no more jobs for this side
  int began = -1;             ///< the case it was told to begin
  int ready = -1;             ///< the case it has set up (ab_ready), waiting for turns
  std::optional<json> reply;  ///< the last ab_turn record
  std::map<int, json> done;   ///< its case records, by index
  /// The totals of the case it runs, for a record of it should the job die.
  std::vector<std::pair<double, int>> running;  ///< (total, turn)
  double last_activity = 0;
  bool owes = false;  ///< a command sent, its answer (ready, turn or case record) not yet in
  bool input_closed = false;  ///< its commands ended here (`stop`, then the end of input)
};

class AbRunner {
 public:
  explicit AbRunner(const AbRunOptions& o) : o_(o), rng_(o.seed) {
    for (int s = 0; s < 2; ++s) {
      SideJob& j = side_[s];
      j.side = s;
      j.name = o.sides[s].name;
      j.opt = o.jobs;
      j.opt.rank_executable = o.sides[s].rank_program;
      j.opt.plugins = o.sides[s].plugins;
      j.opt.env = o.sides[s].env;
      j.opt.ab_side = j.name;
      j.opt.ab_run = std::filesystem::absolute(o.jobs.workdir).string();  // one per run
      j.opt.launch.ab_side = true;
      if (!o.sides[s].mpiexec.empty()) j.opt.launch.mpiexec = o.sides[s].mpiexec;
      // The baseline's plans and streams in a folder of their own: `scalebench recover`
      // reads the current side's, which are the report's cases.
      if (j.name == ab::kBaseline) {
        j.opt.workdir = (std::filesystem::path(o.jobs.workdir) / "baseline").string();
        std::filesystem::create_directories(j.opt.workdir);
      }
      j.cases = o.cases[s];
      watch_.add(j.opt.workdir);
    }
    t0_ = now();
  }

  AbRunResult run() {
    const std::size_t n = side_[0].cases.size();
    for (int s = 0; s < 2 && !stopping(); ++s) {
      start_job(side_[s], side_[s].cases);
      wait_until([&] { return side_[s].started || !side_[s].proc; });
    }
    for (std::size_t k = 0; k < n && !stopping(); ++k) run_case(k);
    finish();
    return std::move(result_);
  }

 private:
  [[nodiscard]] bool stopping() const { return result_.stop_signal != 0 || stop_after_case_; }

  /// Starts a job of side `j` for `cases` (those it has not done).
  void start_job(SideJob& j, const std::vector<CaseSpec>& cases) {
    std::vector<CaseSpec> todo;
    for (const auto& c : cases)
      if (j.done.count(c.index) == 0) todo.push_back(c);
    if (todo.empty()) return;
    if (j.jobs >= static_cast<int>(j.cases.size()) + 1) {
      j.gave_up = true;
      for (const auto& c : todo)
        record(j, c, "failed", "not run: too many MPI jobs failed before it");
      return;
    }
    const int job = j.jobs++;
    ++result_.jobs;
    JobPlan plan;
    const batch::LaunchPlan lp = prepare_job(job, todo, j.opt, plan);
    const std::string log = fmt::format("{}/job-{}.log", j.opt.workdir, job);
    j.proc = std::make_unique<JobProcess>(lp, log, /*commands=*/true);
    j.records = std::make_unique<RecordTail>(plan.stream_path);
    j.log = std::make_unique<FileTail>(log);
    j.log_tail.clear();
    j.started = false;
    j.input_closed = false;
    j.began = j.ready = -1;
    j.reply.reset();
    j.last_activity = now();
  }

  const CaseSpec& spec_of(const SideJob& j, int index) const {
    for (const auto& c : j.cases)
      if (c.index == index) return c;
    throw Error(fmt::format("internal: A/B case index {} not planned", index));
  }

  /// A record of side `j` made here (a case that did not run or did not finish).
  void record(SideJob& j, const CaseSpec& c, const std::string& status, const std::string& msg) {
    take_case(j, not_run_record(c, status, msg));
  }

  void take_case(SideJob& j, json rec) {
    rec["type"] = "case";
    const int index = rec.value("index", -1);
    const json& reps = rec.contains("repeats") ? rec["repeats"] : json();
    if (!j.running.empty() && j.began == index && (!reps.is_array() || reps.empty()) &&
        rec.value("status", "") != "ok") {
      // The timed repeats its turns took before it failed (or its job died) are kept with the
      // failure.
      rec["repeats"] = json::array();
      for (const auto& [total, turn] : j.running)
        rec["repeats"].push_back({{"total", total}, {"turn", turn}});
    }
    if (const auto it = stop_.find(index);
        it != stop_.end() && rec.value("status", "") != "skipped")
      rec["repeat_stop"] = it->second;
    j.done[index] = rec;
    if (j.ready == index) j.ready = -1;
    j.running.clear();
    if (o_.on_record) o_.on_record(j.side, rec);
  }

  /// Reads what both jobs wrote, notices their ends and the run's stop signals.
  void pump() {
    for (SideJob& j : side_) {
      if (!j.proc) continue;
      for (auto& line : j.log->new_lines()) log_line(j, std::move(line));
      take_records(j);
      if (!j.proc->running()) job_ended(j);
    }
    if (const int sig = take_stop_signal(); sig != 0) {
      if (sig == SIGUSR1) {
        stop_after_case_ = true;  // the running case finishes, then no other begins
      } else {
        result_.stop_signal = sig;
        for (SideJob& j : side_)
          if (j.proc) j.proc->terminate();
      }
    }
    for (SideJob& j : side_) {
      if (!j.proc) continue;
      // A stuck job (no record for longer than the case timeout allows) is ended.
      if (o_.jobs.case_timeout_s > 0 && j.proc->terminate_age() == 0 && j.owes &&
          now() - j.last_activity > o_.jobs.case_timeout_s + 30)
        j.proc->terminate();
      if (j.proc->terminate_age() > 10) j.proc->kill_all();
    }
  }

  void log_line(SideJob& j, std::string line) {
    say(stderr, fmt::format("[{}] {}\n", j.name, line));
    j.log_tail.push_back(std::move(line));
    if (j.log_tail.size() > 60) j.log_tail.pop_front();
  }

  void take_records(SideJob& j) {
    for (auto& rec : j.records->new_records()) {
      j.last_activity = now();
      const std::string type = rec.value("type", "");
      if (type == "start") {
        j.started = true;
        if (result_.start[j.side].is_null()) result_.start[j.side] = rec;
        if (o_.on_record) o_.on_record(j.side, rec);
      } else if (type == ab::kRecordReady) {
        j.ready = rec.value("index", -1);
        j.owes = false;
      } else if (type == ab::kRecordTurn) {
        j.reply = rec;
        j.owes = false;
      } else if (type == "case") {
        j.owes = false;
        // The scheduler numbers cases within its job; its records carry the run's index.
        for (const auto& c : j.cases)
          if (c.id == rec.value("id", "")) rec["index"] = c.index;
        // Its commands ended mid-case, and not from here: mpiexec closed the scheduler's input
        // as the job ended around it (a rank killed); the job's end says why (job_ended).
        if (!stopping() && !j.input_closed && rec.value("index", -1) == j.began &&
            rec.value("status", "") == "failed" &&
            rec.value("message", "").find(ab::kInterrupted) != std::string::npos)
          continue;
        take_case(j, std::move(rec));
      } else if (type == "progress") {
        if (o_.on_record) o_.on_record(j.side, rec);
      }
    }
  }

  /// Side `j`'s job has exited: the case it ran is failed (with its timed repeats), and the
  /// side needs a fresh job for the cases left.
  void job_ended(SideJob& j) {
    j.proc->end(0);
    const int status = j.proc->status();
    for (auto& line : j.log->new_lines()) log_line(j, std::move(line));
    if (std::string rest = j.log->rest(); !rest.empty()) log_line(j, std::move(rest));
    take_records(j);
    j.proc.reset();
    const std::string diagnosis = diagnose_job_end(status, j.log_tail);
    const bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    if (!clean && WIFEXITED(status) && WEXITSTATUS(status) == 127)
      throw EnvironmentError(fmt::format(
          "cannot start the {} side's MPI job ({}): is {} installed? Set SCALEBENCH_MPIEXEC or "
          "mpiexec=PATH",
          j.name, diagnosis, j.opt.launch.mpiexec));
    if (!j.started && result_.start[j.side].is_null())
      throw EnvironmentError(
          fmt::format("the {} side's MPI job failed to start: {}", j.name, diagnosis));
    if (j.began >= 0 && j.done.count(j.began) == 0) {
      const CaseSpec& c = spec_of(j, j.began);
      record(j, c, "failed",
             result_.stop_signal != 0
                 ? fmt::format("interrupted by {} while running ({})",
                               signal_name(result_.stop_signal), diagnosis)
                 : fmt::format("failed: the {} side's job ended while it ran ({})", j.name,
                               diagnosis));
    }
    if (!j.started && !clean) {
      // A fresh job that died before its start record: retrying would loop.
      j.gave_up = true;
      for (const auto& c : j.cases)
        if (j.done.count(c.index) == 0)
          record(j, c, "failed", fmt::format("not run: {}", diagnosis));
    }
    j.began = j.ready = -1;
  }

  /// Pumps until `done()`, woken by what the jobs write (ChangeWatch) or every 20 ms.
  template <class Pred>
  void wait_until(Pred done) {
    pump();
    while (!done()) {
      watch_.wait(20);
      pump();
    }
  }

  /// Side `j` holds case `index` set up and waiting, its job alive.
  [[nodiscard]] bool holds(const SideJob& j, int index) const {
    return j.proc && j.ready == index && j.done.count(index) == 0;
  }

  /// Sends side `j` a command it owes an answer to; a job that no longer reads its commands is
  /// ended (false).
  bool command(SideJob& j, const std::string& line) {
    j.last_activity = now();
    j.owes = true;
    if (j.proc->send(line)) return true;
    j.proc->terminate();
    wait_until([&] { return !j.proc; });
    return false;
  }

  /// One turn of side `s`: `repeats` timed repeats (0: the warm-up). False when the side's case
  /// ended instead (it failed, or its job died).
  bool turn(int s, int index, int repeats, int round = -1) {
    SideJob& j = side_[s];
    if (!holds(j, index)) return false;
    const int seq = static_cast<int>(result_.turns.size());
    json row = {{"turn", seq},
                {"index", index},
                {"side", j.name},
                {"repeats", repeats},
                {"first_repeat", static_cast<int>(totals_[s].size())},
                {"round", round},
                {"start_s", now() - t0_}};
    const double t = now();
    j.reply.reset();
    if (!command(j, fmt::format("turn {} {} {}", index, repeats, seq))) return false;
    wait_until([&] {
      return (j.reply && j.reply->value("turn", -1) == seq) || j.done.count(index) != 0 || !j.proc;
    });
    if (!j.reply || j.reply->value("turn", -1) != seq) return false;
    row["wall_s"] = now() - t;
    result_.turns.push_back(row);
    if (repeats == 0) warmup_s_[s] = j.reply->value("warmup_last_s", 0.0);
    for (const auto& v : j.reply->value("totals", json::array())) {
      totals_[s].push_back(v.get<double>());
      if (round >= 0) {
        if (rounds_of_[s].size() <= static_cast<std::size_t>(round))
          rounds_of_[s].resize(static_cast<std::size_t>(round) + 1);
        rounds_of_[s][static_cast<std::size_t>(round)].push_back(v.get<double>());
      }
      j.running.emplace_back(v.get<double>(), seq);
    }
    if (repeats > 0) turn_s_ += now() - t;
    return true;
  }

  /// Timed repeats per turn: --ab-block, or turns of about kAbTurnTargetS from the median
  /// timed repeat so far (the warm-up before the first round), short enough under --repeats
  /// auto that --max-repeats holds kAbMinRounds rounds (the rule is first looked at then).
  /// Sized from the warm-up alone, a first repeat slowed by page faults or a busy moment made
  /// turns of two 4 ms repeats, which one scheduling hiccup decides (tests/gate/ab_trials.sh).
  [[nodiscard]] int block() const {
    if (o_.block > 0) return o_.block;
    std::vector<double> timed(totals_[0].begin(), totals_[0].end());
    timed.insert(timed.end(), totals_[1].begin(), totals_[1].end());
    const double t = timed.empty() ? std::max(warmup_s_[0], warmup_s_[1]) : median(timed);
    if (!(t > 0)) return 1;
    const int most =
        o_.auto_repeats ? std::clamp(o_.max_repeats / kAbMinRounds, 1, kAbMaxBlock) : kAbMaxBlock;
    return std::clamp(static_cast<int>(std::lround(kAbTurnTargetS / t)), 1, most);
  }

  /// How many timed repeats side `s` takes in its next turn of `block` (0: it has enough).
  [[nodiscard]] int want(int s, int block) const {
    const int have = static_cast<int>(totals_[s].size());
    const int cap = o_.auto_repeats ? o_.max_repeats : o_.repeats;
    return std::max(0, std::min(block, cap - have));
  }

  /// Why the case has its repeats, or "" when it needs more.
  [[nodiscard]] std::string stop_reason() {
    const auto n0 = static_cast<int>(totals_[0].size());
    const auto n1 = static_cast<int>(totals_[1].size());
    if (!o_.auto_repeats) return n0 >= o_.repeats && n1 >= o_.repeats ? "count" : "";
    const bool minimum = n0 >= o_.min_repeats && n1 >= o_.min_repeats;
    // The rule is looked at after rounds growing by half each time (8, 12, 18, 27, ...): each
    // look is a chance for chance to decide, so a few looks keep unchanged code from `slower`.
    if (minimum && rounds_ >= next_look_) {
      next_look_ = std::max(next_look_ + 1, (3 * rounds_ + 1) / 2);
      if (is_decided(compare(), o_.compare)) return "decided";
    }
    if (n0 >= o_.max_repeats && n1 >= o_.max_repeats) return "max-repeats";
    if (minimum && turn_s_ >= o_.max_time_s) return "max-time";
    return "";
  }

  /// One side alone (the other skipped the case or failed to set it up): as in a plain run.
  void alone(int s, int index) {
    if (totals_[s].empty() && !turn(s, index, 0)) return;
    const int need = o_.auto_repeats ? o_.min_repeats : o_.repeats;
    while (static_cast<int>(totals_[s].size()) < need)
      if (!turn(s, index,
                std::max(1, std::min(block(), need - static_cast<int>(totals_[s].size())))))
        return;
  }

  void run_case(std::size_t k) {
    const int index = side_[0].cases[k].index;
    totals_ = {};
    rounds_of_ = {};
    next_look_ = kAbMinRounds;
    warmup_s_ = {0, 0};
    round_block_ = 0;
    turn_s_ = 0;
    for (SideJob& j : side_) {
      if (j.done.count(index) != 0 || j.gave_up) continue;
      if (!j.proc) start_job(j, j.cases);
      if (!j.proc) continue;
      // A fresh job (after a crash) says it has started before it is told to begin.
      wait_until([&] { return j.started || !j.proc; });
      if (j.proc) {
        j.began = index;
        if (!command(j, fmt::format("begin {}", index))) continue;
      }
    }
    wait_until([&] {
      return std::all_of(side_.begin(), side_.end(), [&](const SideJob& j) {
        return !j.proc || j.ready == index || j.done.count(index) != 0;
      });
    });
    rounds_ = 0;
    std::string reason;
    if (holds(side_[0], index) && holds(side_[1], index)) {
      reason = side_by_side(index);
    } else {
      reason = "alone";
    }
    // A side left on its own (the other skipped, failed or died) finishes the case alone.
    for (int s = 0; s < 2; ++s)
      if (holds(side_[s], index) && !holds(side_[1 - s], index)) alone(s, index);
    stop_[index] = {{"reason", reason},
                    {"repeats", std::max(totals_[0].size(), totals_[1].size())},
                    {"rounds", rounds_},
                    {"block", round_block_ > 0 ? round_block_ : block()},
                    {"turns_s", turn_s_}};
    if (reason != "alone") say_decision(k, reason);
    for (SideJob& j : side_)
      if (holds(j, index)) (void)command(j, fmt::format("end {}", index));
    wait_until([&] {
      return std::all_of(side_.begin(), side_.end(),
                         [&](const SideJob& j) { return !j.proc || j.done.count(index) != 0; });
    });
    for (SideJob& j : side_) j.began = -1;
  }

  /// The gate's rule on the case's rounds so far (compare.hpp, compare_rounds).
  [[nodiscard]] results::CaseComparison compare() const {
    const std::size_t n = std::min(rounds_of_[0].size(), rounds_of_[1].size());
    const std::vector<std::vector<double>> b(rounds_of_[0].begin(), rounds_of_[0].begin() + n);
    const std::vector<std::vector<double>> c(rounds_of_[1].begin(), rounds_of_[1].begin() + n);
    return results::compare_rounds(b, c, o_.compare);
  }

  /// What the turns of case `k` showed, on stderr as they end (the report's comparison, which
  /// leaves throttled repeats out, has the last word).
  void say_decision(std::size_t k, const std::string& reason) const {
    const results::CaseComparison r = compare();
    std::string what(results::to_string(r.verdict));
    if (std::isfinite(r.change)) what += fmt::format(" {:+.1f}%", 100.0 * r.change);
    if (std::isfinite(r.change_low))
      what += fmt::format(" [{:+.1f}%, {:+.1f}%]", 100.0 * r.change_low, 100.0 * r.change_high);
    if (std::isfinite(r.mde)) what += fmt::format(", MDE {:.1f}%", 100.0 * r.mde);
    sayf(stderr, "scalebench: [{}/{}] A/B {}: {} after {} round(s) of {} repeat(s) a side ({})\n",
         k + 1, side_[0].cases.size(), side_[1].cases[k].id, what, rounds_,
         round_block_ > 0 ? round_block_ : block(),
         reason == "decided" ? "decided"
         : reason == "count" ? "--repeats"
                             : reason);
  }

  /// Both sides hold the case: a warm-up turn each, then rounds in random order.
  std::string side_by_side(int index) {
    std::bernoulli_distribution coin(0.5);
    int first = coin(rng_) ? 1 : 0;
    if (!turn(first, index, 0) || !turn(1 - first, index, 0)) return "alone";
    while (true) {
      first = coin(rng_) ? 1 : 0;
      const int b = block();  // both turns of a round alike
      round_block_ = b;
      for (const int s : {first, 1 - first}) {
        const int r = want(s, b);
        if (r > 0 && !turn(s, index, r, rounds_)) return "alone";
      }
      ++rounds_;
      if (std::string why = stop_reason(); !why.empty()) return why;
      if (result_.stop_signal != 0) return "stopped";
    }
  }

  /// After the last case (or a stop): the jobs end; cases never run are recorded.
  void finish() {
    for (SideJob& j : side_)
      if (j.proc) {
        j.proc->send("stop");
        j.proc->close_input();
        j.input_closed = true;
      }
    const double t = now();
    wait_until([&] {
      const bool gone = std::none_of(side_.begin(), side_.end(),
                                     [](const SideJob& j) { return static_cast<bool>(j.proc); });
      if (!gone && now() - t > 60)
        for (SideJob& j : side_)
          if (j.proc) j.proc->terminate();
      return gone;
    });
    const std::string why = fmt::format(
        "not run: stopped by {}", result_.stop_signal != 0
                                      ? signal_name(result_.stop_signal)
                                      : std::string(stop_after_case_ ? "SIGUSR1" : "the launcher"));
    for (SideJob& j : side_) {
      for (const auto& c : j.cases)
        if (j.done.count(c.index) == 0) record(j, c, "skipped", why);
      for (const auto& c : j.cases) result_.cases[j.side].push_back(j.done.at(c.index));
    }
    if (stop_after_case_ && result_.stop_signal == 0) result_.stop_signal = SIGUSR1;
  }

  const AbRunOptions& o_;
  ChangeWatch watch_;
  std::mt19937_64 rng_;
  std::array<SideJob, 2> side_;
  AbRunResult result_;
  std::map<int, json> stop_;  ///< each case's repeat_stop, set before its records arrive
  std::array<std::vector<double>, 2> totals_;
  std::array<std::vector<std::vector<double>>, 2> rounds_of_;  ///< each side's totals by round
  std::array<double, 2> warmup_s_{0, 0};
  double turn_s_ = 0;             ///< wall time of the case's timed turns, both sides
  int round_block_ = 0;           ///< timed repeats per turn of the case's last round
  int rounds_ = 0;                ///< the case's rounds of timed turns
  int next_look_ = kAbMinRounds;  ///< the round after which the rule is looked at next
  double t0_ = 0;
  bool stop_after_case_ = false;
};

}  // namespace

AbRunResult run_ab_jobs(const AbRunOptions& options) {
  AbRunner runner(options);
  return runner.run();
}

}  // namespace sb
