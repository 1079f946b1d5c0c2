// Rank 0: plans participants, hands out tasks dynamically, folds results, times repeats,
// validates, cross-checks paths, and streams every finished case.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <map>
#include <numeric>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "message.hpp"
#include "rank.hpp"
#include "scalebench/clock.hpp"
#include "scalebench/error.hpp"
#include "scalebench/lifeline.hpp"
#include "scalebench/nvml_probe.hpp"
#include "scalebench/stats.hpp"
#include "scalebench/system_info.hpp"
#include "scalebench/workload.hpp"

namespace sb::detail {
namespace {

struct WorkerInfo {
  int rank = 0;
  int threads = 1;
  bool gpu = false;
  std::string host;
};

/// A failure that ends the case; `restart` asks for a fresh MPI job (workers may be stuck).
struct CaseFailure {
  std::string status;  // "failed" or "timeout"
  std::string message;
  bool restart = false;
};

class Scheduler {
 public:
  Scheduler(const JobPlan& plan, RankContext& ctx)
      : plan_(plan), ctx_(ctx), out_(plan.stream_path) {}

  int run() {
    gather_startup();
    const int n = static_cast<int>(plan_.cases.size());
    for (int k = 0; k < n; ++k) {
      // The launcher asks for a stop between cases (batch time-limit warning).
      if (!plan_.stop_path.empty() && access(plan_.stop_path.c_str(), F_OK) == 0) {
        for (const auto& w : workers_) send_empty(ctx_.world, w.rank, kTagShutdown);
        out_.write({{"type", "end"}, {"status", "stopped"}}, true);
        return 0;
      }
      const CaseSpec& spec = plan_.cases[static_cast<std::size_t>(k)];
      bool restart = false;
      nlohmann::json record = run_case(spec, k, n, restart);
      out_.write(record, /*durable=*/true);
      if (restart) {
        out_.write({{"type", "end"}, {"status", "restart"}, {"after_case", spec.index}}, true);
        MPI_Abort(ctx_.world, kExitRestart);
        return kExitRestart;
      }
    }
    for (const auto& w : workers_) send_empty(ctx_.world, w.rank, kTagShutdown);
    out_.write({{"type", "end"}, {"status", "ok"}}, true);
    return 0;
  }

