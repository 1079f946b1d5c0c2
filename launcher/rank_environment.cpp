#include "rank_environment.hpp"

#include "scalebench/settings.hpp"

namespace sb {

void settle_idle_blas_threads(batch::LaunchPlan& plan) {
  constexpr const char* kName = "OPENBLAS_THREAD_TIMEOUT";
  if (settings::environment_variable(kName).has_value() || plan.env.count(kName) != 0) return;
  plan.env[kName] = "22";
  for (std::size_t i = 0; i + 1 < plan.argv.size(); ++i)
    if (plan.argv[i] == "-x") {
      plan.argv.insert(plan.argv.begin() + static_cast<std::ptrdiff_t>(i), {"-x", kName});
      break;
    }
}

}  // namespace sb
