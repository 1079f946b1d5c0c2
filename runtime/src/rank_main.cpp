// scalebench-rank: the MPI program that `scalebench run` starts. Rank 0 is the scheduler;
// every other rank is a worker. Usage: scalebench-rank --plan PLAN.json
#include <mpi.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "ab_probe.hpp"
#include "gpu_isolation.hpp"
#include "rank.hpp"
#include "scalebench/ab_protocol.hpp"
#include "scalebench/clock.hpp"
#include "scalebench/cpu_allowance.hpp"
#include "scalebench/error.hpp"
#include "scalebench/placement.hpp"
#include "scalebench/plugins.hpp"
#include "scalebench/rank_protocol.hpp"
#include "scalebench/settings.hpp"
#include "scalebench/system_info.hpp"

namespace {

std::string read_plan_text(int argc, char** argv) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--plan") == 0) {
      std::ifstream in(argv[i + 1]);
      if (!in) throw sb::UsageError(fmt::format("cannot read job plan {}", argv[i + 1]));
      std::stringstream ss;
      ss << in.rdbuf();
      return ss.str();
    }
  }
  throw sb::UsageError("usage: scalebench-rank --plan PLAN.json (started by `scalebench run`)");
}

/// This rank's placement: from SCALEBENCH_PLACEMENT (set by the launcher), or derived from the
/// node when the job was started by hand.
void place(sb::detail::RankContext& ctx) {
  MPI_Comm node;
  SB_MPI_CHECK(
      MPI_Comm_split_type(ctx.world, MPI_COMM_TYPE_SHARED, ctx.rank, MPI_INFO_NULL, &node));
  SB_MPI_CHECK(MPI_Comm_rank(node, &ctx.local_rank));
  int node_size = 1;
  SB_MPI_CHECK(MPI_Comm_size(node, &node_size));
  int has_zero = ctx.rank == 0 ? 1 : 0;
  SB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, &has_zero, 1, MPI_INT, MPI_MAX, node));
  // The cores this process may use (cpu_allowance.hpp): a node may hold the job to fewer than the
  // launcher planned with (a batch system's cgroup on another node, an MPI starter's binding).
  // Workers that share one CPU set share its cores; a worker bound to a set of its own has all
  // of them.
  const sb::CpuAllowance& allowed = sb::cpu_allowance();
  const std::vector<int> cpus = sb::parse_cpu_list(allowed.cpu_list);
  const int key = cpus.empty() ? -1 : (cpus.front() % 32768) * 65536 + allowed.allowed_cpus % 65536;
  std::array<int, 2> mask{key, -key};  // max and -min over the node's ranks
  SB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, mask.data(), 2, MPI_INT, MPI_MAX, node));
  const bool shared_set = mask[0] == -mask[1];
  MPI_Comm_free(&node);
  const int workers_on_node = std::max(1, node_size - has_zero);
  const int usable_share =
      std::max(1, shared_set ? allowed.usable_cores / workers_on_node : allowed.usable_cores);
  if (const auto enc =
          sb::settings::environment_variable(std::string(sb::protocol::kPlacementVariable).c_str());
      enc && !enc->empty()) {
    const auto all = sb::decode_placement(*enc);
    if (static_cast<int>(all.size()) != ctx.size)
      throw sb::EnvironmentError(fmt::format(
          "SCALEBENCH_PLACEMENT describes {} ranks but the job has {}", all.size(), ctx.size));
    const auto& p = all[static_cast<std::size_t>(ctx.rank)];
    ctx.threads = std::max(1, std::min(p.threads, usable_share));
    ctx.gpu = p.gpu;
    ctx.device = p.gpu;
    if (ctx.gpu_isolated) {
      if (p.gpu != ctx.isolated_gpu)
        throw sb::EnvironmentError(fmt::format(
            "rank {} was placed on GPU {} but its starter's rank variable pointed at GPU {} "
            "before MPI_Init (set SCALEBENCH_GPU_ISOLATION=0 to start without isolation)",
            ctx.rank, p.gpu, ctx.isolated_gpu));
      ctx.device = 0;
    }
    return;
  }
  const int worker_index = ctx.local_rank - (has_zero && ctx.rank != 0 ? 1 : 0);
  ctx.threads = usable_share;
  const int gpus = sb::visible_gpu_count();
  ctx.gpu = (ctx.rank != 0 && gpus > 0) ? worker_index % gpus : -1;
  ctx.device = ctx.gpu;
}

/// Whether a CUDA context may come up on a thread of its own while MPI_Init runs.
/// SCALEBENCH_EARLY_GPU=1 / =0 decides; otherwise only when MPI_Init loads no network stack
/// (UCX, libfabric, verbs) that patches memory functions while it starts (UCX's bistro hooks
/// rewrite munmap & co. in place, which a thread inside them may not survive): OpenMPI with
/// pml ob1 and no network BTL that registers memory, as the launcher sets it up for a
/// single-node job (job_runner.cpp).
bool early_gpu_allowed() noexcept {
  std::string choice = "auto";
  try {
    choice = sb::settings::early_gpu();
  } catch (...) {
    choice = "auto";  // the launcher refused bad values before the job started
  }
  if (choice != "auto") return choice == "1";
#ifdef OPEN_MPI
  const auto pml = sb::settings::environment_variable("OMPI_MCA_pml");
  const auto btl = sb::settings::environment_variable("OMPI_MCA_btl");
  if (!pml || *pml != "ob1" || !btl) return false;
  std::set<std::string> names;
  const bool exclude = !btl->empty() && (*btl)[0] == '^';
  std::stringstream list(exclude ? btl->substr(1) : *btl);
  for (std::string n; std::getline(list, n, ',');) names.insert(n);
  if (exclude) return names.count("openib") && names.count("uct") && names.count("ofi");
  for (const auto& n : names)
    if (n != "self" && n != "vader" && n != "sm" && n != "tcp") return false;
  return true;
#else
  return false;
#endif
}