 private:
  void gather_startup() {
    const int nworkers = ctx_.size - 1;
    // NVML's topology matrix (tens to hundreds of ms on a GPU node) while the workers start.
    std::string topology;
    std::thread topology_probe([&topology] {
      try {
        topology = nvml_topology_matrix();
      } catch (...) {
        topology.clear();  // no topology is a valid report
      }
    });
    struct Joiner {
      std::thread& t;
      ~Joiner() {
        if (t.joinable()) t.join();
      }
    } join_probe{topology_probe};
    nlohmann::json nodes = nlohmann::json::array();
    nlohmann::json gpus = nlohmann::json::array();
    nlohmann::json ceilings = nlohmann::json::array();
    nlohmann::json versions = library_versions();
    std::set<std::string> hosts;
    double mpi_init = ctx_.mpi_init_s, cuda_init = 0, nccl_init = 0, ceilings_s = 0;
    // Finer start-up figures (max over workers): where the time before `ready` went.
    double launch_to_main = ctx_.launch_epoch > 0 ? ctx_.main_epoch - ctx_.launch_epoch : 0.0;
    double cuda_wait = 0, nccl_wait = 0, describe = 0, ready_after_main = 0;
    double describe_node_s = 0, describe_gpu_s = 0;
    int gpu_ranks = 0, cuda_early = 0, nccl_ranks = 0, nccl_overlapped = 0;
    auto add_node = [&](const nlohmann::json& node) {
      const auto host = node.at("host").get<std::string>();
      if (hosts.insert(host).second) nodes.push_back(node);
    };
    add_node(describe_node());
    Message m;
    for (int i = 0; i < nworkers; ++i) {
      receive(ctx_.world, MPI_ANY_SOURCE, kTagStartup, m);
      Reader r(m.data);
      const auto w = nlohmann::json::parse(r.get_str());
      WorkerInfo info;
      info.rank = m.source;
      info.threads = w.at("threads").get<int>();
      info.gpu = w.at("gpu").get<int>() >= 0;
      info.host = w.at("host").get<std::string>();
      workers_.push_back(info);
      add_node(w.at("node"));
      mpi_init = std::max(mpi_init, w.value("mpi_init_s", 0.0));
      cuda_init = std::max(cuda_init, w.value("cuda_init_s", 0.0));
      nccl_init = std::max(nccl_init, w.value("nccl_init_s", 0.0));
      ceilings_s = std::max(ceilings_s, w.value("ceilings_s", 0.0));
      launch_to_main = std::max(launch_to_main, w.value("launch_to_main_s", 0.0));
      cuda_wait = std::max(cuda_wait, w.value("cuda_wait_s", 0.0));
      nccl_wait = std::max(nccl_wait, w.value("nccl_wait_s", 0.0));
      describe = std::max(describe, w.value("describe_s", 0.0));
      describe_node_s = std::max(describe_node_s, w.value("describe_node_s", 0.0));
      describe_gpu_s = std::max(describe_gpu_s, w.value("describe_gpu_s", 0.0));
      ready_after_main = std::max(ready_after_main, w.value("ready_after_main_s", 0.0));
      if (info.gpu) {
        ++gpu_ranks;
        cuda_early += w.value("cuda_early", false) ? 1 : 0;
        if (w.value("nccl_init_s", 0.0) > 0) {
          ++nccl_ranks;
          nccl_overlapped += w.value("nccl_overlapped", false) ? 1 : 0;
        }
      }
      if (w.contains("gpu_description")) {
        auto g = w.at("gpu_description");
        g["host"] = info.host;
        g["worker_rank"] = info.rank;
        gpus.push_back(g);
        for (const auto& [k, v] : w.at("gpu_versions").items()) versions[k] = v;
      }
      if (w.contains("gpu_ceilings")) {
        for (auto c : w.at("gpu_ceilings")) {
          c["host"] = info.host;
          c["worker_rank"] = info.rank;
          ceilings.push_back(c);
        }
      }
      if (w.contains("cpu_ceilings")) {
        const auto& c = w.at("cpu_ceilings");
        ceilings.push_back({{"scope", "cpu"},
                            {"host", info.host},
                            {"worker_rank", info.rank},
                            {"kind", "stream_triad"},
                            {"unit", "B/s"},
                            {"value", c.at("stream_triad_bytes_per_s")},
                            {"threads", c.at("threads")}});
        ceilings.push_back({{"scope", "cpu"},
                            {"host", info.host},
                            {"worker_rank", info.rank},
                            {"kind", "dgemm"},
                            {"unit", "flop/s"},
                            {"value", c.at("dgemm_flop_per_s")},
                            {"threads", c.at("threads")}});
      }
    }
    std::sort(workers_.begin(), workers_.end(),
              [](const WorkerInfo& a, const WorkerInfo& b) { return a.rank < b.rank; });
    for (const auto& w : workers_)
      if (w.gpu) gpu_workers_.push_back(w);
    gpu_count_ = static_cast<int>(gpu_workers_.size());
    if (gpu_count_ == 0) {
      if (!cuda_built()) {
        gpu_skip_reason_ = "no GPU: scalebench was built without CUDA";
      } else {
        std::string why;
        const int vis = visible_gpu_count(&why);
        gpu_skip_reason_ = vis == 0 ? (why.empty() ? "no GPU visible to the workers" : why)
                                    : "no worker is bound to a GPU";
      }
    }
    topology_probe.join();
    const double ready =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    nlohmann::json startup = {
        {"mpi_init_s", mpi_init},
        {"cuda_init_s", cuda_init},
        {"nccl_init_s", nccl_init},
        {"ceilings_s", ceilings_s},
        {"total_s", ctx_.launch_epoch > 0 ? ready - ctx_.launch_epoch : 0.0},
        {"launch_to_main_s", launch_to_main},
        {"describe_s", describe},
        {"describe_node_s", describe_node_s},
        {"describe_gpu_s", describe_gpu_s},
        {"cuda_wait_s", cuda_wait},
        {"nccl_wait_s", nccl_wait},
        {"ready_after_main_s", ready_after_main},
        // 1 when every GPU worker did it, else 0 (numbers, as the
        // report keeps start-up figures as float64 attributes)
        {"cuda_overlapped_mpi_init", gpu_ranks > 0 && cuda_early == gpu_ranks ? 1.0 : 0.0},
        {"nccl_overlapped_ceilings", nccl_ranks > 0 && nccl_overlapped == nccl_ranks ? 1.0 : 0.0}};
    nlohmann::json system = {{"nodes", nodes},
                             {"gpus", gpus},
                             {"versions", versions},
                             {"ceilings", ceilings},
                             {"topology", topology}};
    out_.write({{"type", "start"},
                {"system", system},
                {"startup", startup},
                {"ranks", ctx_.size},
                {"workers", nworkers},
                {"gpu_workers", gpu_count_},
                {"nodes", static_cast<int>(nodes.size())}},
               true);
  }

