#pragma once
/// @file comms.hpp
/// The comms workload: the interconnect between the workers, measured as nccl-tests and
/// p2pBandwidthLatencyTest measure it, with every result's values checked. One case per
/// collective (all-reduce, all-gather, reduce-scatter, all-to-all, broadcast: a sweep of message
/// sizes reporting time, algorithm and bus bandwidth) and one for the pair matrix (bandwidth and
/// latency between every ordered pair of workers, each link compared with its peers of the same
/// kind, the slow ones named). Multi-cpu (MPI) and multi-gpu (NCCL; CUDA IPC copies inside a
/// node) only, on two workers or more. docs/workloads.md has the formulas.

#include <vector>

#include "scalebench/workload.hpp"

namespace sb {

Workload comms_workload();

namespace comms {

/// Cross-path check: both cases' outputs were exact (the figures themselves differ by path).
[[nodiscard]] std::vector<Check> cross_check(const Fingerprint& reference,
                                             const Fingerprint& other);

}  // namespace comms
}  // namespace sb
