// Host pauses: threads that only read the clock, each on its own CPU, and note every gap of
// more than 200 us between two reads. With nothing else running a gap is time the CPU was taken
// from the thread without the kernel seeing it (a hypervisor pausing vCPUs, firmware). A pause
// seen by several threads at once (their gaps overlap) is the machine's, not one CPU's. This is
// what leaves a repeat host-stalled (runtime/src/host_stall.hpp; docs/performance.md,
// "Host stalls"): run it on an idle node to see whether the node pauses.
//
//   build-*/bench/bench_host_pauses --benchmark_min_time=5s
//
// Counters: pauses (per thread), paused_ms (per thread), longest_ms (the longest gap of any
// thread), shared (gaps that overlapped a gap of another thread). Threads beyond the node's
// CPUs share them and see each other's time slices: use --benchmark_filter=threads:2 there.
#include <benchmark/benchmark.h>
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <barrier>
#include <chrono>
#include <memory>
#include <mutex>
#include <vector>

namespace {

constexpr double kGapS = 200e-6;

double seconds_now() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

struct Gap {
  double begin, end;
};

/// The gaps of one run of the benchmark, per thread, and the barrier its threads meet at.
struct Shared {
  std::mutex m;
  std::vector<std::vector<Gap>> gaps;
  std::unique_ptr<std::barrier<>> done;
};
Shared shared;

/// Spreads the threads over the CPUs this process may use: thread i on the i-th of them, spaced.
void pin(int index, int threads) {
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return;
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &allowed)) cpus.push_back(c);
  if (cpus.empty()) return;
  const auto step = std::max<std::size_t>(1, cpus.size() / static_cast<std::size_t>(threads));
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpus[(static_cast<std::size_t>(index) * step) % cpus.size()], &one);
  (void)pthread_setaffinity_np(pthread_self(), sizeof one, &one);
}

void bm_host_pauses(benchmark::State& state) {
  const int n = state.threads();
  const int me = state.thread_index();
  if (me == 0) {
    shared.gaps.assign(static_cast<std::size_t>(n), {});
    shared.done = std::make_unique<std::barrier<>>(n);
  }
  pin(me, n);
  std::vector<Gap> gaps;
  double last = seconds_now();
  for (auto _ : state) {
    const double t = seconds_now();
    if (t - last > kGapS) gaps.push_back({last, t});
    last = t;
  }
  {
    std::lock_guard<std::mutex> lock(shared.m);
    shared.gaps[static_cast<std::size_t>(me)] = gaps;
  }
  shared.done->arrive_and_wait();
  double paused = 0, longest = 0;
  for (const Gap& g : gaps) paused += g.end - g.begin;
  for (const auto& mine : shared.gaps)
    for (const Gap& g : mine) longest = std::max(longest, g.end - g.begin);
  // Gaps of this thread that overlapped a gap of another.
  double overlapped = 0;
  for (const Gap& g : gaps) {
    bool with_other = false;
    for (int o = 0; o < n && !with_other; ++o) {
      if (o == me) continue;
      for (const Gap& h : shared.gaps[static_cast<std::size_t>(o)])
        if (h.begin < g.end && g.begin < h.end) with_other = true;
    }
    overlapped += with_other ? 1 : 0;
  }
  shared.done->arrive_and_wait();  // every thread has read the others' gaps
  using benchmark::Counter;
  state.counters["pauses"] = Counter(static_cast<double>(gaps.size()), Counter::kAvgThreads);
  state.counters["paused_ms"] = Counter(paused * 1e3, Counter::kAvgThreads);
  state.counters["longest_ms"] = Counter(longest * 1e3, Counter::kAvgThreads);
  state.counters["shared"] = Counter(overlapped, Counter::kDefaults);
}
BENCHMARK(bm_host_pauses)->Threads(2)->Threads(8)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
