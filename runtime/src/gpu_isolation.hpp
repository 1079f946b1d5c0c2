#pragma once
/// @file gpu_isolation.hpp
/// One visible GPU per worker process (runtime internals). Before CUDA starts in a worker, the
/// rank narrows CUDA_VISIBLE_DEVICES to the one GPU its placement names, so the CUDA driver
/// initialises one device in that process instead of every GPU of the node. NCCL still reaches
/// its peers over NVLink: it finds them by PCI bus id, not by CUDA ordinal. Placements stay
/// ordinals among the GPUs the launcher saw; inside an isolated worker that GPU is CUDA device 0.

#include <optional>
#include <string>

namespace sb::detail {

/// The CUDA_VISIBLE_DEVICES value that leaves exactly the GPU of ordinal `ordinal` among those
/// visible now: `current` is the variable's value, null when it is unset (then every GPU is
/// visible and ordinal k is "k"). Entries may be indices, GPU-/MIG- UUIDs, with spaces around.
/// nullopt when the list has no such entry (ordinal out of range, negative, an empty list, or
/// an entry that hides GPUs such as "-1"): the caller then leaves the variable alone.
[[nodiscard]] std::optional<std::string> isolated_visible_devices(const char* current, int ordinal);

/// Whether worker ranks narrow CUDA_VISIBLE_DEVICES (SCALEBENCH_GPU_ISOLATION=0 turns it off;
/// anything else, or unset, leaves it on).
[[nodiscard]] bool gpu_isolation_enabled() noexcept;

}  // namespace sb::detail
