#pragma once
/// @file node_files.hpp
/// Readers of the host lists batch systems hand a job: PBS_NODEFILE and LSF's
/// LSB_DJOB_HOSTFILE (one line per slot), LSB_MCPU_HOSTS (host and count pairs) and Grid
/// Engine's PE_HOSTFILE (host, slots, queue, processors). Linear in the input: a host's entry is
/// found through a hash map, so a node file of 10^6 hosts parses in well under a second
/// (tests/batch/test_node_files.cpp). Malformed input throws sb::EnvironmentError with one line.

#include <string>
#include <string_view>
#include <vector>

namespace sb::batch {

/// A host of the allocation and the slots the batch system gave the job there.
struct HostSlots {
  std::string host;
  int slots = 0;
};

/// Hosts are in the order of their first appearance; `source` names the input in messages (e.g.
/// "PBS_NODEFILE '/var/spool/pbs/aux/12.srv'").

/// One host per line and one line per slot (PBS_NODEFILE, LSB_DJOB_HOSTFILE); blank lines are
/// skipped, a host's slots are its line count.
[[nodiscard]] std::vector<HostSlots> parse_slot_lines(std::string_view text,
                                                      const std::string& source);

/// Host and slot-count pairs separated by blanks: LSB_MCPU_HOSTS `hostA 4 hostB 2`.
[[nodiscard]] std::vector<HostSlots> parse_host_counts(std::string_view text,
                                                       const std::string& source);

/// Grid Engine's PE_HOSTFILE: `host slots queue processors` per line; a host on several lines
/// (one per queue) gets the sum of their slots.
[[nodiscard]] std::vector<HostSlots> parse_pe_hostfile(std::string_view text,
                                                       const std::string& source);

/// The contents of the node file `path` named by the environment variable `variable`; throws
/// sb::EnvironmentError when it cannot be read.
[[nodiscard]] std::string read_node_file(const std::string& path, const std::string& variable);

}  // namespace sb::batch
