#include "comms/sweep.hpp"

#include <algorithm>

namespace sb::comms {

std::vector<SweepSize> sweep_sizes(const Config& cfg, int ranks) {
  const Collective& c = *cfg.collective;
  std::vector<SweepSize> out;
  for (const std::int64_t nominal : cfg.nominal_sizes()) {
    const Layout l = c.layout(nominal, ranks);
    if (l.count < 1) continue;
    if (!out.empty() && out.back().layout.bytes == l.bytes) continue;
    out.push_back({nominal, l});
  }
  return out;
}

BufferSizes buffer_sizes(const std::vector<SweepSize>& sizes) {
  BufferSizes b;
  for (const auto& s : sizes) {
    b.send = std::max(b.send, s.layout.send);
    b.recv = std::max(b.recv, s.layout.recv);
  }
  return b;
}

Bandwidth bandwidth(const Collective& c, const Layout& layout, double seconds, int ranks) {
  if (!(seconds > 0)) return {};
  const double algbw = static_cast<double>(layout.bytes) / seconds;
  return {algbw, algbw * c.bus_factor(ranks)};
}

}  // namespace sb::comms
