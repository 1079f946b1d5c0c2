// `scalebench scale` (scale_command.hpp).
#include "scale_command.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <thread>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "batch/allocation.hpp"
#include "batch/fleet_folder.hpp"
#include "batch/sweep_submit.hpp"
#include "console.hpp"
#include "merge_command.hpp"
#include "scalebench/error.hpp"
#include "scalebench/job_plan.hpp"
#include "scalebench/scaling.hpp"
#include "scalebench/system_info.hpp"
#include "scalebench/utc_time.hpp"
#include "stop_signals.hpp"

namespace fs = std::filesystem;

namespace sb {
namespace {

struct ScaleOptions {
  std::string nodes;
  std::string mode = "strong";
  std::string dir;
  int step = 0;
  std::vector<std::string> run_args;
};

std::string utc_compact() {
  const std::string now = utc_now();  // 2026-12-02T10:00:00.123Z
  std::string out;
  for (char c : now.substr(0, 19))
    if (c != '-' && c != ':') out.push_back(c);
  return out + "Z";
}

/// Runs `argv` in a process group of its own (a terminal's Ctrl-C reaches this process, which
/// passes it on once); stop signals received meanwhile are forwarded. Returns the exit code as a
/// shell gives it (128 + N for a signal N), and in `stopped` the stop signal that came, if any.
int run_child(const std::vector<std::string>& argv, int& stopped) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) throw EnvironmentError("cannot start scalebench run: fork failed");
  if (pid == 0) {
    ::setpgid(0, 0);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  ::setpgid(pid, pid);
  int status = 0;
  while (true) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (const int sig = take_stop_signal(); sig != 0) {
      stopped = sig;
      ::kill(pid, sig);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return WIFEXITED(status) ? WEXITSTATUS(status) : kExitFailed;
}

int scale_command(const ScaleOptions& o, const std::vector<std::string>& argv) {
  const std::vector<int> counts = batch::parse_node_counts(o.nodes, "--nodes");
  if (o.mode != "strong" && o.mode != "weak")
    throw UsageError(fmt::format("--mode '{}' is not strong or weak", one_line(o.mode)));
  if (o.step != 0 && std::find(counts.begin(), counts.end(), o.step) == counts.end())
    throw UsageError(
        fmt::format("--step {} is not one of the study's node counts ({})", o.step, o.nodes));
  for (const auto& a : o.run_args)
    for (const char* own : {"--out", "--nodes", "--scaling", "--scale-factor", "--resume"})
      if (a == own || a.rfind(std::string(own) + "=", 0) == 0)
        throw UsageError(fmt::format(
            "run option {}: scale sets it for each node count (the reports go into --dir)", own));
  const std::vector<int> to_run = o.step != 0 ? std::vector<int>{o.step} : counts;
  const batch::Allocation alloc =
      batch::detect_allocation(batch::current_environment(), physical_cores(), 0, host_name());
  if (static_cast<std::size_t>(to_run.back()) > alloc.nodes.size())
    throw UsageError(fmt::format(
        "scale --nodes {}: this {} has {} node(s); run it inside an allocation of {} "
        "(salloc -N {}), or let `scalebench submit --scaling` make one",
        o.nodes, alloc.scheduler == "local" ? std::string("machine") : alloc.scheduler + " job",
        alloc.nodes.size(), to_run.back(), to_run.back()));
  const std::string dir = o.dir.empty() ? "scalebench-scaling-" + utc_compact() : o.dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (!fs::is_directory(dir, ec))
    throw UsageError(fmt::format("--dir {}: cannot create the folder", one_line(dir)));

  std::error_code self_ec;
  const std::string self = fs::read_symlink("/proc/self/exe", self_ec).string();
  install_stop_signals();
  int worst = kExitOk, stopped = 0;
  for (const int k : to_run) {
    const double factor = static_cast<double>(k) / static_cast<double>(counts.front());
    std::vector<std::string> child{self_ec ? std::string("scalebench") : self, "run"};
    child.insert(child.end(), o.run_args.begin(), o.run_args.end());
    child.insert(child.end(), {"--nodes", std::to_string(k), "--scaling", o.mode});
    if (o.mode == "weak" && k != counts.front())
      child.insert(child.end(), {"--scale-factor", fmt::format("{:.17g}", factor)});
    const std::string out = (fs::path(dir) / fmt::format("nodes-{}.h5", k)).string();
    child.insert(child.end(), {"--out", out});
    sayf(stderr, "scalebench: {} scaling, {} node(s){}: {}\n", o.mode, k,
         o.mode == "weak" ? fmt::format(", problems {:g}x", factor) : std::string(), out);
    const int code = run_child(child, stopped);
    if (code != kExitOk)
      sayf(stderr, "scalebench: the run on {} node(s) exited with {}\n", k, code);
    if (code == kExitUsage || code == kExitEnvironment || stopped != 0 || code >= 128) {
      worst = code;
      break;
    }
    worst = std::max(worst, code);
  }

  // Everything the folder holds so far (a chain's earlier jobs too) into one report.
  MergeRequest m;
  m.inputs = {dir};
  m.out = (fs::path(dir) / "scaling.h5").string();
  for (const auto& a : argv) m.command_line += (m.command_line.empty() ? "" : " ") + a;
  try {
    std::string written;
    const nlohmann::json model = merge_into(m, &written);
    say(stdout, results::format_scaling_text(model));
    sayf(stderr, "scalebench: scaling study merged into {}\n", written);
  } catch (const UsageError& e) {
    sayf(stderr, "scalebench: no merged report: {}\n", one_line(e.what()));
    if (worst == kExitOk) worst = kExitFailed;
  }
  if (stopped != 0) return stop_exit_code(stopped) == 0 ? worst : stop_exit_code(stopped);
  return worst;
}

}  // namespace

void add_scale_command(CLI::App& app, int& exit_code, const std::vector<std::string>& argv) {
  auto o = std::make_shared<ScaleOptions>();
  CLI::App* sub = app.add_subcommand(
      "scale",
      "A scaling study inside one allocation: `scalebench run` at every node count, strong or "
      "weak, merged into one report with the scaling table (docs/batch.md)");
  sub->add_option("--nodes", o->nodes, "node counts: 1,2,4,8, 1-4 or 1:16:*2")->required();
  sub->add_option("--mode", o->mode, "strong (the same problem) or weak (grown with the nodes)")
      ->capture_default_str();
  sub->add_option("--dir", o->dir,
                  "folder of the study's reports (default scalebench-scaling-<UTC>)");
  sub->add_option("--step", o->step,
                  "run only this node count of the study (one job of a chain), then merge");
  sub->add_option("run_options", o->run_args, "options of `scalebench run`, after --");
  sub->footer(
      "Example: scalebench scale --nodes 1,2,4 --mode weak -- --preset small --workloads "
      "subset-mean --paths multi-cpu");
  sub->callback([o, &exit_code, argv] { exit_code = scale_command(*o, argv); });
}

}  // namespace sb
