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

std::vector<LinkHealth> judge_links(const std::vector<LinkFigure>& links) {
  std::vector<LinkHealth> out(links.size());
  for (std::size_t i = 0; i < links.size(); ++i) {
    const LinkFigure& l = links[i];
    LinkHealth& h = out[i];
    std::vector<double> bw, lat;
    for (std::size_t j = 0; j < links.size(); ++j) {
      if (j == i || links[j].kind != l.kind || !(links[j].bandwidth > 0)) continue;
      bw.push_back(links[j].bandwidth);
      lat.push_back(links[j].latency_s);
    }
    const std::string kind(link_kind_name(l.kind));
    h.peers = static_cast<int>(bw.size());
    if (h.peers < kMinPeers) {
      h.reason = fmt::format("{}, {} {} peer{}: not judged", rate_text(l.bandwidth), h.peers, kind,
                             h.peers == 1 ? "" : "s");
      continue;
    }
    h.peer_bandwidth = median(bw);
    h.peer_latency_s = median(lat);
    if (l.bandwidth < kSlowBandwidthFraction * h.peer_bandwidth) {
      h.slow = true;
      h.reason = fmt::format("{}, median of its {} {} peers {}", rate_text(l.bandwidth), h.peers,
                             kind, rate_text(h.peer_bandwidth));
    } else if (l.latency_s > kSlowLatencyFactor * h.peer_latency_s &&
               l.latency_s > h.peer_latency_s + kLatencyMargin) {
      h.slow = true;
      h.reason = fmt::format("{:.1f} us latency, median of its {} {} peers {:.1f} us",
                             l.latency_s * 1e6, h.peers, kind, h.peer_latency_s * 1e6);
    } else {
      h.reason = fmt::format("{}, within its {} {} peers (median {})", rate_text(l.bandwidth),
                             h.peers, kind, rate_text(h.peer_bandwidth));
    }
  }
  return out;
}

std::vector<std::string> slow_link_notes(const std::vector<LinkFigure>& links) {
  std::vector<std::string> out;
  const std::vector<LinkHealth> health = judge_links(links);
  for (std::size_t i = 0; i < links.size(); ++i) {
    const LinkFigure& l = links[i];
    const LinkHealth& h = health[i];
    if (!h.slow) continue;
    const std::string kind(link_kind_name(l.kind));
    if (l.bandwidth < kSlowBandwidthFraction * h.peer_bandwidth) {
      out.push_back(fmt::format("slow link {} -> {} ({}): median of its {} {} peers {}", l.src,
                                l.dst, rate_text(l.bandwidth), h.peers, kind,
                                rate_text(h.peer_bandwidth)));
    } else {
      out.push_back(
          fmt::format("slow link {} -> {} ({:.1f} us latency): median of its {} {} peers "
                      "{:.1f} us",
                      l.src, l.dst, l.latency_s * 1e6, h.peers, kind, h.peer_latency_s * 1e6));
    }
  }
  return out;
}

}  // namespace sb::comms
