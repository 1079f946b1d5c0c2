#pragma once
/// @file memory_estimate.hpp
/// Memory one worker of a groupby case allocates, computed from the parameters before anything is
/// allocated (the runtime fails a case that does not fit, alone, naming both sizes).

#include "scalebench/workload.hpp"

namespace sb::groupby {

/// Host and device bytes one worker (env.rank of env.size, env.threads threads, env.device)
/// allocates for the case. Throws sb::UsageError on bad parameters (as expand() would).
[[nodiscard]] MemoryNeed memory_needed(const CaseSpec& spec, const CaseEnv& env);

}  // namespace sb::groupby
