#pragma once
/// @file progress_records.hpp
/// (runtime internals) Records the scheduler writes to the stream to say where the job is, before
/// a case's own record: the launcher blames the right case when a job dies, and names the ranks
/// a start-up waits for when it hangs (docs/architecture.md, Stream records).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/workload.hpp"

namespace sb::detail {

/// `setup`: case k of n enters its set-up (CASE_BEGIN: allocation, a GPU communicator), written
/// durably before any worker hears of it, so that a worker killed while it allocates (the OOM
/// killer) fails this case alone.
[[nodiscard]] nlohmann::json setup_record(const CaseSpec& spec, int k, int n);

/// `startup_wait`: the worker ranks whose start-up record has not come yet, `elapsed_s` after
/// the scheduler began to wait (written while it waits, every second or so).
[[nodiscard]] nlohmann::json startup_wait_record(const std::vector<int>& missing, double elapsed_s);

}  // namespace sb::detail
