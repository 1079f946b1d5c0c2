#pragma once
/// @file gpu_transport.cuh
/// The GPU workers' exchanges of device buffers behind one interface, so that a workload's
/// multi-GPU path runs over either transport of gpu_transport_kind.hpp with the same code:
/// NCCL's calls as they are, or the same operations staged through pinned host memory and moved
/// by MPI. Peers and roots are ranks of `comm`, which must be the NCCL communicator's ranks (the
/// runtime's GPU workers: env.comm on multi-gpu cases). Grouped point-to-point as NCCL's:
/// sends and receives between group_start() and group_end() complete together.
///
/// mpi-host completes every operation before it returns (the stream is synchronised, the data
/// copied to the host, moved, copied back): what a host-staged transport costs, nothing hidden.

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <cstddef>
#include <vector>

#include "scalebench/gpu_context.cuh"
#include "scalebench/gpu_transport_kind.hpp"

namespace sb {

class GpuTransport {
 public:
  GpuTransport(GpuTransportKind kind, const GpuContext& ctx, MPI_Comm comm);
  ~GpuTransport();
  GpuTransport(const GpuTransport&) = delete;
  GpuTransport& operator=(const GpuTransport&) = delete;

  [[nodiscard]] GpuTransportKind kind() const { return kind_; }

  void group_start();
  void group_end();
  void send(const void* buf, std::size_t count, ncclDataType_t type, int peer, cudaStream_t s);
  void recv(void* buf, std::size_t count, ncclDataType_t type, int peer, cudaStream_t s);
  void all_reduce(const void* send, void* recv, std::size_t count, ncclDataType_t type,
                  ncclRedOp_t op, cudaStream_t s);
  void reduce(const void* send, void* recv, std::size_t count, ncclDataType_t type, ncclRedOp_t op,
              int root, cudaStream_t s);
  void broadcast(const void* send, void* recv, std::size_t count, ncclDataType_t type, int root,
                 cudaStream_t s);

 private:
  struct PointToPoint {
    bool is_send;
    void* device;
    std::size_t bytes;
    int peer;
    cudaStream_t stream;
  };
  /// Pinned host memory of at least `bytes` for the k-th transfer of a group (grown, kept).
  void* staging(std::size_t k, std::size_t bytes);
  void run_group(const std::vector<PointToPoint>& ops);
  void group_end_now();  ///< a send or receive outside a group: alone, at once

  GpuTransportKind kind_;
  const GpuContext& ctx_;
  MPI_Comm comm_;
  int depth_ = 0;  ///< open groups (NCCL's nest; so do these)
  std::vector<PointToPoint> pending_;
  std::vector<void*> host_;
  std::vector<std::size_t> host_bytes_;
};

}  // namespace sb
