#pragma once
/// @file neumaier.hpp
/// Neumaier's compensated sum in the order given: how the scheduler folds subset-mean's task
/// partials (task order), shared by the scheduler side and datagen's answer.

#include <cmath>
#include <vector>

namespace sb::subset_mean {

inline double neumaier_sum(const std::vector<double>& x) {
  double s = 0;
  double c = 0;
  for (double v : x) {
    const double t = s + v;
    c += (std::fabs(s) >= std::fabs(v)) ? (s - t) + v : (v - t) + s;
    s = t;
  }
  return s + c;
}

}  // namespace sb::subset_mean
