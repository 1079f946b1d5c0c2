// Worker ranks: bring up the GPU (if any), report to the scheduler, then run cases.
#include <omp.h>

#include <array>
#include <cmath>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "case_comm.hpp"
#include "gpu_acceptance_probe.hpp"
#include "host_stall.hpp"
#include "memory_check.hpp"
#include "message.hpp"
#include "others_cpu_share.hpp"
#include "rank.hpp"
#include "repeat_timing.hpp"
#include "scalebench/ceiling_cache.hpp"
#include "scalebench/clock.hpp"
#include "scalebench/error.hpp"
#include "scalebench/settings.hpp"
#include "scalebench/system_info.hpp"
#include "scalebench/telemetry_recorder.hpp"
#include "scalebench/workload.hpp"

extern "C" void openblas_set_num_threads(int);

namespace sb::detail {
namespace {

/// Thrown inside a repeat when the scheduler ends the case early.
struct CaseAborted {};

/// The least time between two readings of a GPU's processes: NVML samples their utilization
/// every 1/6 s to 1 s, and listing them costs the sampling thread a few NVML calls.
constexpr double kGpuProcessReadS = 0.1;

/// The CPU ceilings for this worker's thread count and for one thread (single-cpu cases), from
/// the per-machine cache when it holds them (ceiling_cache.hpp).
nlohmann::json cpu_ceilings(const JobPlan& plan, const RankContext& ctx,
                            const nlohmann::json& node) {
  nlohmann::json out = nlohmann::json::array();
  const std::string file = ceiling_cache_file();
  // More threads must not measure less than one: when they do, another process took the cores
  // while they measured, and the figures are used for this run but not kept.
  auto at_least_one_thread = [&](const nlohmann::json& records) {
    for (const auto& r : records)
      for (const auto& one : out)
        if (one.value("kind", "") == r.value("kind", "") &&
            r.value("value", 0.0) < 0.9 * one.value("value", 0.0))
          return false;
    return true;
  };
  // Nor is a ceiling kept that another process (a test beside it, a build, the hypervisor's
  // steal) shared the CPUs with: it records that share, `others_cpu_share`.
  auto quiet = [&](const nlohmann::json& records) {
    for (const auto& r : records)
      if (r.contains("others_cpu_share") &&
          r["others_cpu_share"].get<double>() >= kBusyCeilingShare)
        return false;
    return true;
  };
  const std::string blas = library_versions().value("blas", "");
  for (const int threads : {1, ctx.threads}) {
    if (threads == 1 && !out.empty()) break;  // a one-thread worker: measured once
    const std::string key =
        fmt::format("cpu|{}|{}|{}|{}", ctx.host, node.value("cpu_model", ""), blas, threads);
    auto measure = [&] {
      nlohmann::json records;
      const double others = others_cpu_share([&] { records = measure_cpu_ceilings(threads); });
      if (std::isfinite(others))  // else /proc/stat could not tell
        for (auto& r : records) r["others_cpu_share"] = others;
      return records;
    };
    auto keep = [&](const nlohmann::json& records) {
      return quiet(records) && (threads == 1 || at_least_one_thread(records));
    };
    for (auto& c : cached_ceilings(file, key, plan.fresh_ceilings, measure, keep))
      out.push_back(std::move(c));
  }
  return out;
}

/// This worker's start-up record for the scheduler: where it runs, what it found, how long each
/// phase took. `node` is describe_node()'s, made while the GPU context came up (`node_s`
/// seconds); the GPU's description and the ceilings are made here.
nlohmann::json startup_description(const JobPlan& plan, RankContext& ctx, nlohmann::json node,
                                   double node_s) {
  const double t0 = now() - node_s;
  nlohmann::json w = {{"rank", ctx.rank},
                      {"host", ctx.host},
                      {"local_rank", ctx.local_rank},
                      {"threads", ctx.threads},
                      {"gpu", ctx.gpu_ctx ? ctx.gpu : -1},
                      {"mpi_init_s", ctx.mpi_init_s},
                      {"cuda_init_s", ctx.gpu_startup.cuda_init_s},
                      {"cuda_wait_s", ctx.gpu_startup.cuda_wait_s},
                      {"gpu_libraries_s", ctx.gpu_startup.gpu_libraries_s},
                      {"cuda_early", ctx.gpu_startup.cuda_early},
                      {"node", std::move(node)}};
  w["describe_node_s"] = node_s;
  if (ctx.launch_epoch > 0) w["launch_to_main_s"] = ctx.main_epoch - ctx.launch_epoch;
  if (ctx.gpu_ctx) {
    const double t1 = now();
    auto g = describe_gpu(*ctx.gpu_ctx);
    // The placement's ordinal on the node; `device` is the CUDA ordinal in this process.
    g["node_gpu"] = ctx.gpu;
    g["isolated"] = ctx.gpu_isolated;
    g["cuda_visible_devices"] = ctx.cuda_visible_devices;
    // The hardware queues of the context (the launcher gives the ranks 4: rank_environment.hpp).
    g["cuda_max_connections"] = settings::environment_variable("CUDA_DEVICE_MAX_CONNECTIONS")
                                    .value_or("8 (CUDA's default)");
    w["gpu_description"] = std::move(g);
    w["gpu_versions"] = gpu_library_versions();
    w["describe_gpu_s"] = now() - t1;
  }
  w["describe_s"] = now() - t0;
  if (plan.measure_ceilings) {
    const double t1 = now();
    w["cpu_ceilings"] = cpu_ceilings(plan, ctx, w.at("node"));
    if (ctx.gpu_ctx) {
      const auto& g = w.at("gpu_description");
      const std::string key =
          fmt::format("gpu|{}|{}|{}", g.value("uuid", ""), g.value("driver", ""),
                      w.at("gpu_versions").value("cuda_runtime", ""));
      w["gpu_ceilings"] = cached_ceilings(ceiling_cache_file(), key, plan.fresh_ceilings,
                                          [&] { return measure_gpu_ceilings(*ctx.gpu_ctx); });
    }
    w["ceilings_s"] = now() - t1;
  }
  return w;
}

/// The worker's telemetry recorder: the node's CPUs, their energy and their vector units, and its
/// GPU (energy, clocks, counters, other processes) when it has one; null when the plan turns
/// telemetry off. The energy counters come first, so that they bracket a repeat most closely.
std::unique_ptr<TelemetryRecorder> make_recorder(const JobPlan& plan, const nlohmann::json& desc,
                                                 const std::vector<unsigned>& node_pids) {
  if (plan.telemetry_period_s < 0) return nullptr;
  std::vector<std::unique_ptr<TelemetrySource>> sources;
  sources.push_back(make_rapl_telemetry(settings::powercap_dir()));
  const std::string bus = desc.contains("gpu_description")
                              ? desc["gpu_description"].value("pci_bus_id", std::string())
                              : std::string();
  if (!bus.empty())
    if (auto energy = make_gpu_energy_telemetry(bus)) sources.push_back(std::move(energy));
  sources.push_back(make_cpu_telemetry());
  sources.push_back(make_vector_telemetry());
  if (!bus.empty()) {
    if (auto gpu = make_gpu_telemetry(bus, plan.telemetry_gpu_min_s))
      sources.push_back(std::move(gpu));
    if (auto counters = make_gpu_counter_telemetry(bus, plan.telemetry_counters_s))
      sources.push_back(std::move(counters));
    if (auto others = make_gpu_process_telemetry(bus, node_pids, kGpuProcessReadS, plan.ab_run))
      sources.push_back(std::move(others));
  }
  return std::make_unique<TelemetryRecorder>(std::move(sources), plan.telemetry_period_s);
}

/// The case this worker runs, as far as the worker loop needs it.
struct WorkerCaseState {
  std::unique_ptr<WorkerCase> wc;
  bool gpu_case = false;
  bool parked = false;  ///< an A/B side between its turns (ab_turns.hpp)
  std::size_t series_points = 512;
  void reset() {
    wc.reset();
    gpu_case = false;
    parked = false;
  }
};

/// Executes one repeat of `wc`: pull tasks with bounded prefetch, report outcomes, then
/// finish_repeat and DONE. A GPU case spins while it waits for its tasks (kGpuPollUs).
/// `recorder` (may be null) marks timed repeat `timed` (-1: a warm-up repeat) while the first
/// request is on its way and after DONE, outside what the scheduler times. `received`: when
/// REPEAT_BEGIN arrived (sb::now()); `trace`: --trace, the repeat's events go with DONE.
void run_repeat(RankContext& ctx, WorkerCase& wc, bool gpu_case, TelemetryRecorder* recorder,
                int timed, double received, bool trace) {
  WorkerRepeatTrace events(trace, received);
  wc.begin_repeat();
  const double begun = now();
  events.mark("begun");
  TaskLateness lateness;
  double submit_s = 0;  // GPU cases: the thread's time launching its tasks (host_stall.hpp)
  int submits = 0;
  const int depth = std::max(0, wc.prefetch()) + 1;
  std::deque<std::int64_t> queue;
  bool no_more = false;
  int awaiting = 0;  // requests sent whose ASSIGN has not arrived
  std::vector<TaskOutcome> finished;

  auto send_request = [&](int want) {
    Writer w;
    w.put<std::int32_t>(want).put<std::int32_t>(static_cast<std::int32_t>(finished.size()));
    for (const auto& o : finished) put_outcome(w, o);
    send(ctx.world, 0, kTagRequest, w);
    events.mark(want > 0 ? "request" : "report",
                want > 0 ? want : static_cast<long long>(finished.size()));
    finished.clear();
    if (want > 0) ++awaiting;
  };
  auto handle = [&](const Message& m) {
    if (m.tag == kTagCaseEnd) throw CaseAborted{};
    if (m.tag != kTagAssign)
      throw Error(fmt::format("internal: worker got tag {} in a repeat", m.tag));
    --awaiting;
    Reader r(m.data);
    const auto ids = r.get_vec<std::int64_t>();
    if (ids.empty()) no_more = true;
    events.mark("assign", static_cast<long long>(ids.size()));
    queue.insert(queue.end(), ids.begin(), ids.end());
  };

  auto take = [&](TaskOutcome o, const char* how) {
    // Host stalls of GPU cases only: a CPU worker's thread computes tasks itself, so it may
    // notice one that another of its threads finished only after its own.
    if (gpu_case) lateness.add(now() - begun, o);
    events.mark_task(how, o.task, o.end);
    finished.push_back(std::move(o));
  };

  send_request(depth);
  if (recorder != nullptr && timed >= 0) recorder->begin_repeat(timed);
  Backoff backoff(gpu_case ? kGpuPollUs : kCpuPollUs);
  Message m;
  while (true) {
    while (awaiting > 0 && try_receive(ctx.world, 0, MPI_ANY_TAG, m)) handle(m);
    // After every submit: a synchronous (CPU) task is already done, and asking for its
    // replacement at once keeps the next task on its way while this worker computes.
    while (!queue.empty() && static_cast<int>(wc.in_flight()) < depth) {
      const double s0 = gpu_case ? now() : 0.0;
      wc.submit(queue.front());
      if (gpu_case) {
        submit_s += now() - s0;
        ++submits;
      }
      events.mark("submit", queue.front());
      queue.pop_front();
      while (auto o = wc.poll(false)) take(std::move(*o), "ready");
      if (!finished.empty()) send_request(no_more ? 0 : static_cast<int>(finished.size()));
    }
    while (auto o = wc.poll(false)) take(std::move(*o), "ready");
    if (!finished.empty()) send_request(no_more ? 0 : static_cast<int>(finished.size()));
    if (no_more && queue.empty() && wc.in_flight() == 0 && awaiting == 0) break;
    if (wc.in_flight() > 0 && (queue.empty() || static_cast<int>(wc.in_flight()) >= depth)) {
      if (auto o = wc.poll(true)) take(std::move(*o), "waited");
      backoff.reset();
    } else if (wc.in_flight() == 0 && queue.empty()) {
      if (awaiting == 0) throw Error("internal: worker has no work and no request outstanding");
      if (try_receive(ctx.world, 0, MPI_ANY_TAG, m)) {
        handle(m);
        backoff.reset();
      } else {
        backoff.pause();
      }
    }
  }
  events.mark("finish");
  RepeatDone done;
  done.partial = wc.finish_repeat();
  done.phases = wc.phase_times();
  events.mark("finished");
  // The host's speed now, after the finishing step (host_stall.hpp; docs/performance.md,
  // cause 5): under 1 us a repeat.
  if (gpu_case) done.probe_s = host_speed_probe();
  done.trace = events.str();
  done.wall = now() - received;
  done.host_stall = lateness.stall();
  done.submit_s = submit_s;
  done.submits = submits;
  if (trace)
    done.trace += fmt::format(" submit={:.3f}/{} probe={:.2f}us", submit_s * 1e3, submits,
                              done.probe_s * 1e6);
  Writer w;
  put_done(w, done);
  send(ctx.world, 0, kTagDone, w);
  if (recorder != nullptr && timed >= 0) recorder->end_repeat(timed);
}

/// CASE_BEGIN: the case's environment, the memory check, then the workload's WorkerCase
/// (allocation happens here, untimed).
void begin_case(RankContext& ctx, const JobPlan& plan, const NodeWorkers& on_node, CaseComms& comms,
                const nlohmann::json& j, WorkerCaseState& cs) {
  const CaseSpec spec = case_spec_from_json(j.at("spec"));
  CaseEnv env;
  env.device = device_of(spec.path);
  env.rank = j.at("rank").get<int>();
  env.size = j.at("size").get<int>();
  env.threads = j.at("threads").get<int>();
  env.host = ctx.host;
  env.trace = plan.trace;
  // each-* cases run one device per GPU or node, all at once (each_device.hpp).
  const bool concurrent = j.value("concurrent", false);
  const bool node_comm = j.value("comm", std::string("case")) == "node";
  // A multi-* case on fewer workers than the path has (participant_plan.hpp) gets a
  // communicator over its first ones, in MPI and, on GPUs, in NCCL.
  if (env.size > 1)
    env.comm = node_comm ? ctx.node_workers
                         : comms.first(env.device == Device::gpu ? ctx.gpu_workers : ctx.workers,
                                       env.size);
  if (env.device == Device::gpu) {
    if (!ctx.gpu_ctx) throw EnvironmentError("this worker has no GPU");
    env.gpu = ctx.gpu_ctx.get();
    if (!node_comm && !concurrent) select_gpu_communicator(*env.gpu, env.comm, env.size);
  }
  omp_set_num_threads(env.threads);
  openblas_set_num_threads(env.threads);
  cs.reset();
  cs.gpu_case = env.device == Device::gpu;
  cs.series_points = static_cast<std::size_t>(std::max(1, j.value("series_points", 512)));
  const Workload& wl = find_workload(spec.workload);
  if (wl.memory_needed) {
    // Before anything is allocated: a case too large for this worker fails alone.
    MemoryBudget budget;
    budget.host_sharers = env.size <= 1 && !concurrent
                              ? 1
                              : std::max(1, env.device == Device::gpu ? on_node.gpu : on_node.all);
    budget.host_total = host_memory_available();
    if (env.gpu != nullptr) {
      const GpuMemoryInfo gm = gpu_memory_info(*env.gpu);
      budget.gpu = ctx.gpu;  // the node's ordinal, also when isolated (device 0)
      budget.gpu_free = gm.free_bytes;
    }
    check_memory(spec.workload, wl.memory_needed(spec, env), budget);
  }
  cs.wc = wl.make_worker(spec, env);
  if (env.gpu != nullptr) wait_for_gpu_setup(*env.gpu);
}

/// The workers with this worker's host name, ranked by world rank: the grouping by which the
/// scheduler makes each-node's devices (each_device.cpp), whatever MPI counts as one node.
MPI_Comm split_by_host(MPI_Comm workers, const std::string& host, int world_rank) {
  constexpr int kLen = 256;
  std::array<char, kLen> mine{};
  host.copy(mine.data(), kLen - 1);
  int n = 0;
  SB_MPI_CHECK(MPI_Comm_size(workers, &n));
  std::vector<char> all(static_cast<std::size_t>(n) * kLen);
  SB_MPI_CHECK(MPI_Allgather(mine.data(), kLen, MPI_CHAR, all.data(), kLen, MPI_CHAR, workers));
  int color = 0;  // the first worker of the same host
  while (std::strncmp(all.data() + static_cast<std::size_t>(color) * kLen, mine.data(), kLen) != 0)
    ++color;
  MPI_Comm out = MPI_COMM_NULL;
  SB_MPI_CHECK(MPI_Comm_split(workers, color, world_rank, &out));
  return out;
}

void send_error(RankContext& ctx, const std::string& what) {
  Writer w;
  w.put_str(what);
  send(ctx.world, 0, kTagError, w);
}

}  // namespace

void run_worker(const JobPlan& plan, RankContext& ctx) {
  // GPU bring-up: a worker whose placement names a GPU that this process can see. Its context
  // may already be up (started before MPI_Init, rank_main.cpp). The NCCL communicators come up
  // with the first multi-gpu case that needs them (select_gpu_communicator in begin_case): a
  // run of single-gpu and each-gpu cases never waits for one. The node's description (hwloc)
  // is made before the context is joined, while it comes up.
  const double node_t0 = now();
  nlohmann::json node = describe_node();
  const double node_s = now() - node_t0;
  const int visible = ctx.device >= 0 ? visible_gpu_count() : 0;
  const bool has_gpu = ctx.device >= 0 && ctx.device < visible;
  SB_MPI_CHECK(
      MPI_Comm_split(ctx.workers, has_gpu ? 0 : MPI_UNDEFINED, ctx.rank, &ctx.gpu_workers));
  if (has_gpu) {
    ctx.gpu_ctx = create_gpu_device_context(ctx.device, std::move(ctx.gpu_early), &ctx.gpu_startup);
    int rank = 0, size = 1;
    SB_MPI_CHECK(MPI_Comm_rank(ctx.gpu_workers, &rank));
    SB_MPI_CHECK(MPI_Comm_size(ctx.gpu_workers, &size));
    set_gpu_workers(*ctx.gpu_ctx, rank, size);
  }
  ctx.gpu_early.reset();  // a context started for a GPU this worker does not drive
  // Workers sharing this node's host memory (a multi-* case runs them all at once).
  const NodeWorkers on_node = node_workers(ctx.workers, has_gpu);
  // The node's workers run each-node cases together.
  ctx.node_workers = split_by_host(ctx.workers, ctx.host, ctx.rank);
  const std::vector<unsigned> node_pids = node_worker_pids(ctx.node_workers);
  std::unique_ptr<TelemetryRecorder> recorder;

  omp_set_num_threads(ctx.threads);
  openblas_set_num_threads(ctx.threads);
  {
    nlohmann::json desc = startup_description(plan, ctx, std::move(node), node_s);
    desc["nccl_init_s"] = ctx.gpu_startup.nccl_init_s;
    desc["nccl_wait_s"] = ctx.gpu_startup.nccl_wait_s;
    desc["nccl_overlapped"] = ctx.gpu_startup.nccl_overlapped;
    add_acceptance_probe(plan, ctx, desc, node_pids);
    desc["ready_after_main_s"] = now() - ctx.main_steady;
    recorder = make_recorder(plan, desc, node_pids);
    ctx.nvml_warm.reset();  // the description has been made; telemetry holds its own NVML
    Writer w;
    w.put_str(desc.dump());
    send(ctx.world, 0, kTagStartup, w);
  }

  CaseComms comms;
  WorkerCaseState cs;
  Message m;
  while (true) {
    // Between the repeats of a case the next one must start at once: the begin message is
    // already on its way, and a long sleep here would be part of the repeat's time (`messages`
    // in its record). The cores are idle then. Between cases the worker sleeps longer.
    // A parked A/B side sleeps as between cases: the other side is measuring.
    receive(ctx.world, 0, MPI_ANY_TAG, m, 0,
            !cs.wc || cs.parked ? 2000
            : cs.gpu_case       ? kGpuPollUs
                                : kCpuPollUs);
    const double received = now();
    if (m.tag == kTagShutdown) break;
    try {
      switch (m.tag) {
        case kTagCaseBegin: {
          Reader r(m.data);
          begin_case(ctx, plan, on_node, comms, nlohmann::json::parse(r.get_str()), cs);
          if (recorder) recorder->begin_case(cs.gpu_case);
          send_empty(ctx.world, 0, kTagReady);
          break;
        }
        case kTagRepeatBegin: {
          if (!cs.wc) throw Error("internal: repeat without a case");
          Reader r(m.data);
          const int timed = r.get<std::int32_t>();  // -1: a warm-up repeat
          run_repeat(ctx, *cs.wc, cs.gpu_case, recorder.get(), timed, received, plan.trace);
          break;
        }
        case kTagValidate: {
          if (!cs.wc) throw Error("internal: validation without a case");
          Writer w;
          w.put_vec(cs.wc->validate());
          send(ctx.world, 0, kTagValidation, w);
          // Telemetry goes after the timed repeats, so that it never lengthens one.
          nlohmann::json t =
              recorder ? recorder->finish_case(cs.series_points) : nlohmann::json::object();
          if (recorder) t["cpus"] = recorder->describe().value("cpus", 0);
          Writer tw;
          tw.put_str(t.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
          send(ctx.world, 0, kTagTelemetry, tw);
          break;
        }
        case kTagCaseEnd:
          cs.reset();
          break;
        case kTagPark:
          cs.parked = true;
          break;
        case kTagResume:
          cs.parked = false;
          send_empty(ctx.world, 0, kTagReady);
          break;
        case kTagAssign:  // a reply to a request of an aborted repeat
          break;
        default:
          throw Error(fmt::format("internal: worker got unexpected tag {}", m.tag));
      }
    } catch (const CaseAborted&) {
      cs.reset();
    } catch (const std::exception& e) {
      cs.reset();
      send_error(ctx, e.what());
    }
  }
  recorder.reset();
  cs.reset();
  ctx.gpu_ctx.reset();
}

}  // namespace sb::detail
