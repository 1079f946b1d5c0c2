#include "scalebench/system_info.hpp"

#include "scalebench/cpu_allowance.hpp"
#include "scalebench/philox_lanes.hpp"

#include <hwloc.h>
#include <mpi.h>
#include <omp.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <H5public.h>
#include <sleef.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <exception>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "scalebench/clock.hpp"
#include "scalebench/version.hpp"

extern "C" {
// OpenBLAS's own introspection and the CBLAS entry point (declared here to avoid depending on
// which cblas.h variant a distribution installs).
char* openblas_get_config(void);
void openblas_set_num_threads(int);
int openblas_get_num_threads(void);
void cblas_dgemm(int, int, int, int, int, int, double, const double*, int, const double*, int,
                 double, double*, int);
}

namespace sb {

std::string host_name() {
  std::array<char, 256> buf{};
  if (gethostname(buf.data(), buf.size() - 1) != 0) return "unknown";
  return buf.data();
}

namespace {

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__SANITIZE_ADDRESS__)
#define SB_PHILOX_CLONES \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define SB_PHILOX_CLONES
#endif

constexpr int kPhiloxLanes = 8;

/// Philox4x32-10 of `groups` groups of kPhiloxLanes consecutive counters from `first`, lane-
/// parallel so that it vectorises (vpmuludq) as a CPU generator of Philox data does; returns the
/// XOR of every word, so that nothing is stored.
SB_PHILOX_CLONES std::uint32_t philox_lanes_xor(std::uint64_t first, std::uint64_t groups) {
  std::uint32_t acc[kPhiloxLanes] = {};
  for (std::uint64_t g = 0; g < groups; ++g) {
    std::uint32_t c0[kPhiloxLanes], c1[kPhiloxLanes], c2[kPhiloxLanes], c3[kPhiloxLanes];
#pragma omp simd
    for (int l = 0; l < kPhiloxLanes; ++l) {
      const std::uint64_t r = first + g * kPhiloxLanes + static_cast<std::uint64_t>(l);
      c0[l] = static_cast<std::uint32_t>(r);
      c1[l] = static_cast<std::uint32_t>(r >> 32);
      c2[l] = 7u;
      c3[l] = 0u;
    }
    data::philox_rounds_lanes(c0, c1, c2, c3, 0x5eedu, 0u);
#pragma omp simd
    for (int l = 0; l < kPhiloxLanes; ++l) acc[l] ^= c0[l] ^ c1[l] ^ c2[l] ^ c3[l];
  }
  std::uint32_t x = 0;
  for (std::uint32_t a : acc) x ^= a;
  return x;
}

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto s = line.substr(colon + 1);
        s.erase(0, s.find_first_not_of(' '));
        return s;
      }
    }
  }
  return "unknown";
}

struct Topology {
  hwloc_topology_t t = nullptr;
  Topology() {
    if (hwloc_topology_init(&t) != 0 || hwloc_topology_load(t) != 0) t = nullptr;
  }
  ~Topology() {
    if (t != nullptr) hwloc_topology_destroy(t);
  }
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;
  [[nodiscard]] int count(hwloc_obj_type_t type) const {
    return t == nullptr ? 0 : std::max(0, hwloc_get_nbobjs_by_type(t, type));
  }
};

/// Size in bytes of one cache of `type` and the hardware threads sharing it (the first such
/// cache hwloc lists); {0, 0} when hwloc does not know it.
std::pair<std::uint64_t, int> cache_of(const Topology& topo, hwloc_obj_type_t type) {
  if (topo.t == nullptr) return {0, 0};
  const hwloc_obj_t o = hwloc_get_obj_by_type(topo.t, type, 0);
  if (o == nullptr || o->attr == nullptr) return {0, 0};
  const int sharing = o->cpuset != nullptr ? hwloc_bitmap_weight(o->cpuset) : 1;
  return {o->attr->cache.size, std::max(1, sharing)};
}

