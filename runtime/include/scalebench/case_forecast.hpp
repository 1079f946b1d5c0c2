#pragma once
/// @file case_forecast.hpp
/// Whether and how a case would run on an allocation of a given shape, decided before any job
/// starts: the scheduler skips cases with the same rules (cannot_run_reason), `run --list`
/// prints the forecast for this machine, and `submit` checks a batch job's cases against the
/// nodes and GPUs it asks for. A forecast never runs the workload: it asks its contract
/// (Workload::paths, min_workers, plan_workers, memory_needed).

#include <cstddef>
#include <limits>
#include <string>

#include "scalebench/workload.hpp"

namespace sb {

/// The allocation a forecast is made for.
struct MachineShape {
  int nodes = 1;
  int workers = 1;            ///< CPU workers (one per GPU, or one per node without GPUs)
  int threads = 1;            ///< CPU threads per worker (the node's usable cores shared)
  int gpus = 0;               ///< GPUs of the allocation: one GPU worker each
  int gpus_per_node = 0;      ///< of the busiest node
  std::string no_gpu_reason;  ///< why GPU cases are skipped when `gpus` is 0
  /// Bytes of host memory a node has for the run (<0: not known, not checked).
  double host_memory = -1;
  /// Bytes free on each GPU (<0: not known, not checked).
  double gpu_memory = -1;
  /// SCALEBENCH_PARTICIPANTS=auto: a multi-* case may use fewer workers (plan_workers).
  bool automatic_participants = true;
};

struct CaseForecast {
  static constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
  enum class Outcome { run, skip, fail };
  Outcome outcome = Outcome::run;
  /// Why it is skipped or will fail (the message the run would record), "" when it runs.
  std::string reason;
  bool not_applicable = false;     ///< skipped by the workload's nature (comms on one worker)
  int workers = 1;                 ///< workers taking part (per device for each-*)
  int threads = 1;                 ///< CPU threads per worker
  int devices = 1;                 ///< each-*: devices measured at once
  std::string fewer_why;           ///< a multi-* case on fewer workers than its path has: why
  double host_bytes = kUnknown;    ///< host memory per worker (NaN: no estimate)
  double device_bytes = kUnknown;  ///< GPU memory per worker (NaN: no estimate or CPU path)
};

/// The forecast of `spec` (a planned case) on `machine`. Throws nothing: a workload whose
/// estimate throws gives no memory figure.
[[nodiscard]] CaseForecast forecast_case(const CaseSpec& spec, const MachineShape& machine);

/// Host memory this process may still use, in bytes (MemAvailable, or the room under its
/// cgroup's memory limit when that is lower; SCALEBENCH_HOST_MEMORY_BYTES overrides both); <0
/// when unknown. What a worker's memory check compares with.
[[nodiscard]] double available_host_memory();

/// "81.6 GB", "512.0 MB": the memory figures of the messages above (decimal units).
[[nodiscard]] std::string memory_text(double bytes);

/// Why `w` cannot run on `path` with `workers` workers (Workload::paths, min_workers), "" when
/// it can: the message of the case's `skipped` record.
[[nodiscard]] std::string cannot_run_reason(const Workload& w, ExecPath path, std::size_t workers);

/// Why a case needing `need` per worker does not fit, "" when it fits or nothing is known:
/// "svd: needs 81.6 GB of GPU memory per worker, GPU 0 has 79.1 GB free; ..." (`gpu` < 0: "a
/// GPU"). `host_total` is the node's memory for the run, shared by `host_sharers` workers.
[[nodiscard]] std::string memory_shortfall(const std::string& workload, const MemoryNeed& need,
                                           double host_total, int host_sharers, double gpu_free,
                                           int gpu);

}  // namespace sb
