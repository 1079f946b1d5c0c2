// tiled-dgemm's parameters (config.hpp).
#include "config.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "scalebench/error.hpp"

namespace tiled_dgemm {

Config parse(const sb::Params& p) {
  Config c;
  c.m = p.i64("m");
  c.n = p.i64("n");
  c.k = p.i64("k");
  c.tile = p.i64("tile");
  c.seed = p.u64("seed");
  constexpr std::int64_t kMaxSide = std::numeric_limits<int>::max();  // GPU grid and loops
  auto check_side = [&](const char* key, std::int64_t v) {
    SB_EXPECTS(v <= kMaxSide, fmt::format("tiled-dgemm: {} = {} is above {}", key, v, kMaxSide));
  };
  check_side("m", c.m);
  check_side("n", c.n);
  check_side("k", c.k);
  SB_EXPECTS(c.tile <= c.m, fmt::format("tiled-dgemm: tile = {} is above m = {}", c.tile, c.m));
  SB_EXPECTS(c.tile * c.n <= (std::int64_t{1} << 31),
             "tiled-dgemm: a panel (tile x n) must hold at most 2^31 entries");
  return c;
}

sb::Params weak_scale(const sb::Params& p, double factor) {
  // The tasks are panels of C's rows: more rows (m, to whole tiles) give each node as many.
  const Config c = parse(p);
  const auto tiles = std::max<std::int64_t>(
      1, std::llround(static_cast<double>(c.m) * factor / static_cast<double>(c.tile)));
  sb::Params out = p;
  out.set("m", std::to_string(tiles * c.tile));
  (void)parse(out);
  return out;
}

sb::Params preset(const std::string& name) {
  struct Row {
    const char* name;
    const char* m;
    const char* n;
    const char* k;
    const char* tile;
  };
  // 2 m n k flop: 67 M, 4.3 G, 17 G, 550 G.
  static constexpr Row kPresets[] = {{"tiny", "512", "256", "256", "64"},
                                     {"small", "2048", "1024", "1024", "128"},
                                     {"seed", "8192", "1024", "1024", "256"},
                                     {"large", "65536", "2048", "2048", "1024"}};
  for (const Row& r : kPresets) {
    if (name != r.name) continue;
    sb::Params p;
    p.set("m", r.m);
    p.set("n", r.n);
    p.set("k", r.k);
    p.set("tile", r.tile);
    p.set("seed", "42");
    return p;
  }
  throw sb::UsageError(
      fmt::format("tiled-dgemm: unknown preset '{}' (known: tiny, small, seed, large)", name));
}

}  // namespace tiled_dgemm
