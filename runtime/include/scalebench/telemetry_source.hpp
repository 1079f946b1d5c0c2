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
  double t = kNoReading;  ///< sb::now() when taken
  // CPU: the node and this process
  double node_busy_s = kNoReading;  ///< cumulative busy time of the CPUs this process may run on
                                    ///< (/proc/stat user+nice+system+irq+softirq+steal), s
  double steal_s = kNoReading;      ///< of node_busy_s, the hypervisor's steal time, s
  double own_cpu_s = kNoReading;    ///< cumulative CPU time of this process, all threads, s
  double cpu_mhz = kNoReading;      ///< median current clock of (up to 8 of) those CPUs, MHz
  double cgroup_throttled_s = kNoReading;  ///< cumulative time the process's cgroup (or an
                                           ///< ancestor) was held back by its CPU quota, s
  double vector_probe_s = kNoReading;      ///< seconds vector_probe_s() took (CPU cases only)
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

/// The same GPU's error counters (ECC, retired pages or remapped rows, XID events), at most
/// every `min_interval_s`: they change rarely, and some NVML builds take milliseconds to read
/// them. Null when NVML, the driver or that GPU is missing.
[[nodiscard]] std::unique_ptr<TelemetrySource> make_gpu_counter_telemetry(
    const std::string& pci_bus_id, double min_interval_s);

}  // namespace sb
