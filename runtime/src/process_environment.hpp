#pragma once
/// @file process_environment.hpp
/// (runtime internals) Whether another process of this node was started with a given
/// environment variable: how a worker tells the parked side of its own A/B run among the
/// processes on its GPU (ab_protocol.hpp, kRunVariable).

#include <string>

namespace sb::detail {

/// True when /proc/PID/environ (the environment the process was started with) holds
/// `name`=`value` exactly. False when it does not, or cannot be read (another user's process,
/// a process that ended, another pid namespace).
[[nodiscard]] bool started_with(unsigned pid, const std::string& name, const std::string& value);

}  // namespace sb::detail
