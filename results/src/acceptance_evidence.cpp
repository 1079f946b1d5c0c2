// Sharing and energy evidence of a device record (acceptance_evidence.hpp).
#include "acceptance_evidence.hpp"

#include <cmath>

#include <fmt/format.h>

namespace sb::results::detail {

Sharing sharing_of(const json& record) {
  Sharing s;
  const json& in = sub(record, "interference");
  s.sm_percent = num(in, "gpu_others_sm_pct");
  s.unavailable = str(in, "gpu_processes_unavailable");
  s.note = str(in, "gpu_processes_note");
  for (const auto& p : sub(in, "gpu_processes")) {
    std::string who = str(p, "name");
    if (who.empty()) who = "?";
    who += fmt::format(" (pid {}", static_cast<long long>(num(p, "pid", 0)));
    if (!str(p, "user").empty()) who += ", " + str(p, "user");
    if (const double m = num(p, "memory_bytes"); std::isfinite(m))
      who += fmt::format(", {:.1f} GiB", m / 1073741824.0);
    if (const double u = num(p, "sm_util_max"); std::isfinite(u))
      who += fmt::format(", up to {:.0f}% SM", u);
    who += ")";
    (num(p, "readings", 0) > 0 ? s.during : s.before_only).push_back(who);
  }
  return s;
}

std::string sharing_text(const Sharing& s) {
  auto list = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : ", ") + x;
    return out;
  };
  std::string out;
  if (!s.note.empty() && !s.during.empty()) {
    out = fmt::format("{} compute process(es) listed on it ({}): {}", s.during.size(),
                      list(s.during), s.note);
  } else if (!s.during.empty()) {
    out = "shared with " + list(s.during) + " while it ran";
    if (std::isfinite(s.sm_percent))
      out += fmt::format(", the other processes using {:.0f}% of its SMs", s.sm_percent);
  }
  if (!s.before_only.empty())
    out += (out.empty() ? "" : "; ") + list(s.before_only) + " on it as the case began";
  return out;
}

Energy energy_of(const json& record) {
  Energy e;
  const json& en = sub(record, "energy");
  if (!en.is_object()) return e;
  e.source = str(en, "source");
  e.available = en.value("available", false);
  e.why = str(en, "why");
  if (!e.available) return e;
  e.per_repeat_j = num(en, "joules_per_repeat");
  e.power_w = num(en, "power_w");
  const json& span = sub(en, "span");
  e.seconds = num(span, "seconds");
  e.comparable = std::isfinite(e.per_repeat_j) && e.per_repeat_j > 0 &&
                 e.seconds >= kEnergyMinSeconds && num(span, "updates", 0) >= kEnergyMinUpdates;
  return e;
}

std::string energy_text(const Energy& e) {
  if (!e.available || !std::isfinite(e.per_repeat_j)) return {};
  std::string out = e.per_repeat_j >= 100 ? fmt::format("{:.0f} J per repeat", e.per_repeat_j)
                                          : fmt::format("{:.3g} J per repeat", e.per_repeat_j);
  if (std::isfinite(e.power_w)) out += fmt::format(" at {:.0f} W", e.power_w);
  return out;
}

}  // namespace sb::results::detail
