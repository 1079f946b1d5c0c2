#pragma once
/// @file ab_request.hpp
/// What an A/B run asks for (docs/ci.md, "The A/B gate"), as the command line and a suite
/// file give it; ab_sides.hpp checks it and resolves each side before any job starts.
///
/// A side is {rank program, plugins, MPI starter, environment, parameters}. The current side
/// defaults to this build with the run's plugins, environment and parameters; the baseline
/// side starts as a copy of it and each item given replaces its part:
///   rank=PATH          the scalebench-rank of another build (a file, or a folder holding it:
///                      a build folder, an install prefix with libexec/); a `scalebench` path
///                      means the scalebench-rank beside it
///   plugin=PATH        a plugin build for this side; it replaces the run's plugin that
///                      registers the same workloads (repeatable)
///   mpiexec=PATH       the MPI starter (another MPI installation; local, PBS, LSF, SGE)
///   env:NAME=VALUE     an environment variable of this side's ranks (repeatable), e.g.
///                      env:LD_LIBRARY_PATH=/opt/nccl-2.21/lib or env:NCCL_ALGO=Tree
///   param:W.KEY=VALUE  a parameter of workload W on this side (one value; repeatable)
///   label=TEXT         the side's name in the report and the comparison

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace sb {

struct AbSideRequest {
  bool given = false;  ///< an item was given for this side
  std::string label;
  std::string rank;  ///< as given (relative to the working folder or the suite file's)
  std::vector<std::string> plugins;
  std::string mpiexec;
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<std::string> params;  ///< "workload.key=value"
};

struct AbRequest {
  AbSideRequest baseline;
  AbSideRequest current;
  int block = 0;  ///< timed repeats per turn; 0: auto (turns of about 0.1 s)
  std::optional<std::uint64_t> seed;
  std::optional<double> threshold;  ///< the gate's options (compare.hpp)
  std::optional<double> alpha;
  std::string on_noisy;
  /// An A/B run: a side was described (the current side alone makes an A/B run against a
  /// baseline of this build as it is).
  [[nodiscard]] bool enabled() const noexcept { return baseline.given || current.given; }
};

/// Adds one item ("rank=PATH", "env:NAME=VALUE", ...) to `side`; paths relative to `folder`
/// when it is not empty. `what` names the option in messages ("--baseline"). Throws
/// sb::UsageError with one line for an unknown key or a malformed item.
void add_side_item(AbSideRequest& side, const std::string& item, const std::string& what,
                   const std::string& folder = "");

/// Parses an --ab-block value: "auto" or 1..1000. Throws sb::UsageError.
[[nodiscard]] int parse_ab_block(const std::string& text);

}  // namespace sb
