// Other processes' share of this process's CPUs while it measured (others_cpu_share.hpp): the
// check that keeps a CPU ceiling taken beside other work out of the per-machine cache.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <thread>
#include <vector>

#include "others_cpu_share.hpp"
#include "scalebench/telemetry_source.hpp"

namespace {

/// `n` processes spinning until this object goes (or this process dies: they are told to
/// follow it).
class Spinners {
 public:
  explicit Spinners(int n) {
    for (int i = 0; i < n; ++i) {
      const pid_t p = fork();
      if (p == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        for (volatile unsigned long k = 0;; k = k + 1) {
        }
      }
      if (p > 0) pids_.push_back(p);
    }
  }
  ~Spinners() {
    for (const pid_t p : pids_) {
      kill(p, SIGKILL);
      waitpid(p, nullptr, 0);
    }
  }
  Spinners(const Spinners&) = delete;
  Spinners& operator=(const Spinners&) = delete;
  [[nodiscard]] int count() const { return static_cast<int>(pids_.size()); }

 private:
  std::vector<pid_t> pids_;
};

TEST(OthersCpuShare, ProcessesSpinningOnEveryCpuTakeMostOfIt) {
  const int cpus = sb::make_cpu_telemetry()->describe().value("cpus", 0);
  ASSERT_GT(cpus, 0) << "/proc/stat names this process's CPUs";
  double busy = 0;
  {
    const Spinners others(cpus);
    ASSERT_EQ(others.count(), cpus);
    // While this process sleeps, the others have every CPU.
    busy = sb::detail::others_cpu_share(
        [] { std::this_thread::sleep_for(std::chrono::milliseconds(400)); });
  }
  ASSERT_TRUE(std::isfinite(busy));
  EXPECT_GT(busy, 0.5) << "a CPU ceiling measured now is not kept (kBusyCeilingShare)";
  EXPECT_LE(busy, 1.0);
}

}  // namespace
