// The workload registry: every workload compiled in, in suite order.
#include <string>

#include <fmt/format.h>

#include "scalebench/error.hpp"
#include "scalebench/workload.hpp"

#if SB_HAVE_WORKLOAD_SUBSET_MEAN
#include "subset_mean/subset_mean.hpp"
#endif
#if SB_HAVE_WORKLOAD_SVD
#include "svd/svd.hpp"
#endif
#if SB_HAVE_WORKLOAD_GROUPBY
#include "groupby/groupby.hpp"
#endif
#if SB_HAVE_WORKLOAD_COMMS
#include "comms/comms.hpp"
#endif

namespace sb {

const std::vector<Workload>& workloads() {
  static const std::vector<Workload> all = [] {
    std::vector<Workload> v;
#if SB_HAVE_WORKLOAD_SUBSET_MEAN
    v.push_back(subset_mean_workload());
#endif
#if SB_HAVE_WORKLOAD_SVD
    v.push_back(svd_workload());
#endif
#if SB_HAVE_WORKLOAD_GROUPBY
    v.push_back(groupby_workload());
#endif
#if SB_HAVE_WORKLOAD_COMMS
    v.push_back(comms_workload());
#endif
    return v;
  }();
  return all;
}

const Workload& find_workload(std::string_view name) {
  std::string known;
  for (const auto& w : workloads()) {
    if (w.name == name) return w;
    known += (known.empty() ? "" : ", ") + w.name;
  }
  throw UsageError(fmt::format("unknown workload '{}' (known: {})", name, known));
}

}  // namespace sb
