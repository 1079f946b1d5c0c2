#pragma once
/// @file scheduler.hpp
/// The scheduler side of a groupby case (scheduler.cpp): the rows of every task, the workers'
/// summaries folded in rank order, the validation against them, the fingerprint and the work.

#include <memory>

#include "scalebench/workload.hpp"

namespace sb::groupby {

[[nodiscard]] std::unique_ptr<SchedulerCase> make_scheduler(const CaseSpec& spec);

}  // namespace sb::groupby