/// The CPU's maximum clock in MHz (cpufreq), else the current one /proc/cpuinfo shows; 0 when
/// neither is there (a VM without cpufreq on a non-x86 CPU).
double cpu_mhz() {
  std::ifstream f("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  double khz = 0;
  if (f >> khz && khz > 0) return khz / 1000.0;
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("cpu MHz", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    try {
      return std::stod(line.substr(colon + 1));
    } catch (const std::exception&) {
      return 0;
    }
  }
  return 0;
}

}  // namespace

int physical_cores() {
  return cpu_allowance().node_cores;
}

nlohmann::json describe_node() {
  // hwloc's discovery is the slow part (a large node, every worker at once): once per process,
  // one topology for every count.
  static const nlohmann::json node = [] {
    const Topology topo;
    // The node's cores, and those this process may use (cpu_allowance.hpp).
    const CpuAllowance& allowed = cpu_allowance();
    utsname u{};
    uname(&u);
    // The kernel's figure: hwloc's NUMA totals can miss memory that is not yet onlined.
    const std::uint64_t mem = static_cast<std::uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                              static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));
    nlohmann::json n{{"host", host_name()},
                     {"cpu_model", cpu_model()},
                     {"sockets", std::max(1, topo.count(HWLOC_OBJ_PACKAGE))},
                     {"cores", allowed.node_cores},
                     {"pus", allowed.node_cpus},
                     {"numa_domains", std::max(1, topo.count(HWLOC_OBJ_NUMANODE))},
                     {"memory_bytes", mem},
                     {"os", fmt::format("{} {}", u.sysname, u.release)},
                     {"arch", u.machine}};
    if (const double mhz = cpu_mhz(); mhz > 0) n["cpu_mhz"] = mhz;
    n["cores_usable"] = allowed.usable_cores;
    n["cpus_allowed"] = allowed.allowed_cpus;
    n["cpu_list"] = allowed.cpu_list;
    n["cpus_limited_by"] = allowed.limits.empty() ? "" : allowed.limits.front().source;
    std::string limits;
    for (const auto& l : allowed.limits)
      limits += fmt::format("{}{}: {} core{} ({})", limits.empty() ? "" : "; ", l.source, l.cores,
                            l.cores == 1 ? "" : "s", l.detail);
    n["cpu_limits"] = limits;
    // Flat fields, so /system/nodes stays one table (Google Benchmark's context reads them).
    const std::pair<const char*, hwloc_obj_type_t> caches[] = {{"l1d", HWLOC_OBJ_L1CACHE},
                                                               {"l1i", HWLOC_OBJ_L1ICACHE},
                                                               {"l2", HWLOC_OBJ_L2CACHE},
                                                               {"l3", HWLOC_OBJ_L3CACHE}};
    for (const auto& [name, type] : caches) {
      const auto [bytes, sharing] = cache_of(topo, type);
      if (bytes == 0) continue;
      n[fmt::format("{}_cache_bytes", name)] = bytes;
      n[fmt::format("{}_cache_sharing", name)] = sharing;
    }
    // The load when the node was first described: the run's start.
    std::ifstream load("/proc/loadavg");
    double l1 = 0, l5 = 0, l15 = 0;
    if (load >> l1 >> l5 >> l15) {
      n["load_avg_1m"] = l1;
      n["load_avg_5m"] = l5;
      n["load_avg_15m"] = l15;
    }
    return n;
  }();
  return node;
}

