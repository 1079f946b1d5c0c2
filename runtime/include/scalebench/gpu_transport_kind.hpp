#pragma once
/// @file gpu_transport_kind.hpp
/// How the multi-GPU paths move device buffers between their GPU workers (a workload's `comm`
/// parameter): `nccl` — NCCL, over NVLink, PCIe peer-to-peer or GPUDirect RDMA, as dask-cuda
/// with UCX; `mpi-host` — every buffer copied to host memory, moved by MPI, copied back, as a
/// Dask cluster over TCP moves it. Both deliver the same bytes (gpu_transport.cuh).

#include <optional>
#include <string_view>

namespace sb {

enum class GpuTransportKind { nccl, mpi_host };

[[nodiscard]] inline std::optional<GpuTransportKind> parse_gpu_transport(std::string_view s) {
  if (s == "nccl") return GpuTransportKind::nccl;
  if (s == "mpi-host") return GpuTransportKind::mpi_host;
  return std::nullopt;
}

/// The `comm` parameter's help, the same for every workload that has it.
inline constexpr const char* kGpuTransportHelp =
    "multi-gpu transport: nccl (default: NVLink, PCIe peer-to-peer, GPUDirect RDMA) | mpi-host "
    "(each buffer staged through host memory and sent with MPI, as Dask over TCP); the same "
    "answers";

}  // namespace sb
