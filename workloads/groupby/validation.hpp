#pragma once
/// @file validation.hpp
/// groupby validation (docs/specification.md §4.3), outside the timed region.
///
/// Workers: a reference scan of their share of the rows (the scalar Random123 reference of
/// generate.hpp, independent of the fast generators) recomputes the sampled groups and the
/// column sums; the owner of each sampled key reports its table's value (protocol.hpp).
/// Scheduler: Σcount must equal the rows, Σsum over groups must match the scanned column sums,
/// and every sampled group must match the scan (counts and min/max exact, sums within 1e-9
/// relative). Up to the small preset the workers also send every group, which becomes the
/// fingerprint compared across paths.
///
/// Tolerance of sums: |a - b| <= 1e-9 (max(|a|, |b|) + 1e-3 count), i.e. 1e-9 relative with
/// an absolute floor of 1e-12 per row for sums that cancel to near zero.

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "groupby/config.hpp"
#include "groupby/protocol.hpp"
#include "scalebench/workload.hpp"

namespace sb::groupby {

inline constexpr double kSumTolerance = 1e-9;

/// Normalised difference of two sums over `count` rows (compare with kSumTolerance).
[[nodiscard]] double sum_error(double a, double b, double count);

struct ReferenceScan {
  double rows = 0;
  double sum_x = 0;
  double sum_y = 0;
  std::vector<GroupState> samples;  ///< one per sampled key, all fields
};

/// Scans rows [begin, end) with `threads` OpenMP threads.
[[nodiscard]] ReferenceScan reference_scan(const Config& c, const std::vector<std::int64_t>& keys,
                                           std::int64_t begin, std::int64_t end, int threads);

/// The owner's view of a sampled key: nullopt when this worker does not own it, else its
/// state (neutral when the group does not exist).
using OwnedLookup = std::function<std::optional<GroupState>(std::int64_t key)>;

/// A worker's validate() vector (protocol.hpp): scans rows [rank N/size, (rank+1) N/size).
/// `records` are this worker's report records (empty above the small preset).
[[nodiscard]] std::vector<double> validate_part(const Config& c, int rank, int size, int threads,
                                                const OwnedLookup& owned,
                                                const std::vector<double>& records);

/// Scheduler side: checks of the parts against the last repeat's checksums; fills the
/// fingerprint's per-group data (sorted records) up to the small preset.
[[nodiscard]] std::vector<Check> check_parts(const Config& c, const Summary& last,
                                             const std::vector<std::vector<double>>& parts,
                                             std::vector<double>* per_group);

/// Workload::cross_check of groupby fingerprints.
[[nodiscard]] std::vector<Check> cross_check_fingerprints(const Fingerprint& reference,
                                                          const Fingerprint& other);

}  // namespace sb::groupby
