#pragma once
/// @file run_options.hpp
/// The options of `scalebench run`, defined once: `run` parses its command line with them, and
/// `submit` parses the words after its `--` with the same definitions and the same checks
/// (submit_check.hpp), so a batch job is refused before it waits in a queue for what `run`
/// refuses at once. The man page and the shell completions are made from these definitions too
/// (cli_reference.hpp).

#include <cstdint>
#include <string>
#include <vector>

#include "case_plan.hpp"

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace sb {

struct RunOptions {
  std::string preset = "small";
  std::string workloads;
  std::string paths;
  std::string suite;
  std::string repeats = "5";
  int warmup = 1;
  int min_repeats = kAutoMinRepeats;
  int max_repeats = kAutoMaxRepeats;
  double max_time = kAutoMaxTime;
  double target_spread = kAutoTargetSpread;
  std::string out;
  double case_timeout = 0;
  std::string resume;
  std::vector<std::string> params;
  bool require_gpu = false;
  bool no_ceilings = false;
  bool trace = false;
  bool list = false;
  bool wide = false;
  bool fresh_ceilings = false;
  bool check = false;           ///< exit 1 when a device's verdict is not ok
  bool fleet_element = false;   ///< one element of a fleet sweep: `report merge` judges its peers
  bool keep_throttled = false;  ///< throttled repeats count in the medians
  bool force = false;           ///< --out may replace an existing report
  std::vector<std::string> references;
  int nodes = 0;              ///< --nodes K: the first K nodes of the allocation (0: all)
  std::string scaling;        ///< --scaling strong|weak: one node count of a scaling study
  double scale_factor = 1.0;  ///< --scale-factor F: grow every problem F times (weak scaling)
  // An A/B run (ab_request.hpp): the sides' items and the gate's options.
  std::vector<std::string> baseline;
  std::vector<std::string> current;
  std::string ab_block = "auto";
  std::uint64_t ab_seed = 0;
  std::string threshold = "5%";
  double alpha = 0.01;
  std::string on_noisy = "warn";
  // Which options were given on the command line (they override a suite file).
  CLI::Option* o_preset = nullptr;
  CLI::Option* o_workloads = nullptr;
  CLI::Option* o_paths = nullptr;
  CLI::Option* o_repeats = nullptr;
  CLI::Option* o_warmup = nullptr;
  CLI::Option* o_min_repeats = nullptr;
  CLI::Option* o_max_repeats = nullptr;
  CLI::Option* o_max_time = nullptr;
  CLI::Option* o_target_spread = nullptr;
  CLI::Option* o_ab_block = nullptr;
  CLI::Option* o_ab_seed = nullptr;
  CLI::Option* o_threshold = nullptr;
  CLI::Option* o_alpha = nullptr;
  CLI::Option* o_on_noisy = nullptr;
};

/// Adds every option of `scalebench run` to `cmd`, stored into `o` (which must outlive parsing).
void add_run_options(CLI::App& cmd, RunOptions& o);

/// What to run: the suite file's settings (and plugins, loaded), the command line's over them;
/// `--repeats` and its limits and an A/B run's sides resolved. Throws sb::UsageError (one line) on
/// bad values.
[[nodiscard]] RunRequest resolve_request(const RunOptions& o);

}  // namespace sb
