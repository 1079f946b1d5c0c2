// A worker's GPU as telemetry sources (telemetry_source.hpp), through NVML loaded at run time
// (nvml_library.hpp): clocks, power, temperature and clock-event reasons; read more rarely, ECC
// and retired-page counters, NVLink error counters and XID errors through an NVML event set
// polled without waiting; and its energy counter at every reading.
#include <memory>
#include <string>
#include <vector>

#include "nvml_health.hpp"
#include "nvml_library.hpp"
#include "scalebench/telemetry_source.hpp"

namespace sb {
namespace {

using namespace detail;  // the NVML ABI subset

/// Clocks, power, temperature and clock-event reasons.
class NvmlGpuTelemetry final : public TelemetrySource {
 public:
  NvmlGpuTelemetry(std::unique_ptr<NvmlLibrary> nvml, nvmlDevice_t dev, std::string bus,
                   double min_interval_s)
      : nvml_(std::move(nvml)), dev_(dev), bus_(std::move(bus)), min_interval_s_(min_interval_s) {
    name_ = nvml_->device_name(dev_);
    unsigned mhz = 0;
    if (nvml_->app_clock != nullptr && nvml_->app_clock(dev_, kClockSm, &mhz) == kNvmlSuccess &&
        mhz > 0) {
      app_sm_mhz_ = mhz;
    } else if (nvml_->max_clock != nullptr &&
               nvml_->max_clock(dev_, kClockSm, &mhz) == kNvmlSuccess && mhz > 0) {
      app_sm_mhz_ = mhz;  // no application clock: the maximum stands for it
    }
  }

  void read(TelemetrySample& s) noexcept override {
    unsigned v = 0;
    if (nvml_->clock != nullptr) {
      if (nvml_->clock(dev_, kClockSm, &v) == kNvmlSuccess) s.gpu_sm_mhz = v;
      if (nvml_->clock(dev_, kClockMem, &v) == kNvmlSuccess) s.gpu_mem_mhz = v;
    }
    s.gpu_app_sm_mhz = app_sm_mhz_;
    if (nvml_->power_usage != nullptr && nvml_->power_usage(dev_, &v) == kNvmlSuccess)
      s.gpu_power_w = v / 1000.0;
    if (nvml_->power_limit != nullptr && nvml_->power_limit(dev_, &v) == kNvmlSuccess)
      s.gpu_power_limit_w = v / 1000.0;
    if (nvml_->temperature != nullptr &&
        nvml_->temperature(dev_, kTemperatureGpu, &v) == kNvmlSuccess)
      s.gpu_temp_c = v;
    unsigned long long reasons = 0;
    if (nvml_->clock_event_reasons != nullptr &&
        nvml_->clock_event_reasons(dev_, &reasons) == kNvmlSuccess)
      s.gpu_reasons = static_cast<double>(reasons);
  }

  [[nodiscard]] nlohmann::json describe() const override {
    nlohmann::json j = {{"gpu_name", name_}, {"pci_bus_id", bus_}};
    if (app_sm_mhz_ > 0) j["gpu_app_sm_mhz"] = app_sm_mhz_;
    return j;
  }
  [[nodiscard]] bool gpu() const override { return true; }
  [[nodiscard]] double min_interval_s() const override { return min_interval_s_; }

 private:
  std::unique_ptr<NvmlLibrary> nvml_;
  nvmlDevice_t dev_ = nullptr;
  std::string bus_;
  std::string name_;
  double min_interval_s_ = 0;
  double app_sm_mhz_ = kNoReading;
};

/// ECC and retired-page (or remapped-row) counters and XID events.
class NvmlGpuCounters final : public TelemetrySource {
 public:
  NvmlGpuCounters(std::unique_ptr<NvmlLibrary> nvml, nvmlDevice_t dev, double min_interval_s)
      : nvml_(std::move(nvml)), dev_(dev), min_interval_s_(min_interval_s) {
    // XID errors arrive as events; registering may be refused (no permission, old GPU).
    if (nvml_->event_set_create != nullptr && nvml_->register_events != nullptr &&
        nvml_->event_set_wait != nullptr && nvml_->event_set_create(&events_) == kNvmlSuccess &&
        nvml_->register_events(dev_, kEventXidCritical, events_) != kNvmlSuccess) {
      free_events();
    }
    for (const auto& [link, remote] : nvml_->nvlinks(dev_, true)) links_.push_back(link);
  }
  ~NvmlGpuCounters() override { free_events(); }

  void read(TelemetrySample& s) noexcept override {
    read_errors(s);
    if (!links_.empty()) {
      std::string why;
      if (const auto e = read_nvlink_errors(*nvml_, dev_, links_, why))
        s.gpu_nvlink_errors = e->crc + e->replay + e->recovery;
    }
    poll_xid();
    if (events_ != nullptr) {
      s.gpu_xid_events = xid_events_;
      if (xid_events_ > 0) s.gpu_last_xid = last_xid_;
    }
  }
  [[nodiscard]] bool gpu() const override { return true; }
  [[nodiscard]] std::string name() const override { return "gpu_counters"; }
  [[nodiscard]] double min_interval_s() const override { return min_interval_s_; }

