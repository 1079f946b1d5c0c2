#include "link_verdicts.hpp"

#include <cmath>
#include <limits>

#include "summary_util.hpp"

namespace sb::results::detail {

void add_link_verdicts(const nlohmann::json& cases, nlohmann::json& rows) {
  for (const auto& c : cases) {
    if (str(c, "status") != "ok") continue;
    const nlohmann::json& judged = sub(sub(c, "metrics"), "verdicts");
    if (!judged.is_array()) continue;
    for (const auto& v : judged) {
      if (!v.is_object() || !v.contains("subject")) continue;
      const std::string subject = str(v, "subject");
      nlohmann::json row;
      row["host"] = str(v, "host");
      row["device"] = static_cast<std::int64_t>(num(v, "device", -1));
      row["case"] = str(c, "id");
      row["verdict"] = str(v, "verdict", "ok");
      row["value"] = num(v, "value");
      row["expected"] = num(v, "expected");
      row["reason"] = subject + ": " + str(v, "reason");
      row["model"] = str(v, "kind");
      row["path"] = canonical_path(str(c, "path"));
      row["workload"] = str(c, "workload");
      row["record"] = case_label(c);
      row["peers"] = static_cast<std::int64_t>(num(v, "peers", 0));
      row["reference_s"] = kNaN;
      row["throttled_repeats"] = 0;
      row["link"] = subject;
      row["unit"] = str(v, "unit");
      rows.push_back(std::move(row));
    }
  }
}

}  // namespace sb::results::detail
