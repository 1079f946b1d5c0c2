#include "comms/link_health.hpp"

#include <cmath>

#include <fmt/format.h>

#include "scalebench/stats.hpp"

namespace sb::comms {

std::string rate_text(double v) {
  static const char* const prefixes[] = {"", "k", "M", "G", "T"};
  int p = 0;
  while (std::fabs(v) >= 1000.0 && p < 4) {
    v /= 1000.0;
    ++p;
  }
  const char* const digits = std::fabs(v) < 10    ? "{:.2f} {}B/s"
                             : std::fabs(v) < 100 ? "{:.1f} {}B/s"
                                                  : "{:.0f} {}B/s";
  return fmt::format(fmt::runtime(digits), v, prefixes[p]);
}

std::vector<std::string> slow_link_notes(const std::vector<LinkFigure>& links) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < links.size(); ++i) {
    const LinkFigure& l = links[i];
    std::vector<double> bw, lat;
    for (std::size_t j = 0; j < links.size(); ++j) {
      if (j == i || links[j].kind != l.kind || !(links[j].bandwidth > 0)) continue;
      bw.push_back(links[j].bandwidth);
      lat.push_back(links[j].latency_s);
    }
    if (static_cast<int>(bw.size()) < kMinPeers) continue;
    const std::string kind(link_kind_name(l.kind));
    const double med_bw = results::median(bw);
    const double med_lat = results::median(lat);
    if (l.bandwidth < kSlowBandwidthFraction * med_bw) {
      out.push_back(fmt::format("slow link {} -> {} ({}): median of its {} {} peers {}", l.src,
                                l.dst, rate_text(l.bandwidth), bw.size(), kind, rate_text(med_bw)));
    } else if (l.latency_s > kSlowLatencyFactor * med_lat &&
               l.latency_s > med_lat + kLatencyMargin) {
      out.push_back(
          fmt::format("slow link {} -> {} ({:.1f} us latency): median of its {} {} peers "
                      "{:.1f} us",
                      l.src, l.dst, l.latency_s * 1e6, lat.size(), kind, med_lat * 1e6));
    }
  }
  return out;
}

}  // namespace sb::comms
