#pragma once
/// @file gpu_process_census.hpp
/// (runtime internals) Who else computes on a worker's GPU while its case runs: the compute
/// processes NVML lists on the GPU (pid, memory, SM utilization), told apart from the job's own
/// ranks by pid, gathered over the case's readings (one before the case, the rest during its
/// timed repeats). Pure: nvml_processes.cpp fills the snapshots; tests feed their own.

#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sb::detail {

/// One process with a compute context on the GPU, as one reading saw it.
struct GpuProcess {
  unsigned pid = 0;
  double memory_bytes = std::numeric_limits<double>::quiet_NaN();  ///< NaN: NVML cannot tell
  /// SM utilization over NVML's last sample period, percent; NaN when NVML had no sample of it
  /// (it samples processes every 1/6 s to 1 s and only those that used the SMs).
  double sm_util = std::numeric_limits<double>::quiet_NaN();
  std::string name;     ///< "python3" (/proc/PID/comm, else NVML's name); "" when unknown
  std::string user;     ///< its owner's name (else uid); "" when unknown
  std::string command;  ///< its command line, shortened; "" when unknown
  /// A rank of the other side of this worker's A/B run (started with its mark, ab_protocol.hpp):
  /// parked while this side measures, holding its context but not using the GPU.
  bool other_side = false;
};

/// One reading of the GPU's processes.
struct ProcessSnapshot {
  bool listed = false;   ///< NVML listed the compute processes (false: `why` says why not)
  std::string why;       ///< why the list is unavailable ("NVML: Not Supported")
  bool sampled = false;  ///< per-process SM utilization was read (samples may still be absent)
  double device_util = std::numeric_limits<double>::quiet_NaN();  ///< the GPU's, percent
  std::vector<GpuProcess> processes;
};

/// What one reading says about other processes: how many, and the SM utilization they took.
struct OthersReading {
  double count = std::numeric_limits<double>::quiet_NaN();    ///< NaN: the list is unavailable
  double sm_util = std::numeric_limits<double>::quiet_NaN();  ///< sum over them, percent; NaN:
                                                              ///< no sample of any of them
};

/// NVIDIA's MPS server holds the contexts of its clients (scalebench's own workers among them
/// under MPS): it is not another user of the GPU by itself.
[[nodiscard]] bool is_mps_server(const GpuProcess& p);

/// The other processes on one GPU over one case.
class ProcessCensus {
 public:
  /// `own`: the pids of the job's own ranks on this node (its workers; the scheduler holds no
  /// GPU context).
  explicit ProcessCensus(std::set<unsigned> own = {}) : own_(std::move(own)) {}
  void set_own(std::set<unsigned> own) { own_ = std::move(own); }
  /// Forgets the previous case.
  void reset();
  /// Adds a reading; `before`: taken as the case began, before its repeats.
  OthersReading add(const ProcessSnapshot& s, bool before);
  /// The case's census:
  ///   {"listed": bool, "why": "..." (when not listed), "own_seen": bool, "other_side": N (the
  ///    A/B run's other side's ranks listed, not others; only when there were any),
  ///    "readings": N (during
  ///    the timed repeats), "others": [{"pid", "name", "user", "command", "memory_bytes",
  ///    "sm_util_max", "sm_util_median" (percent, null: never sampled), "seen_before" (bool),
  ///    "readings" (of the N, those that listed it)}, ...]}
  /// `own_seen` false while NVML listed processes: this worker's own pid was never among them,
  /// so NVML's pids are of another pid namespace (a container) and the job's processes cannot
  /// be told from others: every listed process is kept, with "note".
  [[nodiscard]] nlohmann::json summary() const;

 private:
  struct Seen {
    GpuProcess last;
    double memory_max = std::numeric_limits<double>::quiet_NaN();
    std::vector<double> sm;
    bool before = false;
    int readings = 0;
  };
  std::set<unsigned> own_;
  std::map<unsigned, Seen> others_;
  std::map<unsigned, Seen> all_;   ///< every listed process, own ones too (for own_seen false)
  std::set<unsigned> other_side_;  ///< the A/B run's other side's ranks seen
  bool listed_ = false, any_listed_ = false, own_seen_ = false, any_process_ = false;
  std::string why_;
  int readings_ = 0;
};

}  // namespace sb::detail
