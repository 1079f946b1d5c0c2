// The verdict table's host-link rows (host_link_verdicts.hpp).
#include "host_link_verdicts.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "format_util.hpp"
#include "scalebench/stats.hpp"
#include "summary_util.hpp"

namespace sb::results::detail {
namespace {

std::string rate(double v) {
  return human_rate(v, "B/s");
}

/// "48% below" / "3.1x below".
std::string below(double value, double expected) {
  const double ratio = expected / value;
  return ratio >= 10 ? fmt::format("{:.3g}x below", ratio)
                     : fmt::format("{:.0f}% below", 100.0 * (1.0 - value / expected));
}

}  // namespace

double pcie_lane_bytes_per_s(int generation) {
  switch (generation) {
    case 1:
      return 0.25e9;  // 2.5 GT/s, 8b/10b
    case 2:
      return 0.5e9;  // 5 GT/s, 8b/10b
    case 3:
      return 0.985e9;  // 8 GT/s, 128b/130b
    case 4:
      return 1.969e9;
    case 5:
      return 3.938e9;
    case 6:
      return 7.563e9;  // 64 GT/s, PAM4 with FLIT
    default:
      return 0;
  }
}

void add_host_link_verdicts(const json& model, const ReferenceSet& references, json& rows) {
  const json& links = sub(sub(model, "system"), "host_links");
  if (!links.is_array()) return;
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<const json*, double>>> peers;
  for (const auto& l : links) {
    const double bw = num(l, "bytes_per_s");
    if (bw > 0) peers[{str(l, "model"), str(l, "direction")}].emplace_back(&l, bw);
  }
  for (const auto& l : links) {
    const std::string host = str(l, "host"), direction = str(l, "direction");
    const int gpu = static_cast<int>(num(l, "node_gpu", -1));
    const std::string who = fmt::format("GPU {} on {}", gpu, host);
    const double value = num(l, "bytes_per_s");
    std::vector<std::string> cmp, why;
    bool slow = false, judged = false;
    double expected = kNaN;
    std::size_t n_peers = 0;
    if (value > 0) {
      // Peers: the same model's GPUs, this direction.
      std::vector<double> others;
      for (const auto& [p, bw] : peers[{str(l, "model"), direction}])
        if (p != &l) others.push_back(bw);
      n_peers = others.size();
      if (!others.empty()) {
        std::string of = fmt::format("the median of its {} peer{}", others.size(),
                                     others.size() == 1 ? "" : "s");
        double threshold = kLinkSmallFleet;
        // Two peers: the middle of the three, so that one bad link does not pull the figure.
        if (others.size() == 2) of = "the median of the 3 GPUs of its model";
        const double med = others.size() == 2
                               ? median(std::vector<double>{others[0], others[1], value})
                               : median(others);
        if (n_peers >= 3) {
          std::vector<double> dev;
          for (double x : others) dev.push_back(std::abs(x - med));
          threshold = std::max(3.5 * 1.4826 * median(dev) / med, kLinkFloor);
        }
        judged = true;
        expected = med;
        if (value < med * (1.0 - threshold)) {
          slow = true;
          cmp.push_back(
              fmt::format("{} {} ({} against {})", below(value, med), of, rate(value), rate(med)));
        } else {
          cmp.push_back(fmt::format("within {:.0f}% of {} ({})", 100.0 * threshold, of, rate(med)));
        }
      }
      if (const Reference* ref =
              find_reference(references, str(l, "model"), "link", direction, "")) {
        judged = true;
        if (!std::isfinite(expected)) expected = ref->bytes_per_s;
        const std::string what = fmt::format(
            "the reference {} ({}, {}{}; tolerance {:.0f}%)", rate(ref->bytes_per_s), ref->model,
            ref->file, ref->source.empty() ? "" : ": " + ref->source, 100.0 * ref->tolerance);
        if (value < ref->bytes_per_s * (1.0 - ref->tolerance)) {
          slow = true;
          expected = ref->bytes_per_s;
          cmp.push_back(below(value, ref->bytes_per_s) + " " + what);
        } else {
          cmp.push_back("within " + what);
        }
      }
      // The link's own nominal rate at the most its GPU and slot allow.
      const double gen_max = num(l, "pcie_generation_max"), width_max = num(l, "pcie_width_max");
      const double nominal = std::isfinite(gen_max) && width_max > 0
                                 ? pcie_lane_bytes_per_s(static_cast<int>(gen_max)) * width_max
                                 : 0.0;
      if (nominal > 0) {
        judged = true;
        if (!std::isfinite(expected)) expected = kLinkNominalShare * nominal;
        if (value < kLinkNominalShare * nominal) {
          slow = true;
          cmp.push_back(fmt::format("{:.0f}% of PCIe Gen{:.0f} x{:.0f}'s nominal {}",
                                    100.0 * value / nominal, gen_max, width_max, rate(nominal)));
        }
      }
      const double gen = num(l, "pcie_generation"), width = num(l, "pcie_width");
      if (std::isfinite(gen) && std::isfinite(width) &&
          ((std::isfinite(gen_max) && gen < gen_max) || (width_max > 0 && width < width_max)))
        why.push_back(fmt::format("PCIe Gen{:.0f} x{:.0f} during the copies, of Gen{:.0f} x{:.0f}",
                                  gen, width, gen_max, width_max));
      const double gpu_node = num(l, "gpu_numa_node"), host_node = num(l, "host_numa_node");
      if (std::isfinite(gpu_node) && gpu_node >= 0 && std::isfinite(host_node) &&
          gpu_node != host_node)
        why.push_back(fmt::format("its host buffer on NUMA node {:.0f}, the GPU on node {:.0f}",
                                  host_node, gpu_node));
    }
    const bool shared = num(l, "others", 0) > 0;
    if (shared && !str(l, "other_processes").empty())
      why.push_back("shared with " + str(l, "other_processes") + " during the copies");
    std::string verdict = slow ? (shared ? "busy" : "slow") : judged ? "ok" : "not judged";
    std::string reason;
    if (!(value > 0)) {
      reason = "not measured" + (str(l, "error").empty() ? std::string() : ": " + str(l, "error"));
    } else if (!judged) {
      reason = "no peer of this model, no reference and no PCIe maximum: not judged";
    }
    for (const auto& c : cmp) reason += (reason.empty() ? "" : "; ") + c;
    for (const auto& w : why) reason += (reason.empty() ? "" : "; ") + w;
    json row;
    row["host"] = host;
    row["device"] = gpu;
    row["case"] = "link/" + direction;
    row["verdict"] = verdict;
    row["value"] = value > 0 ? value : kNaN;
    row["expected"] = expected;
    row["reason"] = who + " " + direction + ": " + reason;
    row["model"] = str(l, "model");
    row["path"] = "each-gpu";
    row["workload"] = "link";
    row["record"] = "";
    row["peers"] = static_cast<std::int64_t>(n_peers);
    row["reference_s"] = kNaN;
    row["throttled_repeats"] = 0;
    row["link"] = "";
    row["unit"] = "B/s";
    rows.push_back(std::move(row));
  }
}

}  // namespace sb::results::detail
