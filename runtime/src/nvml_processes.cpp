// The compute processes on a GPU through NVML (nvml_processes.hpp), and the telemetry source
// that gathers them over each case (telemetry_source.hpp, make_gpu_process_telemetry).
#include "nvml_processes.hpp"

#include <pwd.h>
#include <sys/types.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include <fmt/format.h>

#include "process_environment.hpp"
#include "scalebench/ab_protocol.hpp"
#include "scalebench/telemetry_source.hpp"

namespace sb::detail {
namespace {

constexpr unsigned long long kNotAvailable = ~0ULL;  // NVML_VALUE_NOT_AVAILABLE
constexpr unsigned long long kUtilWindowUs = 1'500'000;

std::string read_small_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::string s(4096, '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  s.resize(static_cast<std::size_t>(in.gcount()));
  return s;
}

/// Name, owner and command line from /proc (this pid namespace's), else NVML's name; whether it
/// carries the A/B run's mark (`ab_mark`, empty: not an A/B run).
void name_process(const NvmlLibrary& nvml, GpuProcess& p, const std::string& ab_mark) {
  if (!ab_mark.empty()) p.other_side = started_with(p.pid, ab::kRunVariable, ab_mark);
  const std::string dir = "/proc/" + std::to_string(p.pid);
  std::string comm = read_small_file(dir + "/comm");
  while (!comm.empty() && (comm.back() == '\n' || comm.back() == '\0')) comm.pop_back();
  p.name = comm;
  std::string cmd = read_small_file(dir + "/cmdline");
  std::replace(cmd.begin(), cmd.end(), '\0', ' ');
  while (!cmd.empty() && cmd.back() == ' ') cmd.pop_back();
  if (cmd.size() > 160) cmd = cmd.substr(0, 157) + "...";
  p.command = cmd;
  std::istringstream status(read_small_file(dir + "/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Uid:", 0) != 0) continue;
    std::istringstream fields(line.substr(4));
    unsigned long uid = 0;
    if (!(fields >> uid)) break;
    std::array<char, 1024> buf{};
    passwd pw{};
    passwd* found = nullptr;
    p.user = getpwuid_r(static_cast<uid_t>(uid), &pw, buf.data(), buf.size(), &found) == 0 &&
                     found != nullptr
                 ? std::string(found->pw_name)
                 : std::to_string(uid);
    break;
  }
  if (p.name.empty() && nvml.process_name != nullptr) {
    std::array<char, 256> buf{};
    if (nvml.process_name(p.pid, buf.data(), buf.size()) == kNvmlSuccess) {
      std::string full(buf.data(), strnlen(buf.data(), buf.size()));
      const auto slash = full.rfind('/');
      p.name = slash == std::string::npos ? full : full.substr(slash + 1);
      if (p.command.empty()) p.command = full;
    }
  }
}

/// The compute (and MPS client) processes; false with `why` when NVML cannot list them.
bool list_processes(const NvmlLibrary& nvml, nvmlDevice_t d, std::vector<GpuProcess>& out,
                    std::string& why) {
  auto take = [&](auto fn, auto sample, bool& ok) {
    using Info = decltype(sample);
    std::vector<Info> buf(16);
    for (int attempt = 0; attempt < 4; ++attempt) {
      unsigned n = static_cast<unsigned>(buf.size());
      const nvmlReturn_t r = fn(d, &n, buf.data());
      if (r == kNvmlInsufficientSize) {
        buf.resize(std::max<std::size_t>(n + 8, buf.size() * 2));
        continue;
      }
      if (r != kNvmlSuccess) {
        if (why.empty()) why = nvml.why(r);
        return;
      }
      ok = true;
      for (unsigned i = 0; i < n && i < buf.size(); ++i) {
        if (std::any_of(out.begin(), out.end(),
                        [&](const GpuProcess& p) { return p.pid == buf[i].pid; }))
          continue;
        GpuProcess p;
        p.pid = buf[i].pid;
        if (buf[i].used_gpu_memory != kNotAvailable)
          p.memory_bytes = static_cast<double>(buf[i].used_gpu_memory);
        out.push_back(std::move(p));
      }
      return;
    }
    if (why.empty()) why = "NVML: the process list kept growing";
  };
  bool ok = false;
  if (nvml.compute_processes != nullptr) {
    take(nvml.compute_processes, NvmlProcessInfo{}, ok);
  } else if (nvml.compute_processes_v1 != nullptr) {
    take(nvml.compute_processes_v1, NvmlProcessInfoV1{}, ok);
  } else {
    why = "NVML has no nvmlDeviceGetComputeRunningProcesses";
  }
  if (ok && nvml.mps_processes != nullptr) {
    bool mps = false;
    std::string ignored;
    std::swap(ignored, why);
    take(nvml.mps_processes, NvmlProcessInfo{}, mps);  // refused without MPS: nothing to add
    std::swap(ignored, why);
  }
  return ok;
}

/// Each pid's latest SM utilization sample of the last kUtilWindowUs of samples.
bool process_utilization(const NvmlLibrary& nvml, nvmlDevice_t d, unsigned long long& newest_us,
                         std::map<unsigned, double>& sm) {
  if (nvml.process_utilization == nullptr) return false;
  const unsigned long long since = newest_us > kUtilWindowUs ? newest_us - kUtilWindowUs : 0;
  std::vector<NvmlProcessUtilizationSample> buf(32);
  for (int attempt = 0; attempt < 4; ++attempt) {
    unsigned n = static_cast<unsigned>(buf.size());
    const nvmlReturn_t r = nvml.process_utilization(d, buf.data(), &n, since);
    if (r == kNvmlNotFound) return true;  // no process used the SMs in the window
    if (r == kNvmlInsufficientSize) {
      buf.resize(std::max<std::size_t>(n + 8, buf.size() * 2));
      continue;
    }
    if (r != kNvmlSuccess) return false;
    unsigned long long newest = 0;
    for (unsigned i = 0; i < n && i < buf.size(); ++i) newest = std::max(newest, buf[i].timestamp);
    std::map<unsigned, unsigned long long> at;
    for (unsigned i = 0; i < n && i < buf.size(); ++i) {
      const auto& s = buf[i];
      if (s.timestamp + kUtilWindowUs < newest) continue;
      if (at.count(s.pid) != 0 && at[s.pid] >= s.timestamp) continue;
      at[s.pid] = s.timestamp;
      sm[s.pid] = std::min(100u, s.sm_util);
    }
    newest_us = std::max(newest_us, newest);
    return true;
  }
  return false;
}

}  // namespace

