#pragma once
/// @file groupby.hpp
/// The groupby workload (docs/specification.md §4.3): a dask.datasets.timeseries-like table
/// generated on the workers, aggregated by name (26 groups), by id (~600 groups) or by a
/// high-cardinality key (10^7 groups) on all four paths. See config.hpp (parameters), table.hpp
/// (data), worker_cpu.hpp / worker_gpu.hpp (workers) and validation.hpp.

#include "scalebench/workload.hpp"

namespace sb {

/// The groupby workload for the registry.
Workload groupby_workload();

}  // namespace sb
