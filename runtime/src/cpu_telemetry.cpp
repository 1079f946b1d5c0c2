// The node's CPUs as a telemetry source (telemetry_source.hpp): /proc/stat for busy time,
// clock_gettime for this process's own CPU time, cpufreq (else /proc/cpuinfo) for the clock
// and the cgroup's cpu.stat for quota throttling. Files that are read at every sample stay
// open and are read again from offset 0 (one read syscall each, no open). The kernel threads'
// CPU time is read at a case's begin and end only (kernel_threads.hpp: a scan of /proc).
#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kernel_threads.hpp"
#include "scalebench/clock.hpp"
#include "scalebench/telemetry_source.hpp"

namespace sb {
namespace {

/// A file read again and again from its start (procfs, sysfs, cgroupfs).
class RereadFile {
 public:
  explicit RereadFile(const std::string& path) : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)) {}
  ~RereadFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  RereadFile(const RereadFile&) = delete;
  RereadFile& operator=(const RereadFile&) = delete;
  [[nodiscard]] bool ok() const { return fd_ >= 0; }
  /// The whole file, or empty on an error.
  const std::string& read() {
    text_.clear();
    if (fd_ < 0) return text_;
    if (buf_.empty()) buf_.resize(4096);
    std::size_t got = 0;
    // pread at offset 0 restarts a seq_file as lseek(0) + read does.
    while (true) {
      const ssize_t n = ::pread(fd_, buf_.data() + got, buf_.size() - got, static_cast<off_t>(got));
      if (n < 0) {
        if (errno == EINTR) continue;
        got = 0;
        break;
      }
      if (n == 0) break;
      got += static_cast<std::size_t>(n);
      if (got == buf_.size()) buf_.resize(buf_.size() * 2);
    }
    text_.assign(buf_.data(), got);
    return text_;
  }

 private:
  int fd_ = -1;
  std::vector<char> buf_;
  std::string text_;
};

std::vector<int> allowed_cpus() {
  std::vector<int> out;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) out.push_back(c);
  }
  if (out.empty()) {
    const long n = sysconf(_SC_NPROCESSORS_ONLN);
    for (int c = 0; c < std::max(1L, n); ++c) out.push_back(c);
  }
  return out;
}

/// The cpu.stat files that can throttle this process: its cgroup's and its ancestors' (a
/// parent's quota holds its children back), v1 (cpu controller) or v2.
std::vector<std::string> cgroup_cpu_stat_files() {
  std::vector<std::string> files;
  std::ifstream cg("/proc/self/cgroup");
  std::string line, v1_path, v2_path;
  bool have_v1 = false, have_v2 = false;
  while (std::getline(cg, line)) {
    const auto a = line.find(':');
    const auto b = a == std::string::npos ? a : line.find(':', a + 1);
    if (b == std::string::npos) continue;
    const std::string controllers = line.substr(a + 1, b - a - 1);
    const std::string path = line.substr(b + 1);
    if (controllers.empty()) {
      v2_path = path;
      have_v2 = true;
    }
    std::stringstream list(controllers);
    for (std::string c; std::getline(list, c, ',');)
      if (c == "cpu") {
        v1_path = path;
        have_v1 = true;
      }
  }
  // Mount points from /proc/self/mountinfo: field 5 is the mount point, field 4 the root of
  // the mount within its hierarchy; after " - " come the type and the super options.
  std::ifstream mi("/proc/self/mountinfo");
  std::string v1_mount, v1_root, v2_mount, v2_root;
  while (std::getline(mi, line)) {
    const auto dash = line.find(" - ");
    if (dash == std::string::npos) continue;
    std::stringstream pre(line.substr(0, dash)), post(line.substr(dash + 3));
    std::string id, parent, dev, root, mount, type, source, opts;
    pre >> id >> parent >> dev >> root >> mount;
    post >> type >> source >> opts;
    if (type == "cgroup2" && v2_mount.empty()) {
      v2_mount = mount;
      v2_root = root;
    } else if (type == "cgroup" && v1_mount.empty()) {
      std::stringstream o(opts);
      for (std::string w; std::getline(o, w, ',');)
        if (w == "cpu") {
          v1_mount = mount;
          v1_root = root;
        }
    }
  }
  auto chain = [&](const std::string& mount, const std::string& root, std::string path) {
    if (root != "/" && path.rfind(root, 0) == 0) path = path.substr(root.size());
    while (true) {
      files.push_back(mount + (path == "/" ? "" : path) + "/cpu.stat");
      if (path.empty() || path == "/") break;
      const auto slash = path.find_last_of('/');
      path = slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
    }
  };
  if (have_v1 && !v1_mount.empty()) {
    chain(v1_mount, v1_root, v1_path);
  } else if (have_v2 && !v2_mount.empty()) {
    chain(v2_mount, v2_root, v2_path);
  }
  return files;
}