nlohmann::json library_versions() {
  std::array<char, MPI_MAX_LIBRARY_VERSION_STRING> mpi{};
  int len = 0;
  MPI_Get_library_version(mpi.data(), &len);
  std::string mpi_version(mpi.data(), static_cast<std::size_t>(std::max(0, len)));
  if (const auto nl = mpi_version.find_first_of(",\n"); nl != std::string::npos)
    mpi_version.resize(nl);
  int mpi_major = 0, mpi_minor = 0;
  MPI_Get_version(&mpi_major, &mpi_minor);
  unsigned h5maj = 0, h5min = 0, h5rel = 0;
  H5get_libversion(&h5maj, &h5min, &h5rel);
  const char* blas = openblas_get_config();
  return {{"mpi", mpi_version},
          {"mpi_standard", fmt::format("{}.{}", mpi_major, mpi_minor)},
          {"hdf5", fmt::format("{}.{}.{}", h5maj, h5min, h5rel)},
          {"blas", blas != nullptr ? std::string(blas) : "unknown"},
          {"hwloc", HWLOC_VERSION},
          {"sleef", fmt::format("{}.{}.{}", SLEEF_VERSION_MAJOR, SLEEF_VERSION_MINOR,
                                SLEEF_VERSION_PATCHLEVEL)},
          {"openmp", _OPENMP},
          {"compiler", fmt::format("{} {}",
#if defined(__clang__)
                                   "clang", __clang_version__
#else
                                   "gcc", __VERSION__
#endif
                                   )},
          {"scalebench", version()},
          {"git_sha", git_sha()}};
}

nlohmann::json measure_cpu_ceilings(int threads) {
  threads = std::max(1, threads);
  // STREAM triad over 3 x 8M doubles (192 MB: well past any last-level cache), best of 10.
  const std::size_t n = std::size_t{8} << 20;
  std::vector<double> a(n), b(n), c(n);
  double best_triad = 1e30;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = 0.0;
    b[i] = 1.0 + static_cast<double>(i % 7);
    c[i] = 2.0;
  }
  for (int rep = 0; rep < 10; ++rep) {
    const double t0 = now();
    const double s = 3.0;
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
    best_triad = std::min(best_triad, now() - t0);
  }
  // DGEMM 1024^3 through OpenBLAS with `threads` threads: one untimed call (thread start-up,
  // packing buffers), then best of 5.
  const int m = 1024;
  std::vector<double> x(static_cast<std::size_t>(m) * m, 1.0), y(x.size(), 0.5), z(x.size(), 0.0);
  const int saved = openblas_get_num_threads();
  openblas_set_num_threads(threads);
  double best_gemm = 1e30;
  for (int rep = 0; rep < 6; ++rep) {
    const double t0 = now();
    cblas_dgemm(101 /*row major*/, 111 /*no trans*/, 111, m, m, m, 1.0, x.data(), m, y.data(), m,
                0.0, z.data(), m);
    if (rep > 0) best_gemm = std::min(best_gemm, now() - t0);
  }
  openblas_set_num_threads(saved);
  // Philox4x32-10: 2^21 calls a thread in SIMD lanes, best of 5.
  const std::uint64_t groups = (std::uint64_t{1} << 21) / kPhiloxLanes;
  double best_philox = 1e30;
  std::uint32_t philox_sink = 0;
  for (int rep = 0; rep < 6; ++rep) {
    const double t0 = now();
#pragma omp parallel num_threads(threads) reduction(^ : philox_sink)
    philox_sink ^= philox_lanes_xor(
        static_cast<std::uint64_t>(omp_get_thread_num()) * groups * kPhiloxLanes, groups);
    if (rep > 0) best_philox = std::min(best_philox, now() - t0);
  }
  volatile double sink = a[n / 2] + z[0] + philox_sink;  // keep the kernels observable
  (void)sink;
  const double philox_calls = static_cast<double>(threads) * groups * kPhiloxLanes;
  const double triad_bytes = 3.0 * 8.0 * static_cast<double>(n);
  return nlohmann::json::array({{{"scope", "cpu"},
                                 {"kind", "stream_triad"},
                                 {"unit", "B/s"},
                                 {"value", triad_bytes / best_triad},
                                 {"threads", threads}},
                                {{"scope", "cpu"},
                                 {"kind", "dgemm"},
                                 {"unit", "flop/s"},
                                 {"value", 2.0 * m * static_cast<double>(m) * m / best_gemm},
                                 {"threads", threads}},
                                {{"scope", "cpu"},
                                 {"kind", "philox_simd"},
                                 {"unit", "calls/s"},
                                 {"value", philox_calls / best_philox},
                                 {"threads", threads}}});
}

}  // namespace sb
