#include "job_runner.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "scalebench/clock.hpp"
#include "scalebench/error.hpp"
#include "scalebench/job_plan.hpp"

extern char** environ;

namespace sb {
namespace {

volatile std::sig_atomic_t g_signal = 0;  // last signal received

void on_signal(int sig) {
  g_signal = sig;
}

std::string signal_name(int sig) {
  switch (sig) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGUSR1:
      return "SIGUSR1";
    default:
      return fmt::format("signal {}", sig);
  }
}

/// Exit code the scheduler uses after ending a job on purpose (see runtime/src/rank.hpp).
constexpr int kExitRestart = 42;

struct Child {
  pid_t pid = -1;
  int err_fd = -1;
};

Child spawn(const batch::LaunchPlan& plan) {
  if (plan.argv.empty()) throw EnvironmentError("empty MPI launch command");
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0)
    throw EnvironmentError(fmt::format("pipe: {}", std::strerror(errno)));
  std::vector<std::string> envs;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string kv(*e);
    const auto eq = kv.find('=');
    if (eq != std::string::npos && plan.env.count(kv.substr(0, eq)) != 0) continue;
    envs.push_back(kv);
  }
  for (const auto& [k, v] : plan.env) envs.push_back(k + "=" + v);
  std::vector<char*> argv, envp;
  for (const auto& a : plan.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (const auto& e : envs) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t pid = fork();
  if (pid < 0) throw EnvironmentError(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    setpgid(0, 0);  // own process group: terminal Ctrl-C reaches the launcher only
    dup2(fds[1], STDERR_FILENO);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGUSR1, SIG_DFL);
    execvpe(argv[0], argv.data(), envp.data());
    const std::string msg = fmt::format("cannot start {}: {}\n", argv[0], std::strerror(errno));
    (void)!write(STDERR_FILENO, msg.data(), msg.size());
    _exit(127);
  }
  setpgid(pid, pid);
  close(fds[1]);
  fcntl(fds[0], F_SETFL, O_NONBLOCK);
  return {pid, fds[0]};
}