/// The number after `key ` on its own line of `text`; -1 when absent.
double field_after(const std::string& text, const char* key) {
  const std::string k = std::string(key) + " ";
  std::size_t pos = 0;
  while ((pos = text.find(k, pos)) != std::string::npos) {
    if (pos == 0 || text[pos - 1] == '\n')
      return std::strtod(text.c_str() + pos + k.size(), nullptr);
    pos += k.size();
  }
  return -1;
}

class LinuxCpuTelemetry final : public TelemetrySource {
 public:
  LinuxCpuTelemetry() : cpus_(allowed_cpus()), stat_("/proc/stat"), tick_(sysconf(_SC_CLK_TCK)) {
    allowed_.insert(cpus_.begin(), cpus_.end());
    // Up to 8 CPUs spread over the allowed ones tell the clock: reading every core of a large
    // node at every sample would cost more than the rest of the sample.
    const std::size_t step = std::max<std::size_t>(1, cpus_.size() / 8);
    for (std::size_t i = 0; i < cpus_.size() && freq_.size() < 8; i += step) {
      auto f = std::make_unique<RereadFile>("/sys/devices/system/cpu/cpu" +
                                            std::to_string(cpus_[i]) + "/cpufreq/scaling_cur_freq");
      if (f->ok()) freq_.push_back(std::move(f));
      clock_cpus_.insert(cpus_[i]);
    }
    if (freq_.empty()) cpuinfo_ = std::make_unique<RereadFile>("/proc/cpuinfo");
    for (const auto& path : cgroup_cpu_stat_files()) {
      auto f = std::make_unique<RereadFile>(path);
      if (f->ok()) cgroup_.push_back(std::move(f));
    }
    if (tick_ <= 0) tick_ = 100;
  }

