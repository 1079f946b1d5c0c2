// The vector-throughput probe and its telemetry source (telemetry_source.hpp).
#include <memory>
#include <string>

#include "scalebench/clock.hpp"
#include "scalebench/telemetry_source.hpp"

namespace sb {
namespace {

/// Eight independent accumulators of four doubles: enough multiply-adds in flight to keep a
/// core's vector units busy (two FMA pipes of four cycles' latency), so the probe's time is
/// their throughput; eight fit the sixteen AVX registers with the two constants.
using Lanes = double __attribute__((vector_size(32)));
constexpr int kAccumulators = 8;
constexpr int kProbeSteps = 8192;  // 65536 multiply-adds of 4 lanes: about 9 us on an idle core

#if defined(__x86_64__) && defined(__GNUC__)
#define SB_AVX2_CLONE __attribute__((target_clones("arch=x86-64-v3", "default")))
#else
#define SB_AVX2_CLONE
#endif

/// Runs the fixed batch with AVX2 FMAs where the CPU has them, else SSE2 (one clone each,
/// picked when the program loads) and returns its seconds.
SB_AVX2_CLONE double probe_once() {
  Lanes acc[kAccumulators];
  for (int k = 0; k < kAccumulators; ++k)
    for (int l = 0; l < 4; ++l) acc[k][l] = 1.0 + 0.01 * k + 0.001 * l;
  const Lanes m = {0.9999999, 0.9999999, 0.9999999, 0.9999999};
  const Lanes b = {1e-7, 1e-7, 1e-7, 1e-7};
  const double t0 = now();
  asm volatile("" : "+m"(acc));  // the steps start after t0...
  // Strict floating point: the steps cannot be folded, and the sink below keeps them.
  for (int i = 0; i < kProbeSteps; ++i)
    for (int k = 0; k < kAccumulators; ++k) acc[k] = acc[k] * m + b;
  asm volatile("" : "+m"(acc));  // ...and end before the second reading
  const double took = now() - t0;
  Lanes sum = acc[0];
  for (int k = 1; k < kAccumulators; ++k) sum += acc[k];
  volatile double sink = sum[0] + sum[1] + sum[2] + sum[3];
  (void)sink;
  return took;
}

class VectorTelemetry final : public TelemetrySource {
 public:
  void read(TelemetrySample& s) noexcept override { s.vector_probe_s = vector_probe_s(); }
  [[nodiscard]] std::string name() const override { return "vector"; }
  [[nodiscard]] bool cpu_cases_only() const override { return true; }
};

}  // namespace

double vector_probe_s() noexcept {
  return probe_once();
}

std::unique_ptr<TelemetrySource> make_vector_telemetry() {
  return std::make_unique<VectorTelemetry>();
}

}  // namespace sb
