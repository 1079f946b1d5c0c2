#pragma once
/// @file config.hpp
/// The comms workload's parameters: which measurement a case makes (one collective's size sweep,
/// or the pair matrix), the sizes, the iterations and the payload's seed. Keys as in nccl-tests
/// (-b, -e, -f, -n): `min_bytes`, `max_bytes`, `factor`, `iters`.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "comms/collective.hpp"
#include "scalebench/params.hpp"

namespace sb::comms {

/// What a case measures.
enum class Measure { collective, pairs };

/// How the pair matrix visits the ordered pairs (pair_schedule.hpp).
enum class Schedule { serial, rounds };

struct Config {
  Measure measure = Measure::collective;
  const Collective* collective = nullptr;  ///< Measure::collective only (collective.hpp)
  std::int64_t min_bytes = 8;
  std::int64_t max_bytes = 1 << 20;
  std::int64_t factor = 2;
  int iters = 20;                        ///< timed iterations per size (or per pair)
  std::int64_t pair_bytes = 1 << 22;     ///< Measure::pairs: bytes of one bandwidth transfer
  Schedule schedule = Schedule::serial;  ///< Measure::pairs
  std::uint64_t seed = 42;

  /// The nominal sizes min_bytes, min_bytes * factor, ... <= max_bytes.
  [[nodiscard]] std::vector<std::int64_t> nominal_sizes() const;
};

/// Largest message (and pair transfer) a case may ask for: 4 GiB (MPI counts are int).
inline constexpr std::int64_t kMaxBytes = std::int64_t{1} << 32;
/// Iterations a case may ask for per size.
inline constexpr int kMaxIters = 100000;
/// Small transfers timed per pair for its latency (back to back, or ping-pong halves).
inline constexpr int kLatencyIters = 100;
/// Bytes of one latency transfer (nccl-tests' smallest float all-reduce, osu_latency's 8 B).
inline constexpr std::int64_t kLatencyBytes = 8;

/// Parameter keys with their help (Workload::keys).
[[nodiscard]] std::vector<std::pair<std::string, std::string>> config_keys();
/// Parameters of a preset (tiny, small, seed, large).
[[nodiscard]] Params preset_params(const std::string& preset);
/// The case's settings from its parameters; throws sb::UsageError with one line on a bad value.
[[nodiscard]] Config parse(const Params& p);
/// One case per measurement (`op=all`: every collective and the pair matrix), each keeping only
/// the keys it uses.
[[nodiscard]] std::vector<Params> expand_params(const Params& p);
/// A byte count: an integer (1e6, 2^30 and 1_000 spellings too) with an optional binary
/// suffix K, M or G (x 1024, nccl-tests' -b/-e): "8", "64K", "1G". Throws sb::UsageError.
[[nodiscard]] std::int64_t parse_bytes(const std::string& text, const std::string& what);

}  // namespace sb::comms