/// This rank's placement when the launcher's placement (SCALEBENCH_PLACEMENT) and the rank are
/// known before MPI_Init; nullopt otherwise (place() decides later, as it always does).
std::optional<sb::RankPlacement> early_placement() noexcept {
  try {
    const auto enc =
        sb::settings::environment_variable(std::string(sb::protocol::kPlacementVariable).c_str());
    if (!enc || enc->empty()) return std::nullopt;
    const int rank = sb::protocol::starter_rank();
    if (rank < 0) return std::nullopt;
    const auto all = sb::decode_placement(*enc);
    if (rank >= static_cast<int>(all.size())) return std::nullopt;
    return all[static_cast<std::size_t>(rank)];
  } catch (...) {
    return std::nullopt;  // a malformed placement is reported by place(), after MPI_Init
  }
}

/// Before anything in this process starts CUDA: a worker placed on a GPU narrows
/// CUDA_VISIBLE_DEVICES to that GPU alone (gpu_isolation.hpp). Returns the CUDA ordinal the
/// worker will drive (0 when narrowed, the placement's ordinal when not), -1 for none.
int isolate_gpu(const std::optional<sb::RankPlacement>& p, sb::detail::RankContext& ctx) noexcept {
  if (!p || p->scheduler || p->gpu < 0) return -1;
  if (!sb::detail::gpu_isolation_enabled()) return p->gpu;
  const auto current = sb::settings::environment_variable("CUDA_VISIBLE_DEVICES");
  const auto narrowed =
      sb::detail::isolated_visible_devices(current ? current->c_str() : nullptr, p->gpu);
  if (!narrowed || setenv("CUDA_VISIBLE_DEVICES", narrowed->c_str(), 1) != 0) return p->gpu;
  ctx.gpu_isolated = true;
  ctx.isolated_gpu = p->gpu;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  // An A/B run's launcher asks what this build is before any job starts (ab_protocol.hpp).
  if (argc > 1 && argv[1] == sb::ab::kProbeFlag) return sb::detail::run_ab_probe(argc, argv);
  sb::detail::RankContext ctx;
  ctx.main_steady = sb::now();
  ctx.main_epoch =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const int device = isolate_gpu(early_placement(), ctx);
  if (const auto cvd = sb::settings::environment_variable("CUDA_VISIBLE_DEVICES"))
    ctx.cuda_visible_devices = *cvd;
  // The GPU's context comes up on its own thread while MPI starts (run_worker adopts it).
  ctx.gpu_early = sb::start_gpu_context_early(early_gpu_allowed() ? device : -1);
  // NVML too, for the GPU's description (nvml_warm_up.hpp).
  if (ctx.gpu_early) ctx.nvml_warm = std::make_unique<sb::detail::NvmlWarmUp>();
  const double t0 = sb::now();
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    std::fprintf(stderr, "scalebench-rank: MPI_Init failed\n");
    return sb::kExitEnvironment;
  }
  ctx.mpi_init_s = sb::now() - t0;
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  // The launcher forwards the batch system's time-limit warning (SIGUSR1); it ends the job after
  // the running case itself, so ranks must not die of it.
  std::signal(SIGUSR1, SIG_IGN);
  MPI_Comm_rank(MPI_COMM_WORLD, &ctx.rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ctx.size);
  sb::set_error_rank(ctx.rank);
  ctx.host = sb::host_name();
  int code = 0;
  try {
    // Rank 0 reads the plan and broadcasts it: nothing requires a shared file system.
    std::string text;
    if (ctx.rank == 0) text = read_plan_text(argc, argv);
    long long len = static_cast<long long>(text.size());
    SB_MPI_CHECK(MPI_Bcast(&len, 1, MPI_LONG_LONG, 0, ctx.world));
    text.resize(static_cast<std::size_t>(len));
    SB_MPI_CHECK(MPI_Bcast(text.data(), static_cast<int>(len), MPI_CHAR, 0, ctx.world));
    const auto j = nlohmann::json::parse(text);
    const sb::JobPlan plan = sb::JobPlan::from_json(j);
    ctx.launch_epoch = j.value("launch_epoch", 0.0);
    // Every rank registers the plan's plugin workloads (the launcher checked them) before any
    // case is planned or built.
    for (const auto& p : plan.plugins) (void)sb::load_plugin(p, sb::PluginTrial::none);
    place(ctx);
    SB_MPI_CHECK(
        MPI_Comm_split(ctx.world, ctx.rank == 0 ? MPI_UNDEFINED : 0, ctx.rank, &ctx.workers));
    if (ctx.rank == 0) {
      code = sb::detail::run_scheduler(plan, ctx);
    } else {
      sb::detail::run_worker(plan, ctx);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "scalebench-rank %d: %s\n", ctx.rank, e.what());
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
  MPI_Finalize();
  return code;
}
