#include "submit_check.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <regex>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "case_plan.hpp"
#include "cli_suggest.hpp"
#include "console.hpp"
#include "reference_files.hpp"
#include "report_path.hpp"
#include "run_options.hpp"
#include "scalebench/case_forecast.hpp"
#include "scalebench/error.hpp"
#include "scalebench/report.hpp"
#include "scalebench/settings.hpp"

namespace sb {
namespace {

namespace fs = std::filesystem;

constexpr const char* kWhere = "run options after --: ";

/// "64G" with `unit` the scale of a bare number; -1 when it is not a size.
double size_bytes(std::string text, double unit) {
  std::smatch m;
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (!std::regex_match(text, m, std::regex("([0-9]+(?:\\.[0-9]+)?)([kmgt]?)(i?b?)"))) return -1;
  const double v = std::stod(m[1].str());
  const std::string p = m[2].str();
  const double scale = p == "k"             ? 1024.0
                       : p == "m"           ? 1024.0 * 1024
                       : p == "g"           ? 1024.0 * 1024 * 1024
                       : p == "t"           ? 1024.0 * 1024 * 1024 * 1024
                       : m[3].str().empty() ? unit
                                            : 1.0;
  return v * scale;
}

/// The words of `args` parsed by `scalebench run`'s own definitions.
RunOptions parse_run_options(const std::vector<std::string>& args) {
  CLI::App top{"scalebench"};
  CLI::App* run = top.add_subcommand("run", "");
  RunOptions o;
  add_run_options(*run, o);
  std::vector<std::string> words{"run"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<std::string> reversed(words.rbegin(), words.rend());
  try {
    top.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    throw UsageError(std::string(kWhere) +
                     "--help asks for help; `scalebench run --help` gives it");
  } catch (const CLI::CallForAllHelp&) {
    throw UsageError(std::string(kWhere) +
                     "--help asks for help; `scalebench run --help` gives it");
  } catch (const CLI::CallForVersion&) {
    throw UsageError(std::string(kWhere) + "--version is not a run option");
  } catch (const CLI::ParseError& e) {
    throw UsageError(kWhere + explain_parse_error(top, e, "scalebench"));
  }
  return o;
}

}  // namespace

double requested_memory_per_node(const std::string& scheduler,
                                 const std::vector<std::string>& options, int nodes) {
  double out = -1;
  for (const auto& o : options) {
    if (scheduler == "slurm" && o.rfind("--mem=", 0) == 0) {
      const double b = size_bytes(o.substr(6), 1024.0 * 1024);
      if (b > 0) out = b;  // --mem=0: all of a node's memory, not known here
    } else if (scheduler == "pbs" && o.rfind("-l ", 0) == 0) {
      const std::string value = o.substr(3);
      std::smatch m;
      if (std::regex_search(value, m, std::regex("(^|[:,])mem=([0-9.]+[A-Za-z]*)"))) {
        const double b = size_bytes(m[2].str(), 1.0);
        if (b > 0) out = value.rfind("select=", 0) == 0 ? b : b / std::max(1, nodes);
      }
    }
  }
  return out;
}

std::vector<std::string> check_submitted_run(const batch::SubmitRequest& r) {
  const RunOptions o = parse_run_options(r.run_args);
  settings::validate_all();
  const RunRequest req = resolve_request(o);
  std::vector<std::string> notes;
  const std::vector<CaseSpec> cases = plan_cases(req, &notes);
  for (auto& n : notes) n = kWhere + n;
  // Files the job reads, from the folder it starts in (this one).
  if (!o.resume.empty()) {
    std::error_code ec;
    if (fs::exists(o.resume, ec)) {
      (void)results::read_report_isolated(o.resume);
    } else if (r.after.empty()) {
      throw UsageError(fmt::format("{}--resume {}: no such report", kWhere, one_line(o.resume)));
    }
  }
  if (!o.out.empty()) (void)check_report_path(fs::path(o.out), false);
  (void)load_references(o.references);

  const int nodes = std::stoi(r.nodes);
  const int gpus_per_node = std::stoi(r.gpus_per_node);
  const int cpus_per_node = std::stoi(r.cpus_per_node);
  if (o.require_gpu && gpus_per_node == 0)
    notes.push_back(
        "--require-gpu, but the job asks for no GPU (--gpus-per-node): the run exits 3 unless "
        "its nodes show GPUs anyway");
  MachineShape m;
  m.nodes = nodes;
  m.gpus_per_node = gpus_per_node;
  m.gpus = nodes * gpus_per_node;
  m.workers = nodes * std::max(1, gpus_per_node);
  m.threads = cpus_per_node > 0 ? std::max(1, cpus_per_node / std::max(1, gpus_per_node)) : 1;
  m.no_gpu_reason = "the job asks for no GPU (--gpus-per-node)";
  m.host_memory = requested_memory_per_node(r.scheduler, r.batch_options, nodes);
  m.automatic_participants = settings::participants() == "auto";

  std::vector<std::pair<std::string, int>> skipped;
  std::size_t runs = 0;
  double host = -1, gpu = -1;
  std::string host_case, gpu_case;
  for (const auto& c : cases) {
    const CaseForecast f = forecast_case(c, m);
    if (f.outcome == CaseForecast::Outcome::fail) {
      std::string why = f.reason;
      const std::string here = "this node has";
      if (const auto at = why.find(here); at != std::string::npos)
        why.replace(at, here.size(), "the job's nodes have");
      throw UsageError(fmt::format("{}{} would fail in the job: {}", kWhere, c.id, why));
    }
    if (f.outcome == CaseForecast::Outcome::skip) {
      auto it = std::find_if(skipped.begin(), skipped.end(),
                             [&](const auto& p) { return p.first == f.reason; });
      if (it == skipped.end()) it = skipped.insert(skipped.end(), {f.reason, 0});
      ++it->second;
      continue;
    }
    ++runs;
    if (std::isfinite(f.host_bytes) && f.host_bytes > host) {
      host = f.host_bytes;
      host_case = c.id;
    }
    if (std::isfinite(f.device_bytes) && f.device_bytes > gpu) {
      gpu = f.device_bytes;
      gpu_case = c.id;
    }
  }
  if (runs == 0)
    throw UsageError(fmt::format(
        "{}no case would run in this job ({} case(s) skipped: {})", kWhere, cases.size(),
        skipped.empty() ? std::string("none planned") : skipped.front().first));
  for (const auto& [why, n] : skipped)
    notes.push_back(
        fmt::format("{} of {} case(s) will be skipped in this job: {}", n, cases.size(), why));
  if (host > 0 && m.host_memory < 0)
    notes.push_back(fmt::format(
        "the largest case needs {} of host memory per worker ({}); the nodes' memory is not "
        "known here (SLURM --batch-option --mem=SIZE, PBS -l select=...:mem=SIZE checks it)",
        memory_text(host), host_case));
  if (gpu > 0)
    notes.push_back(fmt::format("the largest GPU case needs {} of GPU memory per GPU ({})",
                                memory_text(gpu), gpu_case));
  return notes;
}

}  // namespace sb
