// The GPU workers' exchanges over NCCL or staged through host memory with MPI
// (gpu_transport.cuh).
#include "scalebench/gpu_transport.cuh"

#include <algorithm>
#include <climits>

#include "scalebench/error.hpp"
#include "scalebench/gpu_error.cuh"

namespace sb {
namespace {

std::size_t type_bytes(ncclDataType_t t) {
  switch (t) {
    case ncclInt8:
    case ncclUint8:
      return 1;
    case ncclFloat16:
    case ncclBfloat16:
      return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
      return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64:
      return 8;
    default:
      throw Error("gpu transport: unsupported NCCL data type");
  }
}

MPI_Datatype mpi_type(ncclDataType_t t) {
  switch (t) {
    case ncclInt8:
      return MPI_INT8_T;
    case ncclUint8:
      return MPI_UINT8_T;
    case ncclInt32:
      return MPI_INT32_T;
    case ncclUint32:
      return MPI_UINT32_T;
    case ncclInt64:
      return MPI_INT64_T;
    case ncclUint64:
      return MPI_UINT64_T;
    case ncclFloat32:
      return MPI_FLOAT;
    case ncclFloat64:
      return MPI_DOUBLE;
    default:
      throw Error("gpu transport: mpi-host reduces 8-, 32- and 64-bit integers and floats only");
  }
}

MPI_Op mpi_op(ncclRedOp_t op) {
  switch (op) {
    case ncclSum:
      return MPI_SUM;
    case ncclProd:
      return MPI_PROD;
    case ncclMax:
      return MPI_MAX;
    case ncclMin:
      return MPI_MIN;
    default:
      throw Error("gpu transport: mpi-host has no equivalent of this NCCL reduction");
  }
}

/// MPI counts are int: a message above this many bytes travels in pieces (same tag order on
/// both sides, so they pair up).
constexpr std::size_t kPiece = std::size_t{1} << 30;

}  // namespace

GpuTransport::GpuTransport(GpuTransportKind kind, const GpuContext& ctx, MPI_Comm comm)
    : kind_(kind), ctx_(ctx), comm_(comm) {
  if (kind_ == GpuTransportKind::nccl && ctx_.nccl == nullptr)
    throw Error("gpu transport: nccl without a NCCL communicator");
}

GpuTransport::~GpuTransport() {
  for (void* p : host_)
    if (p != nullptr) (void)cudaFreeHost(p);
}

void* GpuTransport::staging(std::size_t k, std::size_t bytes) {
  if (host_.size() <= k) {
    host_.resize(k + 1, nullptr);
    host_bytes_.resize(k + 1, 0);
  }
  if (host_bytes_[k] < bytes) {
    if (host_[k] != nullptr) SB_CUDA_CHECK(cudaFreeHost(host_[k]));
    host_[k] = nullptr;
    host_bytes_[k] = 0;
    SB_CUDA_CHECK(cudaMallocHost(&host_[k], std::max<std::size_t>(bytes, 1)));
    host_bytes_[k] = bytes;
  }
  return host_[k];
}

void GpuTransport::group_start() {
  if (kind_ == GpuTransportKind::nccl) {
    SB_NCCL_CHECK(ncclGroupStart());
    return;
  }
  ++depth_;
}

void GpuTransport::group_end() {
  if (kind_ == GpuTransportKind::nccl) {
    SB_NCCL_CHECK(ncclGroupEnd());
    return;
  }
  if (depth_ == 0) throw Error("gpu transport: group_end without group_start");
  if (--depth_ > 0) return;
  std::vector<PointToPoint> ops;
  ops.swap(pending_);
  run_group(ops);
}

void GpuTransport::send(const void* buf, std::size_t count, ncclDataType_t type, int peer,
                        cudaStream_t s) {
  if (kind_ == GpuTransportKind::nccl) {
    SB_NCCL_CHECK(ncclSend(buf, count, type, peer, ctx_.nccl, s));
    return;
  }
  pending_.push_back({true, const_cast<void*>(buf), count * type_bytes(type), peer, s});
  if (depth_ == 0) group_end_now();
}

void GpuTransport::recv(void* buf, std::size_t count, ncclDataType_t type, int peer,
                        cudaStream_t s) {
  if (kind_ == GpuTransportKind::nccl) {
    SB_NCCL_CHECK(ncclRecv(buf, count, type, peer, ctx_.nccl, s));
    return;
  }
  pending_.push_back({false, buf, count * type_bytes(type), peer, s});
  if (depth_ == 0) group_end_now();
}

void GpuTransport::group_end_now() {
  std::vector<PointToPoint> ops;
  ops.swap(pending_);
  run_group(ops);
}

void GpuTransport::run_group(const std::vector<PointToPoint>& ops) {
  if (ops.empty()) return;
  // The data to send must be complete on its streams, then on the host.
  for (const auto& op : ops) SB_CUDA_CHECK(cudaStreamSynchronize(op.stream));
  std::vector<MPI_Request> requests;
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const PointToPoint& op = ops[k];
    auto* host = static_cast<char*>(staging(k, op.bytes));
    if (op.is_send && op.bytes > 0)
      SB_CUDA_CHECK(cudaMemcpyAsync(host, op.device, op.bytes, cudaMemcpyDeviceToHost, op.stream));
  }
  for (const auto& op : ops) SB_CUDA_CHECK(cudaStreamSynchronize(op.stream));
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const PointToPoint& op = ops[k];
    auto* host = static_cast<char*>(host_[k]);
    for (std::size_t at = 0, piece = 0; at < op.bytes || (op.bytes == 0 && piece == 0);
         at += kPiece, ++piece) {
      const int n = static_cast<int>(std::min(kPiece, op.bytes - at));
      MPI_Request r = MPI_REQUEST_NULL;
      const int tag = static_cast<int>(piece % 32768);
      if (op.is_send) {
        SB_MPI_CHECK(MPI_Isend(host + at, n, MPI_BYTE, op.peer, tag, comm_, &r));
      } else {
        SB_MPI_CHECK(MPI_Irecv(host + at, n, MPI_BYTE, op.peer, tag, comm_, &r));
      }
      requests.push_back(r);
      if (op.bytes == 0) break;
    }
  }
  SB_MPI_CHECK(
      MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
  for (std::size_t k = 0; k < ops.size(); ++k) {
    const PointToPoint& op = ops[k];
    if (!op.is_send && op.bytes > 0)
      SB_CUDA_CHECK(
          cudaMemcpyAsync(op.device, host_[k], op.bytes, cudaMemcpyHostToDevice, op.stream));
  }
  for (const auto& op : ops) SB_CUDA_CHECK(cudaStreamSynchronize(op.stream));
}

