// The exporters of every workload compiled in (input_export.hpp).
#include "input_export.hpp"

#include <fmt/format.h>

#include "scalebench/error.hpp"

#if SB_HAVE_WORKLOAD_SUBSET_MEAN
#include "subset_mean/export_inputs.hpp"
#endif
#if SB_HAVE_WORKLOAD_SVD
#include "svd/export_inputs.hpp"
#endif
#if SB_HAVE_WORKLOAD_GROUPBY
#include "groupby/export_inputs.hpp"
#endif

namespace sb {

InputExport export_inputs(const std::string& workload, const std::vector<Params>& variants) {
#if SB_HAVE_WORKLOAD_SUBSET_MEAN
  if (workload == "subset-mean") return subset_mean::export_inputs(variants);
#endif
#if SB_HAVE_WORKLOAD_SVD
  if (workload == "svd") return svd::export_inputs(variants);
#endif
#if SB_HAVE_WORKLOAD_GROUPBY
  if (workload == "groupby") return groupby::export_inputs(variants);
#endif
  throw UsageError(fmt::format("datagen: workload '{}' has no input exporter", workload));
}

}  // namespace sb
