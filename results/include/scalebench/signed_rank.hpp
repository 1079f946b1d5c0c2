#pragma once
/// @file signed_rank.hpp
/// The paired evidence of an A/B run (docs/ci.md, "The decision rule"): each round holds a turn
/// of each side, run one right after the other on the same machine, so the ratio of the two
/// turns' fastest-third means is one paired measurement of the change, whatever the load of
/// that moment. Their Hodges-Lehmann estimate (the median of the Walsh averages of the log
/// ratios) and its Wilcoxon signed-rank interval need no model of the noise: the side to go
/// first in a round is drawn at random, so for unchanged code each log ratio is as likely to be
/// positive as negative, and the interval's coverage holds exactly, however few the rounds.

#include <cstddef>
#include <span>
#include <vector>

#include "scalebench/bootstrap.hpp"

namespace sb::results {

/// Largest number of rounds whose signed-rank distribution is computed exactly (O(n^3) work);
/// beyond it the normal approximation is used (it is good to 1e-3 from 20 rounds on).
inline constexpr std::size_t kSignedRankExactLimit = 400;

/// P(T <= t) of the Wilcoxon signed-rank statistic T over n pairs under the null hypothesis
/// (exact up to kSignedRankExactLimit, normal with continuity correction above).
[[nodiscard]] double signed_rank_cdf(std::size_t n, double t);

/// The ratio current / baseline of the rounds' paired turns: `ratio` the Hodges-Lehmann
/// estimate, [low, high] its signed-rank interval at confidence `level` (infinite ends when
/// there are too few rounds for that level: 8 rounds reach 99.2% at most), `log_sd` the
/// interval's half-width in log space over the normal quantile. A round with a turn whose
/// fastest-third mean is not positive (no repeats left) is skipped; NaN without another round.
[[nodiscard]] RatioInterval paired_round_ratio(std::span<const std::vector<double>> baseline_rounds,
                                               std::span<const std::vector<double>> current_rounds,
                                               double level);

}  // namespace sb::results