void GpuTransport::all_reduce(const void* send, void* recv, std::size_t count, ncclDataType_t type,
                              ncclRedOp_t op, cudaStream_t s) {
  if (kind_ == GpuTransportKind::nccl) {
    SB_NCCL_CHECK(ncclAllReduce(send, recv, count, type, op, ctx_.nccl, s));
    return;
  }
  const std::size_t bytes = count * type_bytes(type);
  if (count > static_cast<std::size_t>(INT_MAX))
    throw Error("gpu transport: mpi-host reduces at most 2^31 - 1 elements at once");
  void* host = staging(0, bytes);
  SB_CUDA_CHECK(cudaMemcpyAsync(host, send, bytes, cudaMemcpyDeviceToHost, s));
  SB_CUDA_CHECK(cudaStreamSynchronize(s));
  SB_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, host, static_cast<int>(count), mpi_type(type),
                             mpi_op(op), comm_));
  SB_CUDA_CHECK(cudaMemcpyAsync(recv, host, bytes, cudaMemcpyHostToDevice, s));
  SB_CUDA_CHECK(cudaStreamSynchronize(s));
}

void GpuTransport::reduce(const void* send, void* recv, std::size_t count, ncclDataType_t type,
                          ncclRedOp_t op, int root, cudaStream_t s) {
  if (kind_ == GpuTransportKind::nccl) {
    SB_NCCL_CHECK(ncclReduce(send, recv, count, type, op, root, ctx_.nccl, s));
    return;
  }
  const std::size_t bytes = count * type_bytes(type);
  if (count > static_cast<std::size_t>(INT_MAX))
    throw Error("gpu transport: mpi-host reduces at most 2^31 - 1 elements at once");
  int me = 0;
  SB_MPI_CHECK(MPI_Comm_rank(comm_, &me));
  void* host = staging(0, bytes);
  SB_CUDA_CHECK(cudaMemcpyAsync(host, send, bytes, cudaMemcpyDeviceToHost, s));
  SB_CUDA_CHECK(cudaStreamSynchronize(s));
  SB_MPI_CHECK(MPI_Reduce(me == root ? MPI_IN_PLACE : host, me == root ? host : nullptr,
                          static_cast<int>(count), mpi_type(type), mpi_op(op), root, comm_));
  if (me == root) {
    SB_CUDA_CHECK(cudaMemcpyAsync(recv, host, bytes, cudaMemcpyHostToDevice, s));
    SB_CUDA_CHECK(cudaStreamSynchronize(s));
  }
}

void GpuTransport::broadcast(const void* send, void* recv, std::size_t count, ncclDataType_t type,
                             int root, cudaStream_t s) {
  if (kind_ == GpuTransportKind::nccl) {
    SB_NCCL_CHECK(ncclBroadcast(send, recv, count, type, root, ctx_.nccl, s));
    return;
  }
  const std::size_t bytes = count * type_bytes(type);
  int me = 0;
  SB_MPI_CHECK(MPI_Comm_rank(comm_, &me));
  auto* host = static_cast<char*>(staging(0, bytes));
  if (me == root) {
    SB_CUDA_CHECK(cudaMemcpyAsync(host, send, bytes, cudaMemcpyDeviceToHost, s));
    SB_CUDA_CHECK(cudaStreamSynchronize(s));
  }
  for (std::size_t at = 0; at < bytes; at += kPiece)
    SB_MPI_CHECK(MPI_Bcast(host + at, static_cast<int>(std::min(kPiece, bytes - at)), MPI_BYTE,
                           root, comm_));
  SB_CUDA_CHECK(cudaMemcpyAsync(recv, host, bytes, cudaMemcpyHostToDevice, s));
  SB_CUDA_CHECK(cudaStreamSynchronize(s));
}

}  // namespace sb
