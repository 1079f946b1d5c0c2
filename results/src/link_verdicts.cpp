#include "link_verdicts.hpp"

#include <cmath>
#include <limits>

#include "summary_util.hpp"

namespace sb::results::detail {

void add_link_verdicts(const nlohmann::json& cases, nlohmann::json& rows) {
  for (const auto& c : cases) {
    if (str(c, "status") != "ok") continue;
    const nlohmann::json& links = sub(sub(c, "metrics"), "links");
    if (!links.is_array()) continue;
    for (const auto& l : links) {
      if (!l.is_object() || !l.contains("slow")) continue;  // older reports: not judged
      const std::string link = str(l, "src_name") + " -> " + str(l, "dst_name");
      const double peer = num(l, "peer_bandwidth_gbps", 0.0);
      nlohmann::json row;
      row["host"] = str(l, "src_host");
      row["device"] = static_cast<std::int64_t>(num(l, "src_gpu", -1));
      row["case"] = str(c, "id");
      row["verdict"] = l.value("slow", false) ? "slow" : "ok";
      row["value"] = num(l, "bandwidth_gbps") * 1e9;
      row["expected"] = peer > 0 ? peer * 1e9 : kNaN;
      row["reason"] = link + ": " + str(l, "health");
      row["model"] = str(l, "kind");
      row["path"] = canonical_path(str(c, "path"));
      row["workload"] = str(c, "workload");
      row["record"] = case_label(c);
      row["peers"] = static_cast<std::int64_t>(num(l, "peers", 0));
      row["reference_s"] = kNaN;
      row["throttled_repeats"] = 0;
      row["link"] = link;
      row["unit"] = "B/s";
      rows.push_back(std::move(row));
    }
  }
}

}  // namespace sb::results::detail
