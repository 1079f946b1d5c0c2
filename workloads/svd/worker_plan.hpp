#pragma once
/// @file worker_plan.hpp
/// How many workers a multi-* svd case uses (Workload::plan_workers).

#include "scalebench/exec_path.hpp"
#include "scalebench/workload.hpp"
#include "svd/config.hpp"

namespace sb::svd {

/// No more workers than row blocks (a worker without one only waits for the R-factor tree).
/// On GPUs, each GPU gets at least 8n rows and 2 GFlop of local QR (2 (m/k) n^2): below
/// that the n x n work no GPU count shrinks (the R tree's QRs, the SVD of R) dominates and
/// more GPUs do not pay for their exchange. `tools/gpu-campaign.sh sizes` on H100: tiny
/// (2000 x 50) and seed (10 000 x 1000) no faster on 2 or 4 GPUs, small (20 000 x 500)
/// 1.06x on 2 and 1.15x on 4.
[[nodiscard]] WorkerPlan plan_workers(const Config& c, Device device, int available);

}  // namespace sb::svd
