#pragma once
/// @file combine_mpi.hpp
/// Combining the partial results of several CPU workers over MPI (docs/specification.md §4.3).
///
/// Low cardinality: the keys lie in a small known domain, so each worker lays its groups out as
/// dense arrays (count and sum fields, min fields, max fields) and MPI_Reduce combines them on
/// case rank 0, which then holds every group.
/// High cardinality: each worker hash-partitions its groups by owner (owner_of in
/// group_table.hpp), exchanges them with MPI_Alltoallv (records of record_width words, one
/// contiguous MPI datatype per record), and the owner merges what it receives: its share of
/// the result.

#include <mpi.h>

#include "groupby/group_table.hpp"
#include "groupby/protocol.hpp"
#include "groupby/query.hpp"

namespace sb::groupby {

/// Low cardinality: on return rank 0's `table` holds every group, the others' are empty.
/// Collective over comm; `st.seconds` receives the MPI time.
void reduce_dense(const QueryDef& q, PartitionedTable& table, MPI_Comm comm, ShuffleStats& st);

/// High cardinality: returns this worker's owned share, built from every worker's `local`.
/// Collective over comm; fills `st` (bytes to others, whole send buffer, MPI time).
[[nodiscard]] PartitionedTable shuffle_alltoall(const QueryDef& q, const PartitionedTable& local,
                                                MPI_Comm comm, int partition_bits, int threads,
                                                ShuffleStats& st);

}  // namespace sb::groupby
