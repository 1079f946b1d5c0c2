#include "scalebench/change_points.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <queue>
#include <vector>

namespace sb::results {
namespace {

double median_of(std::vector<double> v) {
  const std::size_t m = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(m), v.end());
  const double hi = v[m];
  if (v.size() % 2 == 1) return hi;
  return 0.5 * (hi + *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(m)));
}

/// Robust noise of a series: the MAD of its successive differences (a step moves one of them).
double noise_of(const std::vector<double>& x) {
  std::vector<double> d;
  for (std::size_t i = 1; i < x.size(); ++i) d.push_back(x[i] - x[i - 1]);
  const double md = median_of(d);
  for (auto& v : d) v = std::abs(v - md);
  return 1.4826 * median_of(d) / std::sqrt(2.0);
}

/// L1 misfit around the median of a growing set, kept in two heaps: O(log n) per value.
class MedianCost {
 public:
  void add(double v) {
    if (low_.empty() || v <= low_.top()) {
      low_.push(v);
      low_sum_ += v;
    } else {
      high_.push(v);
      high_sum_ += v;
    }
    if (low_.size() > high_.size() + 1) {
      move(low_, low_sum_, high_, high_sum_);
    } else if (high_.size() > low_.size()) {
      move(high_, high_sum_, low_, low_sum_);
    }
  }
  /// Sum of |v - median|: the upper half's sum minus the lower half's (the middle value of an
  /// odd count contributes nothing).
  [[nodiscard]] double cost() const {
    const double mid = low_.size() > high_.size() ? low_.top() : 0.0;
    return high_sum_ - (low_sum_ - mid);
  }

 private:
  template <class From, class To>
  static void move(From& from, double& from_sum, To& to, double& to_sum) {
    const double v = from.top();
    from.pop();
    from_sum -= v;
    to.push(v);
    to_sum += v;
  }
  std::priority_queue<double> low_;                                        // max-heap
  std::priority_queue<double, std::vector<double>, std::greater<>> high_;  // min-heap
  double low_sum_ = 0.0;
  double high_sum_ = 0.0;
};

/// Starts of the levels of the optimal partition of z (first level starts at 0, not listed).
std::vector<std::size_t> optimal_partition(const std::vector<double>& z, double beta,
                                           std::size_t min_seg) {
  const std::size_t n = z.size();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  std::vector<double> best(n + 1, kInf);
  std::vector<std::size_t> from(n + 1, 0);
  best[0] = -beta;
  for (std::size_t j = min_seg; j <= n; ++j) {
    MedianCost seg;  // level [i, j), grown leftwards
    for (std::size_t i = j; i-- > 0;) {
      seg.add(z[i]);
      if (j - i < min_seg || best[i] == kInf) continue;
      const double v = best[i] + beta + seg.cost();
      if (v < best[j]) {
        best[j] = v;
        from[j] = i;
      }
    }
  }
  std::vector<std::size_t> starts;
  for (std::size_t j = n; j > 0 && best[j] != kInf;) {
    const std::size_t i = from[j];
    if (i > 0) starts.push_back(i);
    j = i;
  }
  std::reverse(starts.begin(), starts.end());
  return starts;
}

}  // namespace

std::vector<ChangePoint> detect_change_points(std::span<const double> values,
                                              const ChangePointOptions& o) {
  const std::size_t n = values.size();
  const std::size_t min_seg = std::max<std::size_t>(1, o.min_segment);
  if (n < 2 * min_seg || n < 3) return {};
  std::vector<double> x;
  for (double v : values) {
    if (!(v > 0) || !std::isfinite(v)) return {};
    x.push_back(std::log(v));
  }
  const double sigma = std::max(o.min_noise, noise_of(x));
  std::vector<double> z;
  for (double v : x) z.push_back(v / sigma);
  const std::vector<std::size_t> starts =
      optimal_partition(z, o.penalty * std::log(static_cast<double>(n)), min_seg);

  std::vector<std::size_t> bounds{0};
  bounds.insert(bounds.end(), starts.begin(), starts.end());
  bounds.push_back(n);
  const auto level = [&](std::size_t k) {
    return median_of(
        std::vector<double>(values.begin() + static_cast<std::ptrdiff_t>(bounds[k]),
                            values.begin() + static_cast<std::ptrdiff_t>(bounds[k + 1])));
  };
  std::vector<double> levels;
  for (std::size_t k = 0; k + 1 < bounds.size(); ++k) levels.push_back(level(k));
  // Steps under min_change are merged, the smallest first: a short series' noise estimate can
  // be far below its run-to-run noise (tests/gate/gate.sh history, test_change_points.cpp).
  while (levels.size() > 1) {
    std::size_t smallest = 0;
    double smallest_change = std::numeric_limits<double>::infinity();
    for (std::size_t k = 1; k < levels.size(); ++k) {
      const double change = std::abs(levels[k] / levels[k - 1] - 1.0);
      if (change < smallest_change) {
        smallest_change = change;
        smallest = k;
      }
    }
    if (!(smallest_change < o.min_change)) break;
    bounds.erase(bounds.begin() + static_cast<std::ptrdiff_t>(smallest));
    levels.erase(levels.begin() + static_cast<std::ptrdiff_t>(smallest));
    levels[smallest - 1] = level(smallest - 1);
  }
  std::vector<ChangePoint> out;
  for (std::size_t k = 1; k < levels.size(); ++k) {
    ChangePoint c;
    c.index = bounds[k];
    c.before = levels[k - 1];
    c.after = levels[k];
    c.change = c.after / c.before - 1.0;
    out.push_back(c);
  }
  return out;
}

}  // namespace sb::results
