// A GPU's health fields through NVML (nvml_health.hpp).
#include "nvml_health.hpp"

#include <array>
#include <cstring>
#include <fstream>

namespace sb::detail {
namespace {

std::string cstr(const char* buf, std::size_t cap) {
  return {buf, strnlen(buf, cap)};
}

/// `fn` of one unsigned value into `out`, else NVML's reason.
template <class Fn>
void unsigned_of(const NvmlLibrary& nvml, Fn fn, nvmlDevice_t d, Reading<unsigned>& out,
                 const char* missing) {
  if (fn == nullptr) {
    out.fail(missing);
    return;
  }
  unsigned v = 0;
  const nvmlReturn_t r = fn(d, &v);
  if (r == kNvmlSuccess) {
    out.set(v);
  } else {
    out.fail(nvml.why(r));
  }
}

/// An application clock: nvmlDeviceGetClock (target or default), else the older calls.
void app_clock(const NvmlLibrary& nvml, nvmlDevice_t d, unsigned type, bool default_clock,
               Reading<unsigned>& out) {
  unsigned mhz = 0;
  nvmlReturn_t r = kNvmlNotSupported;
  if (nvml.clock_by_id != nullptr) {
    r = nvml.clock_by_id(d, type, default_clock ? kClockIdAppDefault : kClockIdAppTarget, &mhz);
    if (r == kNvmlSuccess && mhz > 0) {
      out.set(mhz);
      return;
    }
  }
  auto* older = default_clock ? nvml.default_app_clock : nvml.app_clock;
  if (older != nullptr) {
    r = older(d, type, &mhz);
    if (r == kNvmlSuccess && mhz > 0) {
      out.set(mhz);
      return;
    }
  }
  out.fail(nvml.clock_by_id == nullptr && older == nullptr ? "NVML has no application clocks"
                                                           : nvml.why(r));
}

/// The GPU's NUMA node from sysfs (NVML gives it on few platforms).
bool numa_from_sysfs(const std::string& bus, int& node) {
  // NVML's bus ids have an 8-digit domain ("00000000:19:00.0"), sysfs a 4-digit one.
  std::string id = bus;
  const auto colon = id.find(':');
  if (colon == 8) id = id.substr(4);
  std::ifstream in("/sys/bus/pci/devices/" + id + "/numa_node");
  return static_cast<bool>(in >> node);
}

double field_number(const NvmlFieldValue& f) {
  switch (f.value_type) {
    case kValueDouble:
      return f.value.d;
    case kValueUnsignedInt:
      return f.value.ui;
    case kValueUnsignedLong:
      return static_cast<double>(f.value.ul);
    case kValueUnsignedLongLong:
      return static_cast<double>(f.value.ull);
    case kValueSignedLongLong:
      return static_cast<double>(f.value.sll);
    case kValueSignedInt:
      return f.value.si;
    case kValueUnsignedShort:
      return f.value.us;
    default:
      return 0;
  }
}

}  // namespace

std::optional<NvlinkErrors> read_nvlink_errors(const NvmlLibrary& nvml, nvmlDevice_t d,
                                               const std::vector<unsigned>& links,
                                               std::string& why) noexcept {
  if (links.empty()) {
    why = "no NVLink up";
    return std::nullopt;
  }
  NvlinkErrors e;
  bool any = false;
  nvmlReturn_t last = kNvmlNotSupported;
  for (const unsigned link : links) {
    // Field values first: one call per link, and the only counters NVLink5 keeps.
    if (nvml.field_values != nullptr) {
      std::array<NvmlFieldValue, 6> f{};
      const unsigned ids[6] = {kFieldNvlinkCrcFlitTotal,   kFieldNvlinkCrcDataTotal,
                               kFieldNvlinkReplayTotal,    kFieldNvlinkRecoveryTotal,
                               kFieldNvlinkRecoveryEvents, kFieldNvlinkEffectiveErrors};
      for (std::size_t i = 0; i < f.size(); ++i) {
        f[i].field_id = ids[i];
        f[i].scope_id = link;
      }
      last = nvml.field_values(d, static_cast<int>(f.size()), f.data());
      if (last == kNvmlSuccess) {
        bool older = false;
        for (std::size_t i = 0; i < 4; ++i) {
          if (f[i].nvml_return != kNvmlSuccess) continue;
          older = true;
          const double v = field_number(f[i]);
          (i < 2 ? e.crc : i == 2 ? e.replay : e.recovery) += v;
        }
        if (!older) {  // NVLink5
          if (f[5].nvml_return == kNvmlSuccess) {
            e.crc += field_number(f[5]);
            older = true;
          }
          if (f[4].nvml_return == kNvmlSuccess) {
            e.recovery += field_number(f[4]);
            older = true;
          }
        } else {
          last = f[0].nvml_return;
        }
        if (older) {
          any = true;
          continue;
        }
      }
    }
    if (nvml.nvlink_error_counter == nullptr) continue;
    bool got = false;
    for (const int counter :
         {kNvlinkErrorCrcFlit, kNvlinkErrorCrcData, kNvlinkErrorReplay, kNvlinkErrorRecovery}) {
      unsigned long long v = 0;
      last = nvml.nvlink_error_counter(d, link, counter, &v);
      if (last != kNvmlSuccess) continue;
      got = true;
      const auto x = static_cast<double>(v);
      (counter == kNvlinkErrorReplay     ? e.replay
       : counter == kNvlinkErrorRecovery ? e.recovery
                                         : e.crc) += x;
    }
    any = any || got;
  }
  if (!any) {
    why = nvml.why(last);
    return std::nullopt;
  }
  return e;
}

void read_pcie_link(const NvmlLibrary& nvml, nvmlDevice_t d, bool under_load,
                    GpuHealthRaw& h) noexcept {
  unsigned_of(nvml, nvml.pcie_gen, d, h.pcie_gen, "NVML has no PCIe link generation");
  unsigned_of(nvml, nvml.pcie_width, d, h.pcie_width, "NVML has no PCIe link width");
  h.pcie_under_load = under_load && h.pcie_gen.value.has_value();
}

GpuHealthRaw read_gpu_health(const NvmlLibrary& nvml, nvmlDevice_t d) noexcept {
  GpuHealthRaw h;
  try {
    if (!nvml.initialized || d == nullptr) return h;
    unsigned_of(nvml, nvml.pcie_gen_max, d, h.pcie_gen_max, "NVML has no PCIe maximum");
    unsigned_of(nvml, nvml.pcie_gen_gpu_max, d, h.pcie_gen_gpu_max, "NVML has no PCIe maximum");
    unsigned_of(nvml, nvml.pcie_width_max, d, h.pcie_width_max, "NVML has no PCIe maximum");
    if (nvml.remapped_rows != nullptr) {
      unsigned corr = 0, unc = 0, pending = 0, failed = 0;
      const nvmlReturn_t r = nvml.remapped_rows(d, &corr, &unc, &pending, &failed);
      if (r == kNvmlSuccess) {
        h.remapped_correctable.set(corr);
        h.remapped_uncorrectable.set(unc);
        h.remap_pending.set(pending != 0);
        h.remap_failed.set(failed != 0);
      } else {
        for (auto* f : {&h.remap_pending, &h.remap_failed}) f->fail(nvml.why(r));
        h.remapped_correctable.fail(nvml.why(r));
        h.remapped_uncorrectable.fail(nvml.why(r));
      }
    } else {
      h.remap_pending.fail("NVML has no row remapping (a driver older than Ampere's)");
      h.remap_failed.fail(h.remap_pending.why);
      h.remapped_correctable.fail(h.remap_pending.why);
    }
    std::vector<unsigned> up;
    if (nvml.nvlink_state != nullptr) {
      nvmlReturn_t last = kNvmlNotSupported;
      for (unsigned link = 0; link < kNvlinkMaxLinks; ++link) {
        int state = 0;
        last = nvml.nvlink_state(d, link, &state);
        if (last != kNvmlSuccess) continue;
        h.nvlinks.emplace_back(link, state == 1);
        if (state == 1) up.push_back(link);
      }
      if (h.nvlinks.empty()) h.nvlink_why = nvml.why(last);
    } else {
      h.nvlink_why = "NVML has no NVLink state";
    }
    std::string why;
    if (auto e = read_nvlink_errors(nvml, d, up, why)) {
      h.nvlink_errors.set(*e);
    } else {
      h.nvlink_errors.fail(h.nvlinks.empty() ? h.nvlink_why : why);
    }
    int v = 0, pending = 0;
    if (nvml.persistence_mode != nullptr) {
      const nvmlReturn_t r = nvml.persistence_mode(d, &v);
      if (r == kNvmlSuccess) {
        h.persistence.set(v != 0);
      } else {
        h.persistence.fail(nvml.why(r));
      }
    } else {
      h.persistence.fail("NVML has no persistence mode");
    }
    if (nvml.compute_mode != nullptr) {
      const nvmlReturn_t r = nvml.compute_mode(d, &v);
      if (r == kNvmlSuccess) {
        h.compute_mode.set(v);
      } else {
        h.compute_mode.fail(nvml.why(r));
      }
    } else {
      h.compute_mode.fail("NVML has no compute mode");
    }
    if (nvml.ecc_mode != nullptr) {
      const nvmlReturn_t r = nvml.ecc_mode(d, &v, &pending);
      if (r == kNvmlSuccess) {
        h.ecc_current.set(v != 0);
        h.ecc_pending.set(pending != 0);
      } else {
        h.ecc_current.fail(nvml.why(r));
      }
    } else {
      h.ecc_current.fail("NVML has no ECC mode");
    }
    app_clock(nvml, d, kClockSm, false, h.app_sm_mhz);
    app_clock(nvml, d, kClockSm, true, h.app_sm_default_mhz);
    app_clock(nvml, d, kClockMem, false, h.app_mem_mhz);
    app_clock(nvml, d, kClockMem, true, h.app_mem_default_mhz);
    unsigned mw = 0;
    if (nvml.power_limit != nullptr) {
      const nvmlReturn_t r = nvml.power_limit(d, &mw);
      if (r == kNvmlSuccess) {
        h.power_limit_w.set(mw / 1000.0);
      } else {
        h.power_limit_w.fail(nvml.why(r));
      }
    } else {
      h.power_limit_w.fail("NVML has no power limit");
    }
    if (nvml.default_power_limit != nullptr) {
      const nvmlReturn_t r = nvml.default_power_limit(d, &mw);
      if (r == kNvmlSuccess) {
        h.power_default_w.set(mw / 1000.0);
      } else {
        h.power_default_w.fail(nvml.why(r));
      }
    } else {
      h.power_default_w.fail("NVML has no default power limit");
    }
    if (nvml.validate_inforom != nullptr) {
      const nvmlReturn_t r = nvml.validate_inforom(d);
      if (r == kNvmlSuccess) {
        h.inforom_valid.set(true);
      } else if (r == kNvmlCorruptedInforom) {
        h.inforom_valid.set(false);
      } else {
        h.inforom_valid.fail(nvml.why(r));
      }
    } else {
      h.inforom_valid.fail("NVML has no InfoROM check");
    }
    std::array<char, kDriverSize> drv{};
    if (nvml.driver_version != nullptr) {
      const nvmlReturn_t r = nvml.driver_version(drv.data(), drv.size());
      if (r == kNvmlSuccess) {
        h.driver.set(cstr(drv.data(), drv.size()));
      } else {
        h.driver.fail(nvml.why(r));
      }
    } else {
      h.driver.fail("NVML has no driver version");
    }
    std::array<char, kVbiosSize> vb{};
    if (nvml.vbios_version != nullptr) {
      const nvmlReturn_t r = nvml.vbios_version(d, vb.data(), vb.size());
      if (r == kNvmlSuccess) {
        h.vbios.set(cstr(vb.data(), vb.size()));
      } else {
        h.vbios.fail(nvml.why(r));
      }
    } else {
      h.vbios.fail("NVML has no VBIOS version");
    }
    unsigned node = 0;
    int sys_node = -1;
    nvmlReturn_t r = kNvmlNotSupported;
    if (nvml.numa_node != nullptr && (r = nvml.numa_node(d, &node)) == kNvmlSuccess) {
      h.numa_node.set(static_cast<int>(node));
    } else if (numa_from_sysfs(nvml.bus_id(d), sys_node)) {
      h.numa_node.set(sys_node);
    } else {
      h.numa_node.fail(nvml.numa_node == nullptr ? std::string("no NUMA node in NVML or sysfs")
                                                 : nvml.why(r) + ", and none in sysfs");
    }
  } catch (...) {
    // A field not reached keeps "not read".
  }
  return h;
}

}  // namespace sb::detail
