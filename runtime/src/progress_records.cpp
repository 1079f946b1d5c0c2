// Where the job is, for the launcher (progress_records.hpp).
#include "progress_records.hpp"

namespace sb::detail {

nlohmann::json setup_record(const CaseSpec& spec, int k, int n) {
  return {{"type", "setup"},
          {"case", k},
          {"cases", n},
          {"id", spec.id},
          {"workload", spec.workload},
          {"path", std::string(to_string(spec.path))}};
}

nlohmann::json startup_wait_record(const std::vector<int>& missing, double elapsed_s) {
  return {{"type", "startup_wait"}, {"waiting", missing}, {"elapsed_s", elapsed_s}};
}

}  // namespace sb::detail
