#pragma once
/// @file memory_estimate.hpp
/// Memory one comms worker allocates: the send and receive buffers of the sweep's largest size
/// (or of one pair transfer), in host memory on CPU paths and in GPU memory on GPU paths.

#include "scalebench/workload.hpp"

namespace sb::comms {

[[nodiscard]] MemoryNeed memory_needed(const CaseSpec& spec, const CaseEnv& env);

}  // namespace sb::comms
