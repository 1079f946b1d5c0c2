// Communicators over the first ranks of the workers (case_comm.hpp).
#include "case_comm.hpp"

#include <numeric>

#include "scalebench/error.hpp"

namespace sb::detail {

CaseComms::~CaseComms() {
  for (auto& e : made_)
    if (e.comm != MPI_COMM_NULL) MPI_Comm_free(&e.comm);
}

MPI_Comm CaseComms::first(MPI_Comm base, int size) {
  int base_size = 0;
  SB_MPI_CHECK(MPI_Comm_size(base, &base_size));
  if (size >= base_size) return base;
  for (const auto& e : made_)
    if (e.base == base && e.size == size) return e.comm;
  MPI_Group all = MPI_GROUP_NULL;
  MPI_Group part = MPI_GROUP_NULL;
  SB_MPI_CHECK(MPI_Comm_group(base, &all));
  std::vector<int> ranks(static_cast<std::size_t>(size));
  std::iota(ranks.begin(), ranks.end(), 0);
  SB_MPI_CHECK(MPI_Group_incl(all, size, ranks.data(), &part));
  MPI_Comm comm = MPI_COMM_NULL;
  const int rc = MPI_Comm_create_group(base, part, /*tag=*/size, &comm);
  MPI_Group_free(&part);
  MPI_Group_free(&all);
  SB_MPI_CHECK(rc);
  made_.push_back({base, size, comm});
  return comm;
}

}  // namespace sb::detail