  std::vector<WorkerInfo> participants(ExecPath path) const {
    switch (path) {
      case ExecPath::single_cpu:
        return {workers_.front()};
      case ExecPath::multi_cpu:
        return workers_;
      case ExecPath::single_gpu:
        return gpu_workers_.empty() ? std::vector<WorkerInfo>{}
                                    : std::vector<WorkerInfo>{gpu_workers_.front()};
      case ExecPath::multi_gpu:
        return gpu_workers_;
    }
    return {};
  }

  /// Waits for one message from a participant; throws CaseFailure on a worker error or timeout.
  Message wait(double deadline) {
    Message m;
    Backoff backoff(wait_sleep_us_);
    while (!try_receive(ctx_.world, MPI_ANY_SOURCE, MPI_ANY_TAG, m)) {
      if (deadline > 0 && now() > deadline)
        throw CaseFailure{"timeout",
                          fmt::format("case exceeded --case-timeout of {} s", plan_.case_timeout_s),
                          true};
      backoff.pause();
    }
    if (m.tag == kTagError) {
      Reader r(m.data);
      throw CaseFailure{"failed", fmt::format("rank {}: {}", m.source, r.get_str()), false};
    }
    return m;
  }

  nlohmann::json run_case(const CaseSpec& spec_in, int k, int n, bool& restart) {
    CaseSpec spec = spec_in;
    const std::vector<WorkerInfo> parts = participants(spec.path);
    spec.workers = static_cast<int>(parts.size());
    const Device device = device_of(spec.path);
    // GPU cases: the host is idle and repeats are short, so poll the workers closely.
    wait_sleep_us_ = device == Device::gpu ? kGpuPollUs : 500;
    nlohmann::json rec = {{"type", "case"},
                          {"index", spec.index},
                          {"id", spec.id},
                          {"workload", spec.workload},
                          {"path", std::string(to_string(spec.path))},
                          {"params", spec.params.to_json()},
                          {"preset", spec.preset},
                          {"device", device == Device::gpu ? "gpu" : "cpu"},
                          {"workers", spec.workers},
                          {"threads_per_worker", 0},
                          {"warmup", spec.warmup},
                          {"status", "ok"},
                          {"message", ""},
                          {"started_utc", utc_now()}};
    if (parts.empty()) {
      rec["status"] = "skipped";
      rec["message"] = gpu_skip_reason_;
      rec["ended_utc"] = utc_now();
      return rec;
    }
    const int threads = spec.path == ExecPath::single_cpu ? 1 : parts.front().threads;
    rec["threads_per_worker"] = threads;
    rec["hosts"] = [&] {
      nlohmann::json h = nlohmann::json::array();
      for (const auto& p : parts) h.push_back(p.host);
      return h;
    }();

    std::map<int, int> case_rank;
    for (std::size_t i = 0; i < parts.size(); ++i) case_rank[parts[i].rank] = static_cast<int>(i);
    const double deadline = plan_.case_timeout_s > 0 ? now() + plan_.case_timeout_s : 0;
    bool begun = false;
    try {
      const Workload& wl = find_workload(spec.workload);
      auto sc = wl.make_scheduler(spec);
      // Case begin: each participant builds its WorkerCase (allocation happens here, untimed).
      for (std::size_t i = 0; i < parts.size(); ++i) {
        const int t = spec.path == ExecPath::single_cpu ? 1 : parts[i].threads;
        nlohmann::json j = {{"spec", case_spec_to_json(spec)},
                            {"rank", static_cast<int>(i)},
                            {"size", spec.workers},
                            {"threads", t}};
        Writer w;
        w.put_str(j.dump());
        send(ctx_.world, parts[i].rank, kTagCaseBegin, w);
      }
      begun = true;
      for (std::size_t i = 0; i < parts.size(); ++i) {
        const Message m = wait(deadline);
        if (m.tag != kTagReady)
          throw CaseFailure{"failed", fmt::format("internal: tag {} instead of ready", m.tag),
                            true};
      }

      nlohmann::json repeats = nlohmann::json::array();
      nlohmann::json results = nlohmann::json::array();
      nlohmann::json ev_repeat = nlohmann::json::array(), ev_worker = nlohmann::json::array(),
                     ev_task = nlohmann::json::array(), ev_phase = nlohmann::json::array(),
                     ev_start = nlohmann::json::array(), ev_end = nlohmann::json::array(),
                     ev_bytes = nlohmann::json::array();
      std::vector<double> totals;
      const int total_repeats = spec.warmup + spec.repeats;
      for (int r = 0; r < total_repeats; ++r) {
        const bool measured = r >= spec.warmup;
        out_.write({{"type", "progress"},
                    {"case", k},
                    {"cases", n},
                    {"id", spec.id},
                    {"workload", spec.workload},
                    {"path", std::string(to_string(spec.path))},
                    {"repeat", r - spec.warmup},
                    {"repeats", spec.repeats},
                    {"warmup", !measured}},
                   false);
        sc->begin_repeat();
        const std::int64_t ntasks = sc->num_tasks();
        std::int64_t next = 0;
        PhaseTimes phases;
        const double t0 = now();
        Writer rb;
        rb.put<std::int32_t>(r);
        for (const auto& p : parts) send(ctx_.world, p.rank, kTagRepeatBegin, rb);
        std::size_t done = 0;
        while (done < parts.size()) {
          const Message m = wait(deadline);
          Reader rd(m.data);
          const int crank = case_rank.at(m.source);
          if (m.tag == kTagRequest) {
            const int want = rd.get<std::int32_t>();
            const int count = rd.get<std::int32_t>();
            for (int i = 0; i < count; ++i) {
              TaskOutcome o;
              o.task = rd.get<std::int64_t>();
              o.start = rd.get<double>();
              o.end = rd.get<double>();
              o.bytes = rd.get<std::int64_t>();
              o.phase = static_cast<Phase>(rd.get<std::int32_t>());
              o.partial = rd.get_vec<double>();
              sc->on_task(o);
              if (measured) {
                ev_repeat.push_back(r - spec.warmup);
                ev_worker.push_back(crank);
                ev_task.push_back(o.task);
                ev_phase.push_back(std::string(to_string(o.phase)));
                ev_start.push_back(o.start);
                ev_end.push_back(o.end);
                ev_bytes.push_back(o.bytes);
              }
            }
            if (want > 0) {
              std::vector<std::int64_t> ids;
              while (static_cast<int>(ids.size()) < want && next < ntasks) ids.push_back(next++);
              Writer w;
              w.put_vec(ids);
              send(ctx_.world, m.source, kTagAssign, w);
            }
          } else if (m.tag == kTagDone) {
            PhaseTimes pt;
            pt.generate = rd.get<double>();
            pt.compute = rd.get<double>();
            pt.communicate = rd.get<double>();
            phases.generate = std::max(phases.generate, pt.generate);
            phases.compute = std::max(phases.compute, pt.compute);
            phases.communicate = std::max(phases.communicate, pt.communicate);
            sc->on_worker_done(crank, rd.get_vec<double>());
            ++done;
          } else {
            throw CaseFailure{"failed",
                              fmt::format("internal: unexpected tag {} in a repeat", m.tag), true};
          }
        }
        const double total = now() - t0;
        nlohmann::json result = sc->end_repeat();
        if (measured) {
          totals.push_back(total);
          repeats.push_back({{"generate", phases.generate},
                             {"compute", phases.compute},
                             {"communicate", phases.communicate},
                             {"total", total}});
          results.push_back(result);
        }
      }
      rec["repeats"] = repeats;
      rec["results"] = results;
      rec["result"] = results.empty() ? nlohmann::json::object() : results.back();
      rec["task_events"] = {{"repeat", ev_repeat}, {"worker", ev_worker}, {"task", ev_task},
                            {"phase", ev_phase},   {"start", ev_start},   {"end", ev_end},
                            {"bytes", ev_bytes}};

      // Validation, outside the timed region.
      for (const auto& p : parts) send_empty(ctx_.world, p.rank, kTagValidate);
      std::vector<std::vector<double>> vparts(parts.size());
      for (std::size_t i = 0; i < parts.size(); ++i) {
        const Message m = wait(deadline);
        if (m.tag != kTagValidation)
          throw CaseFailure{"failed", fmt::format("internal: tag {} instead of validation", m.tag),
                            true};
        Reader rd(m.data);
        vparts[static_cast<std::size_t>(case_rank.at(m.source))] = rd.get_vec<double>();
      }
      for (const auto& p : parts) send_empty(ctx_.world, p.rank, kTagCaseEnd);
      begun = false;

      std::vector<Check> checks = sc->validate(vparts);
      const Fingerprint fp = sc->fingerprint();
      const std::string key = spec.workload + "|" + spec.params.canonical();
      if (auto it = references_.find(key); it != references_.end()) {
        for (Check c : wl.cross_check(it->second.second, fp)) {
          c.name = "cross:" + c.name;
          c.detail += " (vs " + it->second.first + ")";
          checks.push_back(c);
        }
      } else {
        references_.emplace(key, std::make_pair(std::string(to_string(spec.path)), fp));
      }
      nlohmann::json validation = nlohmann::json::array();
      std::string failed;
      for (const auto& c : checks) {
        validation.push_back({{"name", c.name},
                              {"value", c.value},
                              {"limit", c.limit},
                              {"pass", c.pass},
                              {"detail", c.detail}});
        if (!c.pass && failed.empty())
          failed = fmt::format("validation failed: {} = {:.3g} exceeds {:.3g} ({})", c.name,
                               c.value, c.limit, c.detail);
      }
      rec["validation"] = validation;
      if (!failed.empty()) {
        rec["status"] = "failed";
        rec["message"] = failed;
      }
      const Work work = sc->work();
      rec["work"] = {{"units", work.units},
                     {"unit", work.unit},
                     {"bytes", work.bytes},
                     {"flops", work.flops},
                     {"bound", work.bound == Work::Bound::bytes ? "bytes" : "flops"}};
      const double med = results::median(totals);
      std::vector<double> computes;
      for (const auto& rr : repeats) computes.push_back(rr.at("compute").get<double>());
      const double med_compute = results::median(computes);
      rec["metrics"] = {{"median_s", med},
                        {"throughput", work.units / med},
                        {"throughput_unit", work.unit + "/s"},
                        {"gbytes_per_s", work.bytes / med / 1e9},
                        {"gflops", work.flops / med / 1e9},
                        {"median_compute_s", med_compute},
                        {"compute_throughput", med_compute > 0 ? work.units / med_compute : 0.0}};
    } catch (const CaseFailure& f) {
      rec["status"] = f.status;
      rec["message"] = f.message;
      // A single participant recovers by itself after reporting an error; several may be
      // stuck in collectives, so the job is restarted for the remaining cases.
      restart = f.restart || (begun && parts.size() > 1);
      if (!restart && begun)
        for (const auto& p : parts) send_empty(ctx_.world, p.rank, kTagCaseEnd);
    } catch (const std::exception& e) {
      rec["status"] = "failed";
      rec["message"] = e.what();
      restart = begun;
    }
    rec["ended_utc"] = utc_now();
    return rec;
  }

  const JobPlan& plan_;
  RankContext& ctx_;
  StreamWriter out_;
  std::vector<WorkerInfo> workers_;
  std::vector<WorkerInfo> gpu_workers_;
  int gpu_count_ = 0;
  std::string gpu_skip_reason_;
  std::map<std::string, std::pair<std::string, Fingerprint>> references_;
  int wait_sleep_us_ = 500;  ///< longest sleep between probes in wait() (short for GPU cases)
};

}  // namespace

int run_scheduler(const JobPlan& plan, RankContext& ctx) {
  if (ctx.size < 2)
    throw EnvironmentError("scalebench needs at least 2 MPI ranks (a scheduler and a worker)");
  // The job never outlives its launcher: when the launcher is gone (killed, kill -9 included),
  // this rank exits at once and the MPI starter ends every other rank (a rank that exits
  // without MPI_Finalize ends an OpenMPI or srun --kill-on-bad-exit job). Every finished case
  // is already durable in the record stream, which `scalebench recover` folds into the report.
  const LifelineWatch lifeline(plan.lifeline_path, 0.5,
                               [] { std::_Exit(protocol::kExitLauncherGone); });
  Scheduler s(plan, ctx);
  return s.run();
}

}  // namespace sb::detail
