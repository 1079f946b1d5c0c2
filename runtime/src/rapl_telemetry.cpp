// The node's CPU package energy through RAPL's powercap files (telemetry_source.hpp,
// make_rapl_telemetry). Each package domain (`intel-rapl:N`, named `package-N`; AMD's Zen
// packages appear under the same driver) counts microjoules in `energy_uj` and wraps at
// `max_energy_range_uj`; its sub-domains (core, uncore, dram) are parts of it and left out.
// The files have been readable by root only since Linux 5.10 (the PLATYPUS fix): other users
// get "unavailable" with that reason.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "scalebench/telemetry_source.hpp"

namespace sb {
namespace {

namespace fs = std::filesystem;

/// A whole non-negative number from a sysfs file; false (errno kept) when unreadable.
bool read_counter(const std::string& path, std::uint64_t& out, int& err) {
  errno = 0;
  std::ifstream in(path);
  if (!in) {
    err = errno != 0 ? errno : EIO;
    return false;
  }
  unsigned long long v = 0;
  if (!(in >> v)) {
    err = EIO;
    return false;
  }
  out = v;
  return true;
}

class RaplTelemetry final : public TelemetrySource {
 public:
  explicit RaplTelemetry(const std::string& root) {
    std::error_code ec;
    std::vector<fs::path> dirs;
    for (const auto& e : fs::directory_iterator(root, ec)) {
      const std::string n = e.path().filename().string();
      // intel-rapl:0, intel-rapl:1: packages (and on some machines psys); intel-rapl:0:0 ... are
      // their parts.
      if (n.rfind("intel-rapl:", 0) != 0 || n.find(':', 11) != std::string::npos) continue;
      dirs.push_back(e.path());
    }
    std::sort(dirs.begin(), dirs.end());
    std::string unreadable;
    for (const auto& d : dirs) {
      std::string name;
      std::ifstream(d / "name") >> name;
      if (name.rfind("package", 0) != 0) continue;  // psys: the platform, not the CPUs
      Domain dom;
      dom.energy = (d / "energy_uj").string();
      int err = 0;
      if (!read_counter(dom.energy, dom.last, err)) {
        unreadable = fmt::format("{}: {}", dom.energy, std::strerror(err));
        if (err == EACCES || err == EPERM)
          unreadable += " (RAPL's energy counters are readable by root only since Linux 5.10)";
        continue;
      }
      std::uint64_t range = 0;
      if (read_counter((d / "max_energy_range_uj").string(), range, err) && range > 0)
        dom.range = range;
      names_ += (names_.empty() ? "" : ", ") + name;
      domains_.push_back(dom);
    }
    if (domains_.empty())
      why_ = !unreadable.empty() ? unreadable
                                 : fmt::format(
                                       "no RAPL package domain under {} (no intel_rapl driver: a "
                                       "virtual machine, or a CPU without RAPL)",
                                       root);
  }

  void read(TelemetrySample& s) noexcept override {
    if (domains_.empty()) return;
    for (auto& d : domains_) {
      std::uint64_t now = 0;
      int err = 0;
      if (!read_counter(d.energy, now, err)) return;  // leaves the reading out
      // A smaller value wrapped at the range (once: readings come more often than a wrap).
      const std::uint64_t step =
          now >= d.last ? now - d.last : (d.range > d.last ? d.range - d.last + now : now);
      d.total_uj += step;
      d.last = now;
    }
    double total = 0;
    for (const auto& d : domains_) total += static_cast<double>(d.total_uj);
    s.cpu_energy_j = total * 1e-6;
  }
  [[nodiscard]] nlohmann::json describe() const override {
    if (domains_.empty()) return {{"cpu_energy_unavailable", why_}};
    return {{"cpu_energy", "rapl: " + names_}};
  }
  [[nodiscard]] bool cpu_cases_only() const override { return true; }
  [[nodiscard]] std::string name() const override { return "cpu_energy"; }

 private:
  struct Domain {
    std::string energy;
    std::uint64_t last = 0;
    std::uint64_t range = 0;  ///< 0: unknown (no wrap correction)
    std::uint64_t total_uj = 0;
  };
  std::vector<Domain> domains_;
  std::string names_;
  std::string why_;
};

}  // namespace

std::unique_ptr<TelemetrySource> make_rapl_telemetry(const std::string& powercap_root) {
  return std::make_unique<RaplTelemetry>(powercap_root);
}

}  // namespace sb
