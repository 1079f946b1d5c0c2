#include "rank_environment.hpp"

#include <array>
#include <set>

#include "scalebench/ab_protocol.hpp"
#include "scalebench/settings.hpp"

extern "C" char* openblas_get_corename(void);

namespace sb {
namespace {

bool user_set(const batch::LaunchPlan& plan, const char* name) {
  return settings::environment_variable(name).has_value() || plan.env.count(name) != 0;
}

/// Environment for a job whose ranks all share one node, making MPI_Init and mpiexec cheaper:
/// - OpenMPI: pml ob1 over the shared-memory BTL (OMPI_MCA_pml=ob1 and a BTL exclusion list,
///   valid for OpenMPI 4 "vader" and 5 "sm" alike). Without it, MPI_Init tries every network
///   stack first (UCX, libfabric/PSM through pml cm, verbs); on a GPU node UCX also brings up
///   its CUDA transports in every rank (test_startup_mpi shows the start-up phases).
/// - hwloc (in mpiexec and every rank): no OpenCL / GL / CUDA / NVML discovery plugins, which
///   would start GPU runtimes only to list devices that MPI does not use.
/// Each is left alone when the user set it (OMPI_MCA_pml, OMPI_MCA_btl, HWLOC_PLUGINS_BLACKLIST
/// or HWLOC_COMPONENTS in the environment, or pml/btl in SCALEBENCH_MPIEXEC_ARGS), and all of it
/// when SCALEBENCH_MPI_TUNING=0. Variables of other MPIs' names are ignored by them. Jobs over
/// several nodes get nothing: their transports are the MPI's own business.
void tune_single_node_job(batch::LaunchPlan& plan,
                          const std::vector<batch::RankPlacement>& placement,
                          const std::vector<std::string>& extra) {
  if (!settings::mpi_tuning()) return;
  std::set<int> nodes;
  for (const auto& p : placement) nodes.insert(p.node);
  if (nodes.size() != 1) return;
  auto in_extra = [&](const char* word) {
    for (const auto& a : extra)
      if (a == word || a.find(std::string("_") + word) != std::string::npos) return true;
    return false;
  };
  if (!user_set(plan, "OMPI_MCA_pml") && !user_set(plan, "OMPI_MCA_btl") && !in_extra("pml") &&
      !in_extra("btl")) {
    plan.env["OMPI_MCA_pml"] = "ob1";
    plan.env["OMPI_MCA_btl"] = "^tcp,openib,ofi,uct,usnic,smcuda";
  }
  if (!user_set(plan, "HWLOC_PLUGINS_BLACKLIST") && !user_set(plan, "HWLOC_COMPONENTS"))
    plan.env["HWLOC_PLUGINS_BLACKLIST"] =
        "hwloc_opencl,hwloc_gl,hwloc_cuda,hwloc_nvml,hwloc_rsmi,hwloc_levelzero";
}

/// Names `name` with -x where the plan forwards variables that way (mpiexec to other nodes).
void forward(batch::LaunchPlan& plan, const std::string& name) {
  for (std::size_t i = 0; i + 1 < plan.argv.size(); ++i)
    if (plan.argv[i] == "-x") {
      plan.argv.insert(plan.argv.begin() + static_cast<std::ptrdiff_t>(i), {"-x", name});
      break;
    }
}

}  // namespace

std::span<const RankDefault> rank_defaults() {
  static constexpr std::array<RankDefault, 2> kDefaults{{
      {"OPENBLAS_THREAD_TIMEOUT", "22"},
      {"CUDA_DEVICE_MAX_CONNECTIONS", "4"},
  }};
  return kDefaults;
}

std::optional<std::string> openblas_core_type() {
  if (settings::environment_variable("OPENBLAS_CORETYPE")) return std::nullopt;
  const char* core = openblas_get_corename();
  if (core == nullptr || std::string(core) != "Prescott") return std::nullopt;
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f")) return "SkylakeX";
  if (__builtin_cpu_supports("avx2")) return "Haswell";
  return std::nullopt;
}

void add_rank_defaults(batch::LaunchPlan& plan) {
  for (const RankDefault& d : rank_defaults()) {
    if (user_set(plan, d.name)) continue;
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

void add_ab_mark(batch::LaunchPlan& plan, const std::string& mark) {
  if (plan.env.count(ab::kRunVariable) == 0) forward(plan, ab::kRunVariable);
  plan.env[ab::kRunVariable] = mark;
}

void add_rank_environment(batch::LaunchPlan& plan,
                          const std::vector<batch::RankPlacement>& placement,
                          const std::vector<std::string>& extra) {
  tune_single_node_job(plan, placement, extra);
  add_rank_defaults(plan);
  if (!user_set(plan, "OPENBLAS_CORETYPE"))
    if (const auto core = openblas_core_type()) plan.env["OPENBLAS_CORETYPE"] = *core;
}

}  // namespace sb
