#pragma once
/// @file rank_protocol.hpp
/// The protocol between the launcher (`scalebench run`) and the ranks of the MPI job it starts
/// (`scalebench-rank --plan PLAN.json`): what each rank learns from its environment before and
/// after MPI_Init, and what the job's exit status tells the launcher.
///
///   environment   SCALEBENCH_PLACEMENT  every rank's role, node, GPU and threads (encoded by
///                                       the launcher's placement, see batch/allocation.hpp)
///                 the starter's rank    OMPI_COMM_WORLD_RANK, PMIX_RANK, SLURM_PROCID, PMI_RANK
///   plan file     JobPlan (job_plan.hpp): cases, the record stream, the stop file, the
///                 launcher's lifeline (lifeline.hpp)
///   exit status   0 the job ran its plan; kExitRestart the scheduler ended the job on purpose
///                 (start a fresh job for the remaining cases); kExitLauncherGone the scheduler
///                 found the launcher dead and ended the job (nothing is left running); both
///                 in error.hpp with every other exit code.

#include <string_view>

namespace sb::protocol {

/// The environment variable that carries the placement of every rank.
inline constexpr std::string_view kPlacementVariable = "SCALEBENCH_PLACEMENT";

/// This process's world rank as the MPI starter announces it before MPI_Init (OpenMPI's
/// mpiexec, PMIx, SLURM's srun, PMI starters), or -1 when none does or the value is malformed.
[[nodiscard]] int starter_rank() noexcept;

}  // namespace sb::protocol
