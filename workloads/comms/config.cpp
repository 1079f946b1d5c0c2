#include "comms/config.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "scalebench/error.hpp"

namespace sb::comms {

namespace {

/// "all-reduce | all-gather | ... | pairs | all (default all: one case each)", from the list.
std::string op_help() {
  std::string names;
  for (const Collective* c : collectives()) names += std::string(c->name) + " | ";
  return names + "pairs | all (default all: one case each)";
}

std::int64_t bytes_key(const Params& p, const char* key, std::int64_t fallback) {
  if (!p.has(key)) return fallback;
  const std::int64_t v = parse_bytes(p.str(key), fmt::format("comms: parameter '{}'", key));
  if (v < 1 || v > kMaxBytes)
    throw UsageError(fmt::format("comms: parameter '{}' must lie between 1 and 4G bytes (got '{}')",
                                 key, p.str(key)));
  return v;
}

}  // namespace

std::vector<std::int64_t> Config::nominal_sizes() const {
  std::vector<std::int64_t> out;
  for (std::int64_t s = min_bytes; s <= max_bytes; s *= factor) {
    out.push_back(s);
    if (s > max_bytes / factor) break;
  }
  return out;
}

std::int64_t parse_bytes(const std::string& text, const std::string& what) {
  std::string digits = text;
  std::int64_t scale = 1;
  if (!digits.empty()) {
    const char last = static_cast<char>(std::toupper(static_cast<unsigned char>(digits.back())));
    const std::int64_t k = last == 'K'   ? 1024
                           : last == 'M' ? 1024 * 1024
                           : last == 'G' ? 1 << 30
                                         : 1;
    if (k > 1) {
      scale = k;
      digits.pop_back();
    }
  }
  const std::int64_t v = parse_int(digits, what);
  if (v < 0 || v > kMaxBytes / scale)
    throw UsageError(fmt::format("{}: '{}' is not a byte count up to 4G", what, text));
  return v * scale;
}

std::vector<std::pair<std::string, std::string>> config_keys() {
  return {
      {"op", op_help()},
      {"min_bytes", "smallest message of a collective's sweep (nccl-tests -b; K, M, G suffixes)"},
      {"max_bytes", "largest message of a collective's sweep, at most 4G (nccl-tests -e)"},
      {"factor", "each size of the sweep is the previous times factor, >= 2 (nccl-tests -f)"},
      {"iters", "timed iterations per size and per pair (nccl-tests -n)"},
      {"pair_bytes", "pair matrix: bytes of one bandwidth transfer between two workers"},
      {"schedule",
       "pair matrix: serial (one pair at a time, default) | rounds (disjoint pairs at once, "
       "2(n-1) steps: for many workers)"},
      {"seed", "Philox key of the payloads (default 42)"},
  };
}

Params preset_params(const std::string& preset) {
  Params p;
  p.set("op", "all");
  p.set("seed", "42");
  p.set("min_bytes", "8");
  p.set("schedule", "serial");
  if (preset == "tiny") {
    p.set("max_bytes", "64K");
    p.set("factor", "4");
    p.set("iters", "5");
    p.set("pair_bytes", "256K");
  } else if (preset == "small") {
    p.set("max_bytes", "1M");
    p.set("factor", "4");
    p.set("iters", "10");
    p.set("pair_bytes", "4M");
  } else if (preset == "seed") {
    p.set("max_bytes", "16M");
    p.set("factor", "2");
    p.set("iters", "20");
    p.set("pair_bytes", "64M");
  } else if (preset == "large") {
    p.set("max_bytes", "1G");
    p.set("factor", "2");
    p.set("iters", "20");
    p.set("pair_bytes", "256M");
  } else {
    throw UsageError(
        fmt::format("comms: unknown preset '{}' (known: tiny, small, seed, large)", preset));
  }
  return p;
}

Config parse(const Params& p) {
  Config c;
  const std::string op = p.has("op") ? p.str("op") : std::string("all-reduce");
  if (op == "pairs") {
    c.measure = Measure::pairs;
  } else if (const Collective* coll = find_collective(op)) {
    c.collective = coll;
  } else {
    throw UsageError(fmt::format("comms: parameter 'op' must be {} (got '{}')", op_help(), op));
  }
  c.min_bytes = bytes_key(p, "min_bytes", c.min_bytes);
  c.max_bytes = bytes_key(p, "max_bytes", c.max_bytes);
  if (c.max_bytes < c.min_bytes)
    throw UsageError(
        fmt::format("comms: max_bytes ({}) is below min_bytes ({})", c.max_bytes, c.min_bytes));
  if (p.has("factor")) {
    c.factor = p.i64("factor", 1);
    if (c.factor < 2)
      throw UsageError(
          fmt::format("comms: parameter 'factor' must be 2 or more (got '{}')", p.str("factor")));
  }
  if (p.has("iters")) {
    const std::int64_t it = p.i64("iters", 1);
    if (it > kMaxIters)
      throw UsageError(fmt::format("comms: parameter 'iters' must lie between 1 and {} (got '{}')",
                                   kMaxIters, p.str("iters")));
    c.iters = static_cast<int>(it);
  }
  c.pair_bytes = bytes_key(p, "pair_bytes", c.pair_bytes);
  if (c.pair_bytes < 4)
    throw UsageError(
        fmt::format("comms: parameter 'pair_bytes' must be at least 4 (one float32; got '{}')",
                    p.str("pair_bytes")));
  if (p.has("schedule")) {
    const std::string& s = p.str("schedule");
    if (s != "serial" && s != "rounds")
      throw UsageError(
          fmt::format("comms: parameter 'schedule' must be serial or rounds (got '{}')", s));
    c.schedule = s == "rounds" ? Schedule::rounds : Schedule::serial;
  }
  c.seed = p.has("seed") ? p.u64("seed") : 42;
  return c;
}

std::vector<Params> expand_params(const Params& p) {
  const std::string op = p.has("op") ? p.str("op") : std::string("all");
  {
    Params every = p;  // every key is checked, also those the variants below leave out
    every.set("op", "pairs");
    (void)parse(every);
  }
  std::vector<std::string> ops;
  if (op == "all") {
    for (const Collective* c : collectives()) ops.emplace_back(c->name);
    ops.emplace_back("pairs");
  } else {
    ops = {op};
  }
  std::vector<Params> out;
  for (const auto& o : ops) {
    Params v;
    const bool pairs = o == "pairs";
    for (const auto& [k, val] : p.items()) {
      const bool sweep_key = k == "min_bytes" || k == "max_bytes" || k == "factor";
      const bool pair_key = k == "pair_bytes" || k == "schedule";
      if ((pairs && sweep_key) || (!pairs && pair_key)) continue;  // the other measurement's
      v.set(k, val);
    }
    v.set("op", o);
    (void)parse(v);  // one clear line on the first bad value
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace sb::comms
