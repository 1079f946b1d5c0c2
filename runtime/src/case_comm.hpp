#pragma once
/// @file case_comm.hpp
/// The MPI communicator of a case that runs on the first few of a path's workers (fewer
/// workers for a small problem, participant_plan.hpp), made once per size and kept.

#include <mpi.h>

#include <vector>

namespace sb::detail {

/// Communicators over the first `size` ranks of a base communicator, made on first use.
class CaseComms {
 public:
  CaseComms() = default;
  CaseComms(const CaseComms&) = delete;
  CaseComms& operator=(const CaseComms&) = delete;
  ~CaseComms();

  /// `base` itself when size is its size; otherwise its first `size` ranks (same order).
  /// Collective over those ranks only (MPI_Comm_create_group): the other ranks of `base` do
  /// not take part. The caller must be one of them.
  MPI_Comm first(MPI_Comm base, int size);

 private:
  struct Entry {
    MPI_Comm base;
    int size;
    MPI_Comm comm;
  };
  std::vector<Entry> made_;
};

}  // namespace sb::detail
