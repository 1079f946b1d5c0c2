#pragma once
/// @file routines.hpp
/// Which routines an svd repeat ran, from the workers to the case's result.
///
/// Every worker's finish_repeat() partial (the contract's std::vector<double>) carries its
/// engine's local_routine() (how it factored its rows: "householder", "sketch", "blocks",
/// "stack", "sketch+geqrf", ..., "none") and, on case rank 0, svd_routine() (the SVD of R:
/// "gram", "gesdd", "gesvdj", ...) and the singular values. The names travel as bytes, so a
/// routine an engine adds later needs no change here.
///
/// Layout: [L, c_1 .. c_L, K, d_1 .. d_K, s_1 .. s_k]: L bytes of local_routine (each byte a
/// double in 0..255), K bytes of svd_routine (K = 0 off the root), then the singular values
/// (the root only, descending).

#include <map>
#include <string>
#include <vector>

namespace sb::svd {

/// One worker's finish_repeat() partial, decoded.
struct FinishPartial {
  std::string local_routine;
  std::string svd_routine;    ///< empty off the root
  std::vector<double> sigma;  ///< empty off the root
};

/// The partial in the layout above.
[[nodiscard]] std::vector<double> encode_finish(const FinishPartial& p);

/// The partial of a TSQR engine (CpuTsqr, GpuTsqr) after its finish(): its local_routine(),
/// and on the root its svd_routine() and sigma().
template <class Engine>
[[nodiscard]] std::vector<double> encode_engine_finish(const Engine& engine) {
  FinishPartial p;
  p.local_routine = engine.local_routine();
  if (engine.root()) {
    p.svd_routine = engine.svd_routine();
    p.sigma = engine.sigma();
  }
  return encode_finish(p);
}

/// The inverse of encode_finish; throws sb::Error naming the fault on a malformed partial.
[[nodiscard]] FinishPartial decode_finish(const std::vector<double>& partial);

/// The case's local_routine from each worker's (key: case rank): case rank 0's value, followed,
/// when any worker differs, by the other distinct values in ascending case rank, joined with
/// "," ("sketch,none": rank 0 sketched and some worker owned no block). Empty without workers.
[[nodiscard]] std::string combine_local_routines(const std::map<int, std::string>& by_rank);

}  // namespace sb::svd