ProcessSnapshot read_process_snapshot(const NvmlLibrary& nvml, nvmlDevice_t d,
                                      unsigned long long& newest_us,
                                      const std::string& ab_mark) noexcept {
  ProcessSnapshot s;
  try {
    if (!nvml.initialized || d == nullptr) {
      s.why = "NVML is not loaded";
      return s;
    }
    s.listed = list_processes(nvml, d, s.processes, s.why);
    std::map<unsigned, double> sm;
    s.sampled = process_utilization(nvml, d, newest_us, sm);
    for (auto& p : s.processes) {
      if (const auto it = sm.find(p.pid); it != sm.end()) p.sm_util = it->second;
      name_process(nvml, p, ab_mark);
    }
    NvmlUtilization u{};
    if (nvml.utilization != nullptr && nvml.utilization(d, &u) == kNvmlSuccess)
      s.device_util = std::min(100u, u.gpu);
  } catch (...) {
    s.listed = false;
    s.why = "out of memory while reading the process list";
  }
  return s;
}

std::string describe_process(const GpuProcess& p) {
  std::string out = (p.name.empty() ? std::string("?") : p.name) + " (pid " + std::to_string(p.pid);
  if (!p.user.empty()) out += ", " + p.user;
  if (std::isfinite(p.memory_bytes))
    out += fmt::format(", {:.1f} GiB", p.memory_bytes / 1073741824.0);
  if (std::isfinite(p.sm_util)) out += fmt::format(", {:.0f}% SM", p.sm_util);
  return out + ")";
}

namespace {

/// The GPU's other compute processes over each case: one reading before it (CASE_BEGIN), then
/// readings during its timed repeats at most every `min_interval_s`.
class NvmlGpuProcesses final : public TelemetrySource {
 public:
  NvmlGpuProcesses(std::unique_ptr<NvmlLibrary> nvml, nvmlDevice_t dev, std::set<unsigned> own,
                   double min_interval_s, std::string ab_mark)
      : nvml_(std::move(nvml)),
        dev_(dev),
        census_(std::move(own)),
        min_interval_s_(min_interval_s),
        ab_mark_(std::move(ab_mark)) {}

  void read(TelemetrySample& s) noexcept override {
    const ProcessSnapshot snap = read_process_snapshot(*nvml_, dev_, newest_us_, ab_mark_);
    try {
      const OthersReading r = census_.add(snap, false);
      s.gpu_others = r.count;
      s.gpu_others_sm_pct = r.sm_util;
    } catch (...) {
    }
    s.gpu_util_pct = snap.device_util;
  }
  void begin_case(bool gpu) noexcept override {
    gpu_case_ = gpu;
    census_.reset();
    if (!gpu) return;
    const ProcessSnapshot snap = read_process_snapshot(*nvml_, dev_, newest_us_, ab_mark_);
    try {
      (void)census_.add(snap, true);
    } catch (...) {
    }
  }
  [[nodiscard]] nlohmann::json case_summary() const override {
    return gpu_case_ ? census_.summary() : nlohmann::json(nullptr);
  }
  [[nodiscard]] bool gpu() const override { return true; }
  [[nodiscard]] std::string name() const override { return "gpu_processes"; }
  [[nodiscard]] double min_interval_s() const override { return min_interval_s_; }

 private:
  std::unique_ptr<NvmlLibrary> nvml_;
  nvmlDevice_t dev_ = nullptr;
  ProcessCensus census_;
  double min_interval_s_ = 0;
  std::string ab_mark_;
  unsigned long long newest_us_ = 0;
  bool gpu_case_ = false;
};

}  // namespace
}  // namespace sb::detail

namespace sb {

std::unique_ptr<TelemetrySource> make_gpu_process_telemetry(const std::string& pci_bus_id,
                                                            const std::vector<unsigned>& own_pids,
                                                            double min_interval_s,
                                                            const std::string& ab_mark) {
  try {
    auto nvml = std::make_unique<detail::NvmlLibrary>();
    detail::nvmlDevice_t dev = nvml->by_bus_id(pci_bus_id);
    if (dev == nullptr) return nullptr;
    return std::make_unique<detail::NvmlGpuProcesses>(
        std::move(nvml), dev, std::set<unsigned>(own_pids.begin(), own_pids.end()), min_interval_s,
        ab_mark);
  } catch (...) {
    return nullptr;
  }
}

}  // namespace sb
