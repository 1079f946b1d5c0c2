#include "groupby/config.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "scalebench/error.hpp"

namespace sb::groupby {

namespace {
constexpr std::int64_t kMaxRows = std::int64_t{1} << 40;
constexpr std::int64_t kMaxCardinality = std::int64_t{1} << 53;  // exact as doubles in reports
}  // namespace

std::int64_t Config::max_groups(std::int64_t nrows) const {
  if (!def.high_cardinality) return def.domain_size;
  const auto card = static_cast<std::int64_t>(cardinality);
  return nrows < card ? nrows : card;
}

namespace {

/// The value of `key` (the first of `options` when absent), which must be one of `options`.
std::string choice(const Params& p, const char* key, const std::vector<std::string>& options) {
  const std::string v = p.has(key) ? p.str(key) : options.front();
  if (std::find(options.begin(), options.end(), v) != options.end()) return v;
  std::string list = options.front();
  for (std::size_t i = 1; i < options.size(); ++i)
    list += (i + 1 < options.size() ? ", " : " or ") + options[i];
  throw UsageError(fmt::format("groupby: parameter '{}' must be {} (got '{}')", key, list, v));
}

/// The value of the optional integer `key` (0 when absent), which must lie in [lo, hi].
int optional_int(const Params& p, const char* key, int lo, int hi) {
  if (!p.has(key)) return 0;
  const std::string& text = p.str(key);
  std::int64_t v = 0;
  try {
    v = parse_int(text, key);
  } catch (const UsageError&) {
    v = std::int64_t{lo} - 1;  // reported below, with the range
  }
  if (v < lo || v > hi)
    throw UsageError(fmt::format(
        "groupby: parameter '{}' must be an integer in [{}, {}] (got '{}')", key, lo, hi, text));
  return static_cast<int>(v);
}

}  // namespace

std::vector<std::pair<std::string, std::string>> config_keys() {
  return {
      {"days", "rows as days of 86400 rows, one per second from 2000-01-01 (default 30)"},
      {"rows", "number of rows; overrides days (e.g. 10^8)"},
      {"partition", "rows per task (default 86400: one day)"},
      {"cardinality", "distinct values of the by-key column (default 10^7)"},
      {"query", "by-name | by-id | by-key | all (default all: one case each)"},
      {"seed", "seed of the deterministic data (default 42)"},
      {"gpu_shuffle",
       "multi-GPU by-key shuffle: auto | rows (rows to their owners) | groups (partial groups)"},
      {"gpu_exchange",
       "how the rows shuffle's rows travel: auto | peer (stored into their owners' memory during "
       "the tasks, CUDA IPC, one node) | nccl (grouped send/recv after the tasks)"},
      {"push_blocks",
       fmt::format("blocks of the peer exchange's push kernel, 1..{} (default {} on two GPUs, "
                   "{} on more): more land the rows sooner and take more SMs from the tasks",
                   kMaxPushBlocks, kDefaultPushBlocksTwo, kDefaultPushBlocks)},
      {"shuffle_chunks",
       fmt::format("pieces the nccl exchange sends its rows in, 1..{} (default 1 on up to two "
                   "GPUs, else 4)",
                   kMaxShuffleChunks)},
      {"comm", kGpuTransportHelp},
  };
}

Params preset_params(const std::string& preset) {
  Params p;
  p.set("cardinality", "10000000");
  p.set("query", "all");
  p.set("seed", "42");
  p.set("partition", "86400");
  if (preset == "tiny") {
    p.set("days", "2");
  } else if (preset == "small" || preset == "seed") {
    p.set("days", "30");
  } else if (preset == "large") {
    p.set("rows", "100000000");
    p.set("partition", "5000000");
  } else {
    throw UsageError(
        fmt::format("groupby: unknown preset '{}' (known: tiny, small, seed, large)", preset));
  }
  return p;
}

Config parse(const Params& p) {
  Config c;
  const auto q = parse_query(p.has("query") ? p.str("query") : std::string("by-name"));
  if (!q)
    throw UsageError(
        fmt::format("groupby: parameter 'query' must be by-name, by-id, by-key or all (got '{}')",
                    p.str("query")));
  c.def = query_def(*q);
  if (p.has("rows")) {
    c.rows = p.i64("rows", 1);
  } else {
    const std::int64_t days = p.has("days") ? p.i64("days", 1) : 30;
    if (days > kMaxRows / kRowsPerDay)
      throw UsageError(fmt::format("groupby: parameter 'days' is too large (got {})", days));
    c.rows = days * kRowsPerDay;
  }
  if (c.rows > kMaxRows)
    throw UsageError(
        fmt::format("groupby: parameter 'rows' must be at most 2^40 (got {})", c.rows));
  c.partition = p.has("partition") ? p.i64("partition", 1) : kRowsPerDay;
  if (c.partition > (std::int64_t{1} << 31))
    throw UsageError(fmt::format(
        "groupby: parameter 'partition' must be at most 2^31 rows (got {})", c.partition));
  if (p.has("cardinality")) {
    const std::int64_t card = p.i64("cardinality", 1);
    if (card > kMaxCardinality)
      throw UsageError(
          fmt::format("groupby: parameter 'cardinality' must be at most 2^53 (got {})", card));
    c.cardinality = static_cast<std::uint64_t>(card);
  }
  c.seed = p.has("seed") ? p.u64("seed") : 42;
  c.gpu_shuffle = choice(p, "gpu_shuffle", {"auto", "rows", "groups"});
  c.gpu_exchange = choice(p, "gpu_exchange", {"auto", "peer", "nccl"});
  c.push_blocks = optional_int(p, "push_blocks", 1, kMaxPushBlocks);
  if (p.has("comm")) {
    const auto t = parse_gpu_transport(p.str("comm"));
    if (!t)
      throw UsageError(fmt::format("groupby: parameter 'comm' must be nccl or mpi-host (got '{}')",
                                   p.str("comm")));
    c.comm = *t;
  }
  if (c.comm == GpuTransportKind::mpi_host && c.gpu_exchange == "peer")
    throw UsageError(
        "groupby: gpu_exchange=peer stores rows into the owners' GPU memory (CUDA IPC) and has no "
        "mpi-host form (use comm=nccl, or gpu_exchange=auto or nccl)");
  c.shuffle_chunks = optional_int(p, "shuffle_chunks", 1, kMaxShuffleChunks);
  return c;
}

std::vector<Params> expand_params(const Params& p) {
  // The by-key tuning keys are checked whatever the query (only the by-key case keeps them).
  (void)optional_int(p, "push_blocks", 1, kMaxPushBlocks);
  (void)optional_int(p, "shuffle_chunks", 1, kMaxShuffleChunks);
  const std::string query = p.has("query") ? p.str("query") : std::string("all");
  std::vector<std::string> queries;
  if (query == "all") {
    queries = {"by-name", "by-id", "by-key"};
  } else if (parse_query(query)) {
    queries = {query};
  } else {
    throw UsageError(fmt::format(
        "groupby: parameter 'query' must be by-name, by-id, by-key or all (got '{}')", query));
  }
  std::vector<Params> out;
  for (const auto& q : queries) {
    Params v;
    for (const auto& [k, val] : p.items()) {
      if (k == "days" && p.has("rows")) continue;  // rows overrides days
      if (q != "by-key" && (k == "cardinality" || k == "gpu_shuffle" || k == "gpu_exchange" ||
                            k == "push_blocks" || k == "shuffle_chunks"))
        continue;  // by-key only
      v.set(k, val);
    }
    v.set("query", q);
    (void)parse(v);  // validates every value, one clear line on the first bad one
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<std::int64_t> sample_keys(const Config& c) {
  std::vector<std::int64_t> keys;
  if (!c.def.high_cardinality) {
    for (std::int64_t k = 0; k < c.def.domain_size; ++k) keys.push_back(c.def.domain_lo + k);
    return keys;
  }
  if (c.cardinality <= static_cast<std::uint64_t>(kSampledGroups)) {
    for (std::uint64_t k = 0; k < c.cardinality; ++k) keys.push_back(static_cast<std::int64_t>(k));
    return keys;
  }
  std::set<std::int64_t> chosen;
  for (std::uint64_t i = 0; chosen.size() < static_cast<std::size_t>(kSampledGroups); ++i) {
    const Words4 w = philox4x32_10(i, kStreamSample, c.seed);
    chosen.insert(bounded_key(w.w[0], w.w[1], c.cardinality));
  }
  keys.assign(chosen.begin(), chosen.end());
  return keys;
}

}  // namespace sb::groupby
