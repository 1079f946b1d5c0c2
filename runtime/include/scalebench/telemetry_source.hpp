#pragma once
/// @file telemetry_source.hpp
/// What a worker reads while its timed repeats run (docs/report-schema.md, "Telemetry"), and
/// where the readings come from: one TelemetrySource per kind of device, the node's CPUs through
/// Linux (/proc/stat, cpufreq, the cgroup's cpu.stat) and the worker's GPU through NVML (loaded
/// at run time); tests substitute a fake source. telemetry_recorder.hpp samples them.

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sb {

inline constexpr double kNoReading = std::numeric_limits<double>::quiet_NaN();

/// NVML's clock-event ("throttle") reason bits (nvmlClocksEventReason*).
namespace clock_event {
inline constexpr std::uint64_t kGpuIdle = 0x1;
inline constexpr std::uint64_t kApplicationsClocksSetting = 0x2;
inline constexpr std::uint64_t kSwPowerCap = 0x4;
inline constexpr std::uint64_t kHwSlowdown = 0x8;
inline constexpr std::uint64_t kSyncBoost = 0x10;
inline constexpr std::uint64_t kSwThermalSlowdown = 0x20;
inline constexpr std::uint64_t kHwThermalSlowdown = 0x40;
inline constexpr std::uint64_t kHwPowerBrakeSlowdown = 0x80;
inline constexpr std::uint64_t kDisplayClockSetting = 0x100;
/// The reasons that make a repeat throttled: power, thermal and hardware slowdowns.
inline constexpr std::uint64_t kThrottling =
    kSwPowerCap | kHwSlowdown | kSwThermalSlowdown | kHwThermalSlowdown | kHwPowerBrakeSlowdown;
}  // namespace clock_event

/// One reading of every signal. A signal no source gives stays NaN (kNoReading); cumulative
/// counters are totals since some origin of their own, meaningful as differences only.
struct TelemetrySample {
  double t = kNoReading;       ///< sb::now() when taken
  double t_unix = kNoReading;  ///< the same moment by the system clock, s since 1970
  // CPU: the node and this process
  double node_busy_s = kNoReading;  ///< cumulative busy time of the CPUs this process may run on
                                    ///< (/proc/stat user+nice+system+irq+softirq+steal), s
  double steal_s = kNoReading;      ///< of node_busy_s, the hypervisor's steal time, s
  double node_irq_s = kNoReading;   ///< of node_busy_s, interrupt handling (irq + softirq), s
  double own_cpu_s = kNoReading;    ///< cumulative CPU time of this process, all threads, s
  double cpu_mhz = kNoReading;      ///< median current clock of (up to 8 of) those CPUs, MHz
  double cgroup_throttled_s = kNoReading;  ///< cumulative time the process's cgroup (or an
                                           ///< ancestor) was held back by its CPU quota, s
  double vector_probe_s = kNoReading;      ///< seconds vector_probe_s() took (CPU cases only)
  double cpu_energy_j = kNoReading;  ///< cumulative energy of the node's CPU packages (RAPL), J
  // GPU: this worker's one GPU
  double gpu_sm_mhz = kNoReading;
  double gpu_mem_mhz = kNoReading;
  double gpu_app_sm_mhz = kNoReading;  ///< the application (target) SM clock
  double gpu_power_w = kNoReading;
  double gpu_power_limit_w = kNoReading;  ///< the enforced limit
  double gpu_temp_c = kNoReading;
  double gpu_reasons = kNoReading;        ///< clock-event reason bits (as a number; NaN: unknown)
  double gpu_ecc_corrected = kNoReading;  ///< cumulative volatile ECC error counts
  double gpu_ecc_uncorrected = kNoReading;
  double gpu_retired_pages = kNoReading;  ///< pages retired (both causes), or remapped rows
  double gpu_xid_events = kNoReading;     ///< XID errors seen since the source opened
  double gpu_last_xid = kNoReading;       ///< the last XID seen (its number)
  double gpu_nvlink_errors = kNoReading;  ///< cumulative NVLink CRC, replay and recovery errors
  double gpu_energy_j = kNoReading;       ///< cumulative energy of the GPU (NVML), J
  double gpu_util_pct = kNoReading;       ///< the GPU's utilization (a kernel ran), percent
  double gpu_others = kNoReading;         ///< other processes with a compute context on it
  double gpu_others_sm_pct = kNoReading;  ///< their SM utilization, summed, percent
};

/// One kind of readings. read() is called from the recorder's thread only; it never throws and
/// leaves a signal it cannot read untouched.
class TelemetrySource {
 public:
  virtual ~TelemetrySource() = default;
  TelemetrySource() = default;
  TelemetrySource(const TelemetrySource&) = delete;
  TelemetrySource& operator=(const TelemetrySource&) = delete;
  /// Fills the signals this source gives.
  virtual void read(TelemetrySample& s) noexcept = 0;
  /// Facts that do not change while it runs: {"cpus": 64} (CPUs whose time node_busy_s
  /// counts), {"gpu_name": "NVIDIA H200", "pci_bus_id": ...}.
  [[nodiscard]] virtual nlohmann::json describe() const { return nlohmann::json::object(); }
  /// True for a GPU source: sampled in GPU cases only.
  [[nodiscard]] virtual bool gpu() const { return false; }
  /// True for a source sampled in CPU cases only (one that costs the GPU worker's host time).
  [[nodiscard]] virtual bool cpu_cases_only() const { return false; }
  /// Its name in the telemetry's `read_s` (what its readings cost): "cpu", "gpu", ...
  [[nodiscard]] virtual std::string name() const { return gpu() ? "gpu" : "cpu"; }
  /// The least time between two of its readings, seconds: a reading asked for sooner (a short
  /// repeat's begin or end) leaves this source out, its signals unread. 0: every reading.
  [[nodiscard]] virtual double min_interval_s() const { return 0; }
  /// A case begins (CASE_BEGIN, before its warm-up; no reading is under way): a source that
  /// keeps state per case starts anew, and may take a reading of its own, "before the case".
  virtual void begin_case(bool /*gpu_case*/) noexcept {}
  /// What the source kept over the case, after its last reading; null: nothing. The recorder
  /// puts it under the source's name in the case's `summaries`.
  [[nodiscard]] virtual nlohmann::json case_summary() const { return nullptr; }
};

/// The CPUs this process may run on (sched_getaffinity), through /proc/stat, cpufreq (else
/// /proc/cpuinfo) and the cgroup's cpu.stat (v1 or v2). Never null on Linux.
[[nodiscard]] std::unique_ptr<TelemetrySource> make_cpu_telemetry();

/// Seconds a fixed batch of independent vector multiply-adds (65536 of 4 doubles: AVX2 FMAs
/// where the CPU has them) took this thread: the vector units' throughput. A virtual
/// machine's cores can run vector code 20-60% slower for seconds while the clock and a chain of
/// dependent integer steps keep their speed (docs/ci.md, "When the machine was busy").
[[nodiscard]] double vector_probe_s() noexcept;

/// vector_probe_s() at every reading of a CPU case (`vector_probe_s`; the source's name is
/// "vector"), taken while the case's own threads run.
[[nodiscard]] std::unique_ptr<TelemetrySource> make_vector_telemetry();

/// The GPU at PCI bus id `pci_bus_id` through NVML: clocks, power, temperature and clock-event
/// reasons, at most every `min_interval_s`; null when NVML, the driver or that GPU is missing.
[[nodiscard]] std::unique_ptr<TelemetrySource> make_gpu_telemetry(const std::string& pci_bus_id,
                                                                  double min_interval_s = 0);

/// The same GPU's error counters (ECC, retired pages or remapped rows, XID events, NVLink CRC,
/// replay and recovery errors), at most every `min_interval_s`: they change rarely, and some
/// NVML builds take milliseconds to read them. Null when NVML, the driver or that GPU is missing.
[[nodiscard]] std::unique_ptr<TelemetrySource> make_gpu_counter_telemetry(
    const std::string& pci_bus_id, double min_interval_s);

/// The same GPU's energy counter (nvmlDeviceGetTotalEnergyConsumption) at every reading, so that
/// each repeat is bracketed (`gpu_energy_j`); describe() gives {"gpu_energy": "nvml"} or
/// {"gpu_energy_unavailable": WHY}. Null when NVML, the driver or that GPU is missing.
[[nodiscard]] std::unique_ptr<TelemetrySource> make_gpu_energy_telemetry(
    const std::string& pci_bus_id);

/// The other compute processes on the same GPU (nvml_processes.hpp): one reading when a GPU case
/// begins, then at most every `min_interval_s` during its timed repeats (`gpu_others`,
/// `gpu_others_sm_pct`, `gpu_util_pct`); its case_summary() names them. `own_pids`: the job's
/// ranks on this node, which are not others; `ab_mark`: an A/B run's mark (JobPlan::ab_run), so
/// that the other side's parked ranks are not others either. Null when NVML, the driver or that
/// GPU is missing.
[[nodiscard]] std::unique_ptr<TelemetrySource> make_gpu_process_telemetry(
    const std::string& pci_bus_id, const std::vector<unsigned>& own_pids, double min_interval_s,
    const std::string& ab_mark = {});

/// The node's CPU package energy through RAPL (powercap): every `intel-rapl:N` package domain
/// under `powercap_root` (settings::powercap_dir(), /sys/class/powercap; AMD's packages appear
/// there too), `energy_uj` summed and unwrapped at `max_energy_range_uj` (`cpu_energy_j`). CPU
/// cases only. Never null: without a readable domain it reads nothing and describe() gives
/// {"cpu_energy_unavailable": WHY}; else {"cpu_energy": "rapl: package-0, package-1"}.
[[nodiscard]] std::unique_ptr<TelemetrySource> make_rapl_telemetry(
    const std::string& powercap_root);

}  // namespace sb