/// Follows a JSON-lines file as it grows.
class StreamTail {
 public:
  explicit StreamTail(std::string path) : path_(std::move(path)) {}
  std::vector<nlohmann::json> read_new() {
    std::vector<nlohmann::json> out;
    std::ifstream in(path_, std::ios::binary);
    if (!in) return out;
    in.seekg(static_cast<std::streamoff>(offset_));
    std::string chunk((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::size_t start = 0;
    while (true) {
      const auto nl = chunk.find('\n', start);
      if (nl == std::string::npos) break;  // a partial line waits for its end
      const std::string line = chunk.substr(start, nl - start);
      start = nl + 1;
      if (line.empty()) continue;
      try {
        out.push_back(nlohmann::json::parse(line));
      } catch (const nlohmann::json::exception&) {
        // A torn line from a dying job: skip it.
      }
    }
    offset_ += start;
    return out;
  }

 private:
  std::string path_;
  std::size_t offset_ = 0;
};

nlohmann::json not_run_record(const CaseSpec& s, const std::string& status,
                              const std::string& msg) {
  return {{"type", "case"},
          {"index", s.index},
          {"id", s.id},
          {"workload", s.workload},
          {"path", std::string(to_string(s.path))},
          {"params", s.params.to_json()},
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

/// Environment for a job whose ranks all share one node, making MPI_Init and mpiexec cheaper:
/// - OpenMPI: pml ob1 over the shared-memory BTL (OMPI_MCA_pml=ob1 and a BTL exclusion list,
///   valid for OpenMPI 4 "vader" and 5 "sm" alike). Without it, MPI_Init tries every network
///   stack first (UCX, libfabric/PSM through pml cm, verbs): 0.25 s on a 2-core VM, 0.04 s
///   with it; on a GPU node UCX also brings up its CUDA transports in every rank.
/// - hwloc (in mpiexec and every rank): no OpenCL / GL / CUDA / NVML discovery plugins, which
///   would start GPU runtimes only to list devices that MPI does not use.
/// Each is left alone when the user set it (OMPI_MCA_pml, OMPI_MCA_btl, HWLOC_PLUGINS_BLACKLIST
/// or HWLOC_COMPONENTS in the environment, or pml/btl in SCALEBENCH_MPIEXEC_ARGS), and all of it
/// when SCALEBENCH_MPI_TUNING=0. Variables of other MPIs' names are ignored by them. Jobs over
/// several nodes get nothing: their transports are the MPI's own business.
void tune_single_node_job(batch::LaunchPlan& lp, const JobRunnerOptions& opt) {
  if (const char* t = std::getenv("SCALEBENCH_MPI_TUNING");
      t != nullptr && std::strcmp(t, "0") == 0)
    return;
  std::set<int> nodes;
  for (const auto& p : opt.placement) nodes.insert(p.node);
  if (nodes.size() != 1) return;
  auto user_set = [&](const char* name) {
    return std::getenv(name) != nullptr || lp.env.count(name) != 0;
  };
  auto in_extra = [&](const char* word) {
    for (const auto& a : opt.launch.extra)
      if (a == word || a.find(std::string("_") + word) != std::string::npos) return true;
    return false;
  };
  if (!user_set("OMPI_MCA_pml") && !user_set("OMPI_MCA_btl") && !in_extra("pml") &&
      !in_extra("btl")) {
    lp.env["OMPI_MCA_pml"] = "ob1";
    lp.env["OMPI_MCA_btl"] = "^tcp,openib,ofi,uct,usnic,smcuda";
  }
  if (!user_set("HWLOC_PLUGINS_BLACKLIST") && !user_set("HWLOC_COMPONENTS"))
    lp.env["HWLOC_PLUGINS_BLACKLIST"] =
        "hwloc_opencl,hwloc_gl,hwloc_cuda,hwloc_nvml,hwloc_rsmi,hwloc_levelzero";
}

}  // namespace

void install_signal_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: poll() wakes up
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGUSR1, &sa, nullptr);
  signal(SIGPIPE, SIG_IGN);
}

JobRunResult run_jobs(const std::vector<CaseSpec>& cases, const JobRunnerOptions& opt) {
  JobRunResult result;
  std::map<int, nlohmann::json> done;  // by case index
  std::vector<CaseSpec> remaining = cases;
  bool stop = false;
  const int max_jobs = static_cast<int>(cases.size()) + 1;

  while (!remaining.empty() && !stop) {
    if (result.jobs >= max_jobs) {
      for (const auto& s : remaining)
        done[s.index] = not_run_record(s, "failed", "not run: too many MPI jobs failed before it");
      break;
    }
    const int job = result.jobs++;
    JobPlan plan;
    plan.cases = remaining;
    plan.case_timeout_s = opt.case_timeout_s;
    plan.measure_ceilings = opt.measure_ceilings;
    plan.trace = opt.trace;
    plan.stream_path = fmt::format("{}/stream-{}.jsonl", opt.workdir, job);
    plan.stop_path = fmt::format("{}/stop", opt.workdir);
    const std::string plan_path = fmt::format("{}/plan-{}.json", opt.workdir, job);
    nlohmann::json pj = plan.to_json();
    pj["launch_epoch"] =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    {
      std::ofstream out(plan_path);
      out << pj.dump();
      if (!out) throw UsageError(fmt::format("cannot write {}", plan_path));
    }
    batch::LaunchPlan lp = batch::plan_launch(opt.allocation, opt.placement, opt.rank_executable,
                                              {"--plan", plan_path}, opt.launch);
    tune_single_node_job(lp, opt);
    batch::write_launch_files(lp);  // host lists too long for a command line (thousands of ranks)
    const Child child = spawn(lp);
    StreamTail tail(plan.stream_path);
    std::deque<std::string> err_tail;
    std::string err_partial;
    std::string running_id;  // from progress records
    int running_index = -1;
    bool end_seen = false;
    int status = 0;
    double last_activity = now();
    double term_sent = 0;

    auto take_records = [&] {
      for (auto& rec : tail.read_new()) {
        last_activity = now();
        const std::string type = rec.value("type", "");
        if (type == "start") {
          if (result.start.is_null()) result.start = rec;
        } else if (type == "progress") {
          running_id = rec.value("id", "");
          running_index = -1;
          for (const auto& s : remaining)
            if (s.id == running_id) running_index = s.index;
        } else if (type == "case") {
          // The scheduler numbers cases within its job; map back to the run's index by id.
          for (const auto& s : remaining)
            if (s.id == rec.value("id", "")) rec["index"] = s.index;
          done[rec.at("index").get<int>()] = rec;
          running_id.clear();
          running_index = -1;

        } else if (type == "end") {
          end_seen = rec.value("status", "") == "ok";
        }
        if (opt.on_record) opt.on_record(rec);
      }
    };
    auto read_stderr = [&] {
      char buf[4096];
      while (true) {
        const ssize_t n = read(child.err_fd, buf, sizeof buf);
        if (n <= 0) break;
        (void)!write(STDERR_FILENO, buf, static_cast<std::size_t>(n));
        err_partial.append(buf, static_cast<std::size_t>(n));
        std::size_t nl;
        while ((nl = err_partial.find('\n')) != std::string::npos) {
          err_tail.push_back(err_partial.substr(0, nl));
          err_partial.erase(0, nl + 1);
          if (err_tail.size() > 60) err_tail.pop_front();
        }
      }
    };

    bool exited = false;
    while (!exited) {
      pollfd pfd{child.err_fd, POLLIN, 0};
      poll(&pfd, 1, 100);
      read_stderr();
      take_records();
      if (g_signal != 0) {
        const int sig = g_signal;
        g_signal = 0;
        result.stopped_by = signal_name(sig);
        stop = true;
        if (sig == SIGUSR1) {
          // Time-limit warning: let the running case finish, then end the job. The signal is
          // not passed on: mpiexec and srun would hand it to the ranks.
          // The scheduler checks the stop file before each case and ends the job cleanly.
          std::ofstream(plan.stop_path) << "SIGUSR1\n";
        } else if (term_sent == 0) {
          kill(-child.pid, SIGTERM);
          term_sent = now();
        }
      }
      // A stuck job (no record for longer than the case timeout allows) is ended.
      if (opt.case_timeout_s > 0 && term_sent == 0 &&
          now() - last_activity > opt.case_timeout_s + 30) {
        kill(-child.pid, SIGTERM);
        term_sent = now();
      }
      if (term_sent > 0 && now() - term_sent > 10) kill(-child.pid, SIGKILL);
      const pid_t w = waitpid(child.pid, &status, WNOHANG);
      if (w == child.pid) exited = true;
    }
    // The job is gone; make sure nothing of its process group lingers, then read what's left.
    kill(-child.pid, SIGKILL);
    read_stderr();
    close(child.err_fd);
    take_records();

    std::string diagnosis;
    if (WIFEXITED(status)) {
      diagnosis = fmt::format("MPI job exited with status {}", WEXITSTATUS(status));
    } else if (WIFSIGNALED(status)) {
      diagnosis = fmt::format("MPI job killed by signal {}", WTERMSIG(status));
    }
    for (const auto& line : err_tail) {
      if (line.find("exited on signal") != std::string::npos ||
          line.find("noticed that process rank") != std::string::npos ||
          line.find("scalebench-rank") != std::string::npos ||
          line.find("killed") != std::string::npos || line.find("Killed") != std::string::npos) {
        diagnosis += ": " + line;
        break;
      }
    }
    const bool clean = WIFEXITED(status) && WEXITSTATUS(status) == 0 && end_seen;
    if (!clean && running_index >= 0 && done.count(running_index) == 0) {
      for (const auto& s : remaining) {
        if (s.index != running_index) continue;
        const std::string why =
            stop ? fmt::format("interrupted by {} while running ({})", result.stopped_by, diagnosis)
                 : fmt::format("failed: the job ended while it ran ({})", diagnosis);
        done[s.index] = not_run_record(s, "failed", why);
        if (opt.on_record) opt.on_record(done[s.index]);
      }
    }
    if (!clean && !stop && WIFEXITED(status) && WEXITSTATUS(status) == 127)
      throw EnvironmentError(
          fmt::format("cannot start the MPI job ({}): is {} installed? Set "
                      "SCALEBENCH_MPIEXEC to the MPI launcher",
                      diagnosis, lp.argv.front()));
    std::vector<CaseSpec> next;
    for (const auto& s : remaining)
      if (done.count(s.index) == 0) next.push_back(s);
    if (!clean && next.size() == remaining.size() && running_index < 0 && !stop) {
      // The job died before running anything: retrying would loop. Record and stop.
      for (const auto& s : next) {
        done[s.index] = not_run_record(s, "failed", fmt::format("not run: {}", diagnosis));
        if (opt.on_record) opt.on_record(done[s.index]);
      }
      next.clear();
      if (result.start.is_null())
        throw EnvironmentError(fmt::format("the MPI job failed to start: {}", diagnosis));
    }
    remaining = std::move(next);
    (void)kExitRestart;
  }
  for (const auto& s : remaining)
    if (done.count(s.index) == 0)
      done[s.index] = not_run_record(
          s, "skipped",
          fmt::format("not run: stopped by {}",
                      result.stopped_by.empty() ? "the launcher" : result.stopped_by));
  for (const auto& s : cases) result.cases.push_back(done.at(s.index));
  return result;
}

}  // namespace sb
