// The launcher-to-rank protocol (rank_protocol.hpp): what a rank reads before MPI_Init.
#include "scalebench/rank_protocol.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>

#include "scalebench/settings.hpp"

namespace sb::protocol {

int starter_rank() noexcept {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID", "PMI_RANK"}) {
    const auto v = settings::environment_variable(name);
    if (!v || v->empty()) continue;
    char* end = nullptr;
    errno = 0;
    const long r = std::strtol(v->c_str(), &end, 10);
    if (errno != 0 || *end != '\0' || r < 0 || r > INT_MAX) return -1;  // do not guess
    return static_cast<int>(r);
  }
  return -1;
}

}  // namespace sb::protocol
