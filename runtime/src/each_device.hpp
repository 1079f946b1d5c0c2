#pragma once
/// @file each_device.hpp
/// (runtime internals) The each-gpu and each-node paths (docs/specification.md §1): the
/// single-gpu case on every GPU worker, or the multi-cpu case on every node (its workers), all
/// at once. Each device is a case of its own: its own tasks, repeats, timing, validation,
/// telemetry and record (id `PLANNED_ID/HOST:gpuK` or `PLANNED_ID/HOST`), and nothing travels
/// between devices. A device that fails or times out is recorded with its cause while the
/// others go on; each record is streamed as soon as its device is done.

#include <string>
#include <vector>

#include "case_record.hpp"
#include "rank.hpp"
#include "scalebench/job_plan.hpp"
#include "startup_gather.hpp"

namespace sb::detail {

class EachDevice {
 public:
  EachDevice(const JobPlan& plan, RankContext& ctx, StreamWriter& out,
             CrossCheckReferences& references, const std::vector<WorkerInfo>& workers,
             const std::string& gpu_skip_reason)
      : plan_(plan),
        ctx_(ctx),
        out_(out),
        references_(references),
        workers_(workers),
        gpu_skip_reason_(gpu_skip_reason) {}

  /// Runs case `k` of `n` on every device and writes their records. True when the job must
  /// restart: a device timed out, or a device of several workers failed (its peers may be
  /// stuck in a collective).
  bool run(const CaseSpec& spec, int k, int n);

 private:
  const JobPlan& plan_;
  RankContext& ctx_;
  StreamWriter& out_;
  CrossCheckReferences& references_;
  const std::vector<WorkerInfo>& workers_;
  const std::string& gpu_skip_reason_;
};

}  // namespace sb::detail