  void read(TelemetrySample& s) noexcept override {
    try {
      read_stat(s);
      timespec ts{};
      if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) == 0)
        s.own_cpu_s = static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
      read_clock(s);
      read_cgroup(s);
    } catch (...) {
      // a reading that failed stays NaN
    }
  }

  [[nodiscard]] nlohmann::json describe() const override {
    return {{"cpus", static_cast<int>(cpus_.size())}};
  }

  void begin_case(bool /*gpu_case*/) noexcept override {
    try {
      kernel_before_ = detail::read_kernel_threads(allowed_);
      kernel_t0_ = now();
    } catch (...) {
      kernel_t0_ = kNoReading;
    }
  }

  /// {"kernel_threads_cpu_s", "kernel_threads_wall_s"}: the CPU time the node's kernel threads
  /// used from the case's begin to now, and that time; null without a begin.
  [[nodiscard]] nlohmann::json case_summary() const override {
    if (!std::isfinite(kernel_t0_)) return nullptr;
    const double cpu =
        detail::kernel_threads_cpu_since(kernel_before_, detail::read_kernel_threads(allowed_));
    return {{"kernel_threads_cpu_s", cpu}, {"kernel_threads_wall_s", now() - kernel_t0_}};
  }

 private:
  void read_stat(TelemetrySample& s) {
    const std::string& text = stat_.read();
    double busy = 0, steal = 0, irq = 0;
    bool any = false;
    std::size_t pos = 0;
    while (pos < text.size()) {
      const std::size_t eol = std::min(text.find('\n', pos), text.size());
      if (text.compare(pos, 3, "cpu") == 0 && pos + 3 < eol && text[pos + 3] >= '0' &&
          text[pos + 3] <= '9') {
        char* p = nullptr;
        const long cpu = std::strtol(text.c_str() + pos + 3, &p, 10);
        if (allowed_.count(static_cast<int>(cpu)) != 0) {
          // user nice system idle iowait irq softirq steal (guest time is inside user)
          double f[8] = {0, 0, 0, 0, 0, 0, 0, 0};
          for (double& v : f) v = std::strtod(p, &p);
          busy += f[0] + f[1] + f[2] + f[5] + f[6] + f[7];
          steal += f[7];
          irq += f[5] + f[6];
          any = true;
        }
      }
      pos = eol + 1;
    }
    if (!any) return;
    s.node_busy_s = busy / static_cast<double>(tick_);
    s.steal_s = steal / static_cast<double>(tick_);
    s.node_irq_s = irq / static_cast<double>(tick_);
  }

  void read_clock(TelemetrySample& s) {
    std::vector<double> mhz;
    if (!freq_.empty()) {
      for (auto& f : freq_) {
        const std::string& t = f->read();
        if (!t.empty()) mhz.push_back(std::strtod(t.c_str(), nullptr) / 1000.0);  // kHz
      }
    } else if (cpuinfo_ && cpuinfo_->ok()) {
      // /proc/cpuinfo costs more (it describes every CPU): read at most every 0.5 s.
      const double t = now();
      if (t - cpuinfo_at_ >= 0.5) {
        cpuinfo_at_ = t;
        cpuinfo_mhz_ = parse_cpuinfo(cpuinfo_->read());
      }
      s.cpu_mhz = cpuinfo_mhz_;
      return;
    }
    if (mhz.empty()) return;
    std::nth_element(mhz.begin(), mhz.begin() + static_cast<long>(mhz.size() / 2), mhz.end());
    s.cpu_mhz = mhz[mhz.size() / 2];
  }

  /// Median "cpu MHz" of the CPUs chosen for the clock.
  double parse_cpuinfo(const std::string& text) const {
    std::vector<double> mhz;
    long cpu = -1;
    std::size_t pos = 0;
    while (pos < text.size()) {
      const std::size_t eol = std::min(text.find('\n', pos), text.size());
      if (text.compare(pos, 9, "processor") == 0) {
        const auto colon = text.find(':', pos);
        if (colon < eol) cpu = std::strtol(text.c_str() + colon + 1, nullptr, 10);
      } else if (text.compare(pos, 7, "cpu MHz") == 0) {
        const auto colon = text.find(':', pos);
        if (colon < eol && clock_cpus_.count(static_cast<int>(cpu)) != 0)
          mhz.push_back(std::strtod(text.c_str() + colon + 1, nullptr));
      }
      pos = eol + 1;
    }
    if (mhz.empty()) return kNoReading;
    std::nth_element(mhz.begin(), mhz.begin() + static_cast<long>(mhz.size() / 2), mhz.end());
    return mhz[mhz.size() / 2];
  }

  void read_cgroup(TelemetrySample& s) {
    double worst = -1;
    for (auto& f : cgroup_) {
      const std::string& t = f->read();
      double v = field_after(t, "throttled_time");  // v1: ns
      if (v >= 0) {
        v *= 1e-9;
      } else {
        v = field_after(t, "throttled_usec");  // v2: us
        if (v >= 0) v *= 1e-6;
      }
      worst = std::max(worst, v);
    }
    if (worst >= 0) s.cgroup_throttled_s = worst;
  }

  std::vector<int> cpus_;
  std::set<int> allowed_;
  std::set<int> clock_cpus_;
  RereadFile stat_;
  long tick_;
  std::vector<std::unique_ptr<RereadFile>> freq_;
  std::unique_ptr<RereadFile> cpuinfo_;
  double cpuinfo_at_ = -1e9;
  double cpuinfo_mhz_ = kNoReading;
  std::vector<std::unique_ptr<RereadFile>> cgroup_;
  detail::KernelThreadTimes kernel_before_;
  double kernel_t0_ = kNoReading;
};

}  // namespace

std::unique_ptr<TelemetrySource> make_cpu_telemetry() {
  return std::make_unique<LinuxCpuTelemetry>();
}

}  // namespace sb
