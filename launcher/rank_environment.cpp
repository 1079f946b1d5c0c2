#include "rank_environment.hpp"

#include <array>

#include "scalebench/settings.hpp"

namespace sb {

std::span<const RankDefault> rank_defaults() {
  static constexpr std::array<RankDefault, 2> kDefaults{{
      {"OPENBLAS_THREAD_TIMEOUT", "22"},
      {"CUDA_DEVICE_MAX_CONNECTIONS", "4"},
  }};
  return kDefaults;
}

namespace {

/// Names `name` with -x where the plan forwards variables that way (mpiexec to other nodes).
void forward(batch::LaunchPlan& plan, const std::string& name) {
  for (std::size_t i = 0; i + 1 < plan.argv.size(); ++i)
    if (plan.argv[i] == "-x") {
      plan.argv.insert(plan.argv.begin() + static_cast<std::ptrdiff_t>(i), {"-x", name});
      break;
    }
}

}  // namespace

void add_rank_defaults(batch::LaunchPlan& plan) {
  for (const RankDefault& d : rank_defaults()) {
    if (settings::environment_variable(d.name).has_value() || plan.env.count(d.name) != 0) continue;
    plan.env[d.name] = d.value;
    forward(plan, d.name);
  }
}

void add_side_environment(batch::LaunchPlan& plan, const std::map<std::string, std::string>& env) {
  for (const auto& [name, value] : env) {
    if (plan.env.count(name) == 0) forward(plan, name);
    plan.env[name] = value;
  }
}

}  // namespace sb
