#pragma once
/// @file system_identity.hpp
/// What a report ran on, read from its /system and root attributes: the hardware description
/// and fingerprint that keep history runs of different machines apart (history.hpp), and the
/// differences `compare` prints (and `compare --strict` refuses on hardware).
///
/// Hardware: node count, CPU models, physical cores per node, GPU count and models.
/// Software: GPU driver, scalebench version, build type, and every /system/versions entry
/// (MPI, BLAS, HDF5, CUDA runtime and driver, NCCL, compiler, ...).

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sb::results {

struct SystemDifference {
  std::string what;      ///< "CPU model", "MPI version", ...
  std::string baseline;  ///< "-" when that report does not say
  std::string current;
  bool hardware = false;  ///< a hardware field known on both sides
};

/// "1 node: 2 cores, AMD EPYC 9654; 2 GPUs: NVIDIA H200" ("unknown machine" without /system).
[[nodiscard]] std::string hardware_description(const nlohmann::json& model);
/// 12 hex digits identifying hardware_description (FNV-1a): the history's machine key.
[[nodiscard]] std::string hardware_fingerprint(const nlohmann::json& model);
/// Fields that differ between two reports, hardware first.
[[nodiscard]] std::vector<SystemDifference> system_differences(const nlohmann::json& baseline,
                                                               const nlohmann::json& current);

}  // namespace sb::results
