// One NCCL call per collective (nccl_collectives.cuh), as nccl-tests' runColl.
#include "comms/gpu/nccl_collectives.cuh"

#include "scalebench/gpu_error.cuh"

namespace sb::comms::gpu {

void run_nccl(Op op, const float* send, float* recv, const Layout& l, ncclComm_t comm,
              cudaStream_t stream) {
  const auto n = static_cast<std::size_t>(l.count);
  switch (op) {
    case Op::all_reduce:
      SB_NCCL_CHECK(ncclAllReduce(send, recv, n, ncclFloat32, ncclSum, comm, stream));
      return;
    case Op::all_gather:
      SB_NCCL_CHECK(ncclAllGather(send, recv, n, ncclFloat32, comm, stream));
      return;
    case Op::reduce_scatter:
      SB_NCCL_CHECK(ncclReduceScatter(send, recv, n, ncclFloat32, ncclSum, comm, stream));
      return;
    case Op::all_to_all: {
      // NCCL has no all-to-all call: one grouped send and receive per peer (nccl-tests' way).
      int ranks = 0;
      SB_NCCL_CHECK(ncclCommCount(comm, &ranks));
      SB_NCCL_CHECK(ncclGroupStart());
      for (int p = 0; p < ranks; ++p) {
        SB_NCCL_CHECK(ncclSend(send + p * n, n, ncclFloat32, p, comm, stream));
        SB_NCCL_CHECK(ncclRecv(recv + p * n, n, ncclFloat32, p, comm, stream));
      }
      SB_NCCL_CHECK(ncclGroupEnd());
      return;
    }
    case Op::broadcast:
      SB_NCCL_CHECK(ncclBroadcast(send, recv, n, ncclFloat32, kBroadcastRoot, comm, stream));
      return;
  }
}

}  // namespace sb::comms::gpu
