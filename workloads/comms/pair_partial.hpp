#pragma once
/// @file pair_partial.hpp
/// What a worker of the pair matrix reports in its finish_repeat partial (doubles, as every
/// partial): who it is, and per peer j its figures as the sender of the transfer to j and as the
/// receiver of the transfer from j, with what joins them. Text travels as its characters.

#include <optional>
#include <string>
#include <vector>

#include "comms/link.hpp"

namespace sb::comms {

struct PairRow {
  double send_s = 0;      ///< seconds per bandwidth transfer to j, on this (sending) worker
  double latency_s = 0;   ///< one small transfer to j (ping-pong half, or a synchronised copy)
  double recv_s = 0;      ///< seconds per bandwidth transfer from j, on this (receiving) worker
  double recv_wrong = 0;  ///< elements of the transfer from j that differ from j's payload
  Link link;              ///< from this worker to j
  Transport transport = Transport::mpi;  ///< of the transfer to j
};

struct PairReport {
  Identity id;
  std::vector<PairRow> rows;  ///< one per worker of the case (its own row unused)
};

[[nodiscard]] std::vector<double> encode_pairs(const PairReport& report);
/// nullopt when `words` is not a report of `workers` rows.
[[nodiscard]] std::optional<PairReport> decode_pairs(const std::vector<double>& words, int workers);

}  // namespace sb::comms