 private:
  void read_errors(TelemetrySample& s) noexcept {
    unsigned long long n = 0;
    if (nvml_->ecc_errors != nullptr) {  // NVML_ERROR_NOT_SUPPORTED without ECC: stays NaN
      if (nvml_->ecc_errors(dev_, kMemoryErrorCorrected, kVolatileEcc, &n) == kNvmlSuccess)
        s.gpu_ecc_corrected = static_cast<double>(n);
      if (nvml_->ecc_errors(dev_, kMemoryErrorUncorrected, kVolatileEcc, &n) == kNvmlSuccess)
        s.gpu_ecc_uncorrected = static_cast<double>(n);
    }
    // Ampere and later remap rows instead of retiring pages.
    unsigned corr = 0, unc = 0, pending = 0, failed = 0;
    if (nvml_->remapped_rows != nullptr &&
        nvml_->remapped_rows(dev_, &corr, &unc, &pending, &failed) == kNvmlSuccess) {
      s.gpu_retired_pages = corr + unc;
      return;
    }
    if (nvml_->retired_pages == nullptr) return;
    double total = 0;
    bool any = false;
    for (const int cause : {kRetiredMultipleSbe, kRetiredDbe}) {
      unsigned count = 0;  // 0: ask for the count only
      const nvmlReturn_t r = nvml_->retired_pages(dev_, cause, &count, nullptr);
      if (r == kNvmlSuccess || r == kNvmlInsufficientSize) {
        total += count;
        any = true;
      }
    }
    if (any) s.gpu_retired_pages = total;
  }

  void poll_xid() noexcept {
    if (events_ == nullptr) return;
    NvmlEventData e{};
    // timeout 0: only what has arrived
    while (nvml_->event_set_wait(events_, &e, 0) == kNvmlSuccess) {
      if ((e.event_type & kEventXidCritical) != 0) {
        ++xid_events_;
        last_xid_ = static_cast<double>(e.event_data);
      }
    }
  }

  void free_events() noexcept {
    if (events_ != nullptr && nvml_->event_set_free != nullptr) nvml_->event_set_free(events_);
    events_ = nullptr;
  }

  std::unique_ptr<NvmlLibrary> nvml_;
  nvmlDevice_t dev_ = nullptr;
  double min_interval_s_ = 0;
  nvmlEventSet_t events_ = nullptr;
  double xid_events_ = 0;
  double last_xid_ = kNoReading;
  std::vector<unsigned> links_;  ///< NVLinks up when it opened
};

/// The energy counter, read at every reading so that each repeat is bracketed.
class NvmlGpuEnergy final : public TelemetrySource {
 public:
  NvmlGpuEnergy(std::unique_ptr<NvmlLibrary> nvml, nvmlDevice_t dev)
      : nvml_(std::move(nvml)), dev_(dev) {
    unsigned long long mj = 0;
    if (nvml_->total_energy == nullptr) {
      why_ = "NVML has no nvmlDeviceGetTotalEnergyConsumption (a driver older than Volta's)";
    } else if (const nvmlReturn_t r = nvml_->total_energy(dev_, &mj); r != kNvmlSuccess) {
      why_ = nvml_->why(r) + " (nvmlDeviceGetTotalEnergyConsumption)";
    }
  }
  void read(TelemetrySample& s) noexcept override {
    unsigned long long mj = 0;
    if (why_.empty() && nvml_->total_energy(dev_, &mj) == kNvmlSuccess)
      s.gpu_energy_j = static_cast<double>(mj) * 1e-3;
  }
  [[nodiscard]] nlohmann::json describe() const override {
    if (!why_.empty()) return {{"gpu_energy_unavailable", why_}};
    return {{"gpu_energy", "nvml"}};
  }
  [[nodiscard]] bool gpu() const override { return true; }
  [[nodiscard]] std::string name() const override { return "gpu_energy"; }

 private:
  std::unique_ptr<NvmlLibrary> nvml_;
  nvmlDevice_t dev_ = nullptr;
  std::string why_;
};

}  // namespace

std::unique_ptr<TelemetrySource> make_gpu_telemetry(const std::string& pci_bus_id,
                                                    double min_interval_s) {
  try {
    auto nvml = std::make_unique<NvmlLibrary>();
    nvmlDevice_t dev = nvml->by_bus_id(pci_bus_id);
    if (dev == nullptr) return nullptr;
    return std::make_unique<NvmlGpuTelemetry>(std::move(nvml), dev, pci_bus_id, min_interval_s);
  } catch (...) {
    return nullptr;
  }
}

std::unique_ptr<TelemetrySource> make_gpu_energy_telemetry(const std::string& pci_bus_id) {
  try {
    auto nvml = std::make_unique<NvmlLibrary>();
    nvmlDevice_t dev = nvml->by_bus_id(pci_bus_id);
    if (dev == nullptr) return nullptr;
    return std::make_unique<NvmlGpuEnergy>(std::move(nvml), dev);
  } catch (...) {
    return nullptr;
  }
}

std::unique_ptr<TelemetrySource> make_gpu_counter_telemetry(const std::string& pci_bus_id,
                                                            double min_interval_s) {
  try {
    auto nvml = std::make_unique<NvmlLibrary>();
    nvmlDevice_t dev = nvml->by_bus_id(pci_bus_id);
    if (dev == nullptr) return nullptr;
    return std::make_unique<NvmlGpuCounters>(std::move(nvml), dev, min_interval_s);
  } catch (...) {
    return nullptr;
  }
}

}  // namespace sb
