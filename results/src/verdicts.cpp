// Verdicts of node acceptance (verdicts.hpp).
#include "scalebench/verdicts.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include <fmt/format.h>

#include "acceptance_evidence.hpp"
#include "format_util.hpp"
#include "health_verdicts.hpp"
#include "host_link_verdicts.hpp"
#include "link_verdicts.hpp"
#include "scalebench/interference.hpp"
#include "scalebench/repeat_telemetry.hpp"
#include "scalebench/stats.hpp"
#include "summary_util.hpp"

namespace sb::results {
namespace {

using json = nlohmann::json;
using detail::kNaN;
using detail::num;
using detail::str;
using detail::sub;

constexpr std::uint64_t kApplicationsClocks = 0x2;
constexpr std::uint64_t kPowerCap = 0x4;
constexpr std::uint64_t kThermalOrHardware = 0x8 | 0x20 | 0x40 | 0x80;
constexpr double kCgroupShare = 0.02;  ///< throttled by its CPU quota 2% of the time or more
constexpr double kBusyNode = 0.25;     ///< others took a quarter of the node's CPUs or more

bool device_record(const json& c) {
  const std::string path = detail::canonical_path(str(c, "path"));
  // A node a workload cannot run on (comms on a node of one worker) is not judged.
  if (c.value("not_applicable", false)) return false;
  if (path == "each-gpu" || path == "each-node") return c.contains("device_id");
  return path == "single-gpu" && str(c, "status") != "skipped";
}

std::string planned_id(const json& c) {
  const std::string p = str(c, "planned_id");
  return p.empty() ? detail::case_label(c) : p;
}

double value_of(const json& c) {
  const double m = num(sub(c, "metrics"), "median_s");
  return std::isfinite(m) ? m : median(detail::phase_times(c, "total"));
}

int gpu_of(const json& c) {
  const std::string path = detail::canonical_path(str(c, "path"));
  if (path == "each-node") return -1;
  return static_cast<int>(num(c, "gpu", path == "single-gpu" ? 0.0 : -1.0));
}

std::string host_of(const json& c) {
  const std::string h = str(c, "host");
  if (!h.empty()) return h;
  const json& hosts = sub(c, "hosts");
  return hosts.is_array() && !hosts.empty() && hosts[0].is_string() ? hosts[0].get<std::string>()
                                                                    : std::string("?");
}

std::string device_label(const std::string& host, int gpu) {
  return gpu >= 0 ? fmt::format("GPU {} on {}", gpu, host) : fmt::format("node {}", host);
}

/// What the record's telemetry says about why it may be slow.
struct Evidence {
  int throttled_repeats = 0;
  int repeats = 0;
  std::uint64_t reasons = 0;
  int power_cap_repeats = 0;
  double sm_mhz = kNaN, app_mhz = kNaN;
  double cgroup_share = kNaN;
  double other_cpu = kNaN;
  double cpu_mhz = kNaN;
  double vector_probe_s = kNaN;        ///< this node's vector probe (CPU cases)
  double peers_vector_probe_s = kNaN;  ///< the median of its peers' (judge_devices fills it in)
  double ecc_uncorrected = 0, xid = 0, last_xid = kNaN;
  double nvlink_errors = 0;  ///< NVLink CRC, replay and recovery errors while it ran
  [[nodiscard]] bool thermal_or_hardware() const { return (reasons & kThermalOrHardware) != 0; }
  [[nodiscard]] bool throttling() const {
    return throttled_repeats > 0 || thermal_or_hardware() || cgroup_share >= kCgroupShare;
  }
};

Evidence evidence_of(const json& c) {
  Evidence e;
  double timed = 0;
  for (const auto& r : sub(c, "repeats")) {
    ++e.repeats;
    timed += std::isfinite(num(r, "total")) ? num(r, "total") : 0.0;
    const auto it = r.find("throttled");
    if (it != r.end() && it->is_boolean() && it->get<bool>()) ++e.throttled_repeats;
  }
  std::vector<double> sm, app;
  std::map<int, std::uint64_t> by_repeat;
  for (const auto& row : sub(sub(c, "telemetry"), "repeats")) {
    const double reasons = num(row, "gpu_clock_event_reasons");
    if (std::isfinite(reasons))
      by_repeat[static_cast<int>(num(row, "repeat", 0))] |= static_cast<std::uint64_t>(reasons);
    if (std::isfinite(num(row, "gpu_sm_mhz_median"))) sm.push_back(num(row, "gpu_sm_mhz_median"));
    if (std::isfinite(num(row, "gpu_app_sm_mhz"))) app.push_back(num(row, "gpu_app_sm_mhz"));
    if (num(row, "gpu_ecc_uncorrected") > 0) e.ecc_uncorrected += num(row, "gpu_ecc_uncorrected");
    if (num(row, "gpu_xid") > 0) e.xid += num(row, "gpu_xid");
    if (std::isfinite(num(row, "gpu_last_xid"))) e.last_xid = num(row, "gpu_last_xid");
    if (num(row, "gpu_nvlink_errors") > 0) e.nvlink_errors += num(row, "gpu_nvlink_errors");
  }
  for (const auto& [r, bits] : by_repeat) {
    e.reasons |= bits;
    e.power_cap_repeats += (bits & kPowerCap) != 0;
  }
  e.sm_mhz = median(sm);
  e.app_mhz = median(app);
  const json& in = sub(c, "interference");
  const double thr = num(in, "cgroup_throttled_s");
  if (std::isfinite(thr) && timed > 0) e.cgroup_share = std::clamp(thr / timed, 0.0, 1.0);
  e.other_cpu = num(in, "other_cpu_fraction");
  const json& mhz = sub(in, "cpu_mhz");
  e.cpu_mhz = mhz.is_number() ? mhz.get<double>() : num(mhz, "median");
  e.vector_probe_s = num(in, "vector_probe_s");
  return e;
}

/// "14%", or "120x" from ten times on.
std::string percent_slower(double value, double expected) {
  const double ratio = value / expected;
  return ratio >= 10 ? fmt::format("{:.3g}x", ratio)
                     : fmt::format("{:.0f}%", 100.0 * (ratio - 1.0));
}

/// "SM clock 1410 MHz of 1980, power cap active in 5 of 5 repeats, ..." ("" when nothing).
std::string evidence_text(const Evidence& e, bool slow) {
  std::vector<std::string> parts;
  if (std::isfinite(e.sm_mhz) && std::isfinite(e.app_mhz) && (slow || e.throttling()))
    parts.push_back(fmt::format("SM clock {:.0f} MHz of {:.0f}", e.sm_mhz, e.app_mhz));
  if ((e.reasons & kApplicationsClocks) != 0 && std::isfinite(e.sm_mhz) &&
      std::isfinite(e.app_mhz) && e.sm_mhz < kThrottledClockShare * e.app_mhz)
    parts.emplace_back(
        "clocks held by the applications-clocks setting or locked clocks (nvidia-smi -q -d "
        "CLOCK)");
  if (e.power_cap_repeats > 0)
    parts.push_back(
        fmt::format("power cap active in {} of {} repeats", e.power_cap_repeats, e.repeats));
  if (const std::string other = throttle_reason_names(e.reasons & kThermalOrHardware);
      !other.empty())
    parts.push_back(other + " active");
  if (e.throttled_repeats > 0)
    parts.push_back(fmt::format("{} of {} repeats throttled", e.throttled_repeats, e.repeats));
  if (e.cgroup_share >= kCgroupShare)
    parts.push_back(fmt::format("the cgroup's CPU quota held it back {:.0f}% of the time",
                                100.0 * e.cgroup_share));
  if (slow && e.other_cpu >= kBusyNode)
    parts.push_back(
        fmt::format("other processes used {:.0f}% of the node's CPUs", 100.0 * e.other_cpu));
  if (slow && e.vector_probe_s > 0 && e.peers_vector_probe_s > 0 &&
      e.vector_probe_s >= (1.0 + kSlowVectorProbe) * e.peers_vector_probe_s)
    parts.push_back(fmt::format(
        "its vector units ran {} slower than its peers' (the vector probe, {:.1f} us against "
        "{:.1f} us)",
        percent_slower(e.vector_probe_s, e.peers_vector_probe_s), 1e6 * e.vector_probe_s,
        1e6 * e.peers_vector_probe_s));
  if (e.xid > 0)
    parts.push_back(fmt::format(
        "{:.0f} XID error(s){}", e.xid,
        std::isfinite(e.last_xid) ? fmt::format(" (last XID {:.0f})", e.last_xid) : std::string()));
  if (e.ecc_uncorrected > 0)
    parts.push_back(fmt::format("{:.0f} uncorrected ECC error(s)", e.ecc_uncorrected));
  if (e.nvlink_errors > 0)
    parts.push_back(fmt::format("{:.0f} NVLink error(s) (CRC, replay, recovery) while it ran",
                                e.nvlink_errors));
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

/// The peers' verdict on `value`: {slow, text}; text empty when there is no peer.
struct Comparison {
  bool slow = false;
  double expected = kNaN;
  std::string text;
};

Comparison against_peers(double value, std::vector<double> peers) {
  Comparison out;
  std::erase_if(peers, [](double x) { return !std::isfinite(x) || x <= 0; });
  if (peers.empty() || !std::isfinite(value)) return out;
  const std::size_t n_peers = peers.size();
  std::string of =
      fmt::format("the median of its {} peer{}", peers.size(), peers.size() == 1 ? "" : "s");
  // Three devices: the middle one, so that one slow device does not pull its peers' figure up.
  if (peers.size() == 2) {
    peers.push_back(value);
    of = "the median of the 3 devices of its model";
  }
  const double med = median(peers);
  double threshold = kSmallFleetThreshold;
  if (n_peers >= kRobustPeers) {
    std::vector<double> dev;
    for (double x : peers) dev.push_back(std::abs(x - med));
    const double sigma = 1.4826 * median(dev);
    threshold = std::max(kRobustZ * sigma / med, kRelativeFloor);
  }
  out.expected = med;
  out.slow = value > med * (1.0 + threshold);
  out.text = out.slow ? fmt::format("{} slower than {} ({} against {})", percent_slower(value, med),
                                    of, detail::human_seconds(value), detail::human_seconds(med))
                      : fmt::format("within {:.0f}% of {} ({})", 100.0 * threshold, of,
                                    detail::human_seconds(med));
  return out;
}

Comparison against_reference(double value, const Reference* ref) {
  Comparison out;
  if (ref == nullptr || !std::isfinite(value)) return out;
  out.expected = ref->median_s;
  out.slow = value > ref->median_s * (1.0 + ref->tolerance);
  const std::string what = fmt::format(
      "the reference {} ({}, {}{}; tolerance {:.0f}%)", detail::human_seconds(ref->median_s),
      ref->model, ref->file, ref->source.empty() ? "" : ": " + ref->source, 100.0 * ref->tolerance);
  out.text = out.slow ? fmt::format("{} slower than {}", percent_slower(value, ref->median_s), what)
                      : "within " + what;
  return out;
}

/// A peer's energy per repeat, or -1 where it cannot be compared: it shared its device, or ran
/// too briefly to resolve it.
double peer_energy_of(const json& c) {
  const detail::Energy e = detail::energy_of(c);
  return e.comparable && !detail::sharing_of(c).present() ? e.per_repeat_j : -1.0;
}

}  // namespace

nlohmann::json judge_devices(const nlohmann::json& model, const ReferenceSet& references) {
  json rows = json::array();
  const json& cases = sub(model, "cases");
  if (!cases.is_array()) return rows;
  // Peers: ok records of the same case on devices of the same model. Their vector probes and
  // energies are read once here: a merged fleet has thousands of peers per case.
  struct Peer {
    std::size_t index;
    double value, probe;
    double energy;  ///< joules per repeat; -1: not comparable (energy is compared between
                    ///< devices that ran alone and long enough to resolve it)
  };
  std::map<std::string, std::vector<Peer>> groups;
  auto group_key = [](const json& c) {
    return str(c, "workload") + '\n' + detail::canonical_path(str(c, "path")) + '\n' +
           detail::params_text(sub(c, "params")) + '\n' + str(c, "device_model");
  };
  for (std::size_t i = 0; i < cases.size(); ++i)
    if (device_record(cases[i]) && str(cases[i], "status") == "ok")
      groups[group_key(cases[i])].push_back({i, value_of(cases[i]),
                                             num(sub(cases[i], "interference"), "vector_probe_s"),
                                             peer_energy_of(cases[i])});

  for (std::size_t i = 0; i < cases.size(); ++i) {
    const json& c = cases[i];
    if (!device_record(c)) continue;
    const std::string host = host_of(c);
    const int gpu = gpu_of(c);
    const std::string who = device_label(host, gpu);
    const std::string status = str(c, "status");
    const double value = value_of(c);
    Evidence ev = evidence_of(c);
    const detail::Sharing sharing = detail::sharing_of(c);
    const detail::Energy energy = detail::energy_of(c);
    std::vector<double> peers, peer_probes, peer_energy;
    const auto& group = groups[group_key(c)];
    peers.reserve(group.size());
    for (const Peer& p : group) {
      if (p.index == i) continue;
      peers.push_back(p.value);
      if (p.probe > 0) peer_probes.push_back(p.probe);
      if (p.energy >= 0) peer_energy.push_back(p.energy);
    }
    if (!peer_probes.empty()) ev.peers_vector_probe_s = median(peer_probes);
    const Reference* ref = find_reference(references, str(c, "device_model"), str(c, "workload"),
                                          str(c, "path"), detail::params_text(sub(c, "params")));
    const Comparison p = status == "ok" ? against_peers(value, peers) : Comparison{};
    const Comparison r = status == "ok" ? against_reference(value, ref) : Comparison{};
    const bool slow = p.slow || r.slow;
    // Energy against the peers' for the same work (two peers: the middle of the three).
    std::string energy_cmp;
    bool inefficient = false;
    if (status == "ok" && energy.comparable && !peer_energy.empty() && !sharing.present()) {
      if (peer_energy.size() == 2) peer_energy.push_back(energy.per_repeat_j);
      const double med = median(peer_energy);
      if (energy.per_repeat_j > (1.0 + detail::kEnergyExcess) * med) {
        inefficient = true;
        energy_cmp = fmt::format(
            "needs {:.0f}% more energy than its peers for the same work ({} against {:.3g} J per "
            "repeat)",
            100.0 * (energy.per_repeat_j / med - 1.0), detail::energy_text(energy), med);
      }
    }
    std::string verdict = "ok";
    std::string reason;
    if (status != "ok") {
      verdict = "failed";
      const std::string msg = str(c, "message");
      reason = status + (msg.empty() ? "" : ": " + msg);
    } else {
      std::string cmp;
      for (const auto* x : {&p, &r})
        if (!x->text.empty()) cmp += (cmp.empty() ? "" : "; ") + x->text;
      const bool compared = !cmp.empty();
      reason = compared ? cmp : "no peer of this model and no reference: not judged";
      // The cause first: errors, then another process on the GPU (whose work also explains a
      // power cap), then the device's own throttling; throttle reasons count as the cause only
      // when nothing else shared the device.
      if (ev.xid > 0 || ev.ecc_uncorrected > 0) {
        verdict = "failed";
      } else if (ev.nvlink_errors > 0) {
        verdict = "unhealthy";
      } else if (sharing.busy(slow)) {
        verdict = "busy";
      } else if ((slow && ev.throttling()) || ev.thermal_or_hardware()) {
        verdict = "throttled";
      } else if (slow) {
        verdict = "slow";
      } else if (inefficient) {
        verdict = "inefficient";
      } else if (!compared) {
        verdict = "not judged";
      }
    }
    if (const std::string shared = detail::sharing_text(sharing); !shared.empty())
      reason += "; " + shared;
    if (const std::string why = evidence_text(ev, slow); !why.empty()) reason += "; " + why;
    if (!energy_cmp.empty()) {
      reason += "; " + energy_cmp;
    } else if (const std::string e = detail::energy_text(energy); !e.empty()) {
      reason += "; " + e;
    }
    json row;
    row["host"] = host;
    row["device"] = gpu;
    row["case"] = planned_id(c);
    row["verdict"] = verdict;
    row["value"] = value;
    // The figure that found it slow (the peers first), else the peers', else the reference's.
    row["expected"] = p.slow || (!r.slow && std::isfinite(p.expected)) ? p.expected : r.expected;
    row["reason"] = who + ": " + reason;
    row["model"] = str(c, "device_model");
    row["path"] = detail::canonical_path(str(c, "path"));
    row["workload"] = str(c, "workload");
    row["record"] = detail::case_label(c);
    row["peers"] = static_cast<std::int64_t>(peers.size());
    row["reference_s"] = ref != nullptr ? ref->median_s : kNaN;
    row["throttled_repeats"] = ev.throttled_repeats;
    row["link"] = "";
    row["unit"] = "s";
    rows.push_back(std::move(row));
  }
  detail::add_host_link_verdicts(model, references, rows);
  detail::add_health_verdicts(model, rows);
  detail::add_link_verdicts(cases, rows);
  return rows;
}

bool is_link_verdict(const nlohmann::json& v) {
  return !str(v, "link").empty();
}

std::string verdict_value_text(const nlohmann::json& v, const char* key) {
  const std::string unit = str(v, "unit", "s");
  if (unit == "B/s") return detail::human_rate(num(v, key), "B/s");
  if (unit == "s") return detail::human_seconds(num(v, key));
  const double x = num(v, key);
  return std::isfinite(x) ? fmt::format("{:g} {}", x, unit) : std::string("-");
}

std::string verdict_device_text(const nlohmann::json& v) {
  const auto dev = static_cast<long long>(num(v, "device", -1));
  if (is_link_verdict(v)) return "link " + str(v, "link");
  return dev >= 0 ? fmt::format("GPU {}", dev) : std::string("node");
}

nlohmann::json verdicts_of(const nlohmann::json& model) {
  const auto it = model.find("verdicts");
  if (it != model.end() && it->is_array()) return *it;
  return judge_devices(model, ReferenceSet{});
}

bool verdict_not_ok(const std::string& verdict) {
  return verdict != "ok" && verdict != kNotJudged;
}

std::size_t count_not_ok(const nlohmann::json& verdicts) {
  std::size_t n = 0;
  for (const auto& v : verdicts) n += verdict_not_ok(str(v, "verdict"));
  return n;
}

std::vector<std::pair<std::string, long long>> unjudged_devices(const nlohmann::json& verdicts) {
  // Per device: whether it has a row of a workload's case, and whether one of them judged it.
  std::map<std::pair<std::string, long long>, bool> judged;
  for (const auto& v : verdicts) {
    const std::string w = str(v, "workload");
    if (is_link_verdict(v) || w == "health" || w == "link") continue;
    auto& j = judged[{str(v, "host"), static_cast<long long>(num(v, "device", -1))}];
    j = j || str(v, "verdict") != kNotJudged;
  }
  std::vector<std::pair<std::string, long long>> out;
  for (const auto& [dev, j] : judged)
    if (!j) out.push_back(dev);
  return out;
}

std::string format_verdicts_text(const nlohmann::json& verdicts) {
  if (!verdicts.is_array() || verdicts.empty()) return {};
  std::set<std::pair<std::string, long long>> devices;
  std::set<std::string> cases;
  std::size_t links = 0;
  for (const auto& v : verdicts) {
    if (is_link_verdict(v)) {
      ++links;
    } else {
      devices.emplace(str(v, "host"), static_cast<long long>(num(v, "device", -1)));
    }
    const std::string w = str(v, "workload");
    if (w != "health" && w != "link") cases.insert(str(v, "case"));
  }
  const std::size_t bad = count_not_ok(verdicts);
  const auto unjudged = unjudged_devices(verdicts);
  const std::string with_links =
      links == 0 ? std::string() : fmt::format(", {} link{}", links, links == 1 ? "" : "s");
  // Not judged: one line per device that nothing judged, so that a pass never hides them.
  std::string not_judged;
  for (const auto& [host, dev] : unjudged) {
    std::string case_list;
    for (const auto& v : verdicts)
      if (str(v, "host") == host && static_cast<long long>(num(v, "device", -1)) == dev &&
          str(v, "verdict") == kNotJudged && str(v, "workload") != "health" &&
          str(v, "workload") != "link")
        case_list += (case_list.empty() ? "" : ", ") + str(v, "case");
    not_judged += fmt::format(
        "{:<9} {}  {}\n          no peer of its model and no reference: add a reference file "
        "(docs/acceptance.md, \"Reference files\") or run beside its peers\n",
        kNotJudged, device_label(host, static_cast<int>(dev)), case_list);
  }
  const std::string unjudged_tally =
      unjudged.empty() ? std::string() : fmt::format(", {} not judged", unjudged.size());
  if (bad == 0 && unjudged.empty())
    return fmt::format("verdicts: all {} device{}{} ok ({} case{})\n", devices.size(),
                       devices.size() == 1 ? "" : "s", with_links, cases.size(),
                       cases.size() == 1 ? "" : "s");
  if (bad == 0)
    return fmt::format("verdicts: {} of {} device{}{} ok{} ({} case{})\n",
                       devices.size() - unjudged.size(), devices.size(),
                       devices.size() == 1 ? "" : "s", with_links, unjudged_tally, cases.size(),
                       cases.size() == 1 ? "" : "s") +
           not_judged;
  std::set<std::pair<std::string, long long>> bad_devices;
  std::size_t bad_links = 0;
  std::string out;
  for (const auto& v : verdicts) {
    if (!verdict_not_ok(str(v, "verdict"))) continue;
    if (is_link_verdict(v)) {
      ++bad_links;
    } else {
      bad_devices.emplace(str(v, "host"), static_cast<long long>(num(v, "device", -1)));
    }
    const double expected = num(v, "expected");
    const std::string who =
        is_link_verdict(v) ? fmt::format("link {} on {}", str(v, "link"), str(v, "host"))
                           : device_label(str(v, "host"), static_cast<int>(num(v, "device", -1)));
    const bool has_value = std::isfinite(num(v, "value")) && str(v, "unit") != "findings";
    std::string figure;
    if (has_value) {
      figure = "  " + verdict_value_text(v, "value");
      if (std::isfinite(expected))
        figure += fmt::format(" (expected {})", verdict_value_text(v, "expected"));
    }
    out += fmt::format("{:<9} {}  {}{}\n          {}\n", str(v, "verdict"), who, str(v, "case"),
                       figure, str(v, "reason"));
  }
  const std::string link_tally =
      links == 0 ? std::string()
                 : fmt::format(", {} of {} link{}", bad_links, links, links == 1 ? "" : "s");
  return fmt::format("verdicts: {} of {} device{}{} not ok{} ({} of {} verdicts)\n",
                     bad_devices.size(), devices.size(), devices.size() == 1 ? "" : "s", link_tally,
                     unjudged_tally, bad, verdicts.size()) +
         out + not_judged;
}

}  // namespace sb::results
