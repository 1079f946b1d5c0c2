#pragma once
/// @file task_dispatch.hpp
/// The scheduler's answer to a worker's REQUEST (docs/architecture.md, Message flow), the same
/// for a case (scheduler.cpp) and for each device of an each-* case (each_device.cpp).

#include <mpi.h>

#include <cstdint>

#include <nlohmann/json.hpp>

#include "case_record.hpp"
#include "message.hpp"
#include "scalebench/workload.hpp"

namespace sb::detail {

/// Reads a REQUEST from case rank `crank` (world rank `source`): folds the tasks it finished
/// into `sc` and, in a timed repeat (`timed` >= 0, the timed repeat's index), into `events`;
/// then sends it up to the asked number of the next task ids (ASSIGN, `next` advancing, none
/// past sc.num_tasks()). Asking for none sends nothing.
void answer_request(MPI_Comm world, int source, int crank, Reader& rd, SchedulerCase& sc,
                    TaskEvents& events, int timed, std::int64_t& next);

}  // namespace sb::detail
