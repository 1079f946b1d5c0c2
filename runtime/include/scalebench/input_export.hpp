#pragma once
/// @file input_export.hpp
/// The exact inputs of a case, described for `scalebench datagen` (docs/datagen.md).
///
/// A workload's exporter (its Workload::export_inputs member, workload.hpp) turns a case's
/// complete parameters into an InputExport: the arrays its workers generate, each with a `fill`
/// function that produces any range of rows with the workload's own generators (the same bits the
/// workers see), plus the answer computed by scalebench's own CPU code when that is cheap.
/// Nothing is generated until `fill` or `answer` is called, so the size of an export is known
/// (InputExport::bytes) before any work is done. This header knows nothing of HDF5: the
/// launcher writes the file (launcher/datagen_command.cpp).
///
/// Example: the first row of subset-mean's matrix
/// @code
///   sb::InputExport e = sb::export_inputs("subset-mean", {params});
///   std::vector<double> row(e.arrays[0].shape[1]);
///   e.arrays[0].fill(0, 1, row.data());
/// @endcode

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scalebench/params.hpp"

namespace sb {

/// Element type of an exported array (little-endian on disk).
enum class InputDtype { i32, i64, f64 };

[[nodiscard]] constexpr std::int64_t dtype_size(InputDtype t) noexcept {
  return t == InputDtype::i32 ? 4 : 8;
}

/// One array of the inputs: 1-D or 2-D, row-major (C order, as NumPy reads it).
struct InputArray {
  std::string path;  ///< "x", "table/timestamp" (groups are created as needed)
  InputDtype dtype = InputDtype::f64;
  std::vector<std::int64_t> shape;  ///< {rows} or {rows, cols}
  /// Rows a `fill` call should cover at most to stay within a few tens of MiB of memory.
  std::int64_t rows_per_fill = 1;
  nlohmann::json attrs = nlohmann::json::object();  ///< scalar attributes (description, units)
  /// Writes rows [row0, row0 + rows) into `out` (rows * cols elements of `dtype`), using
  /// up to `threads` threads.
  std::function<void(std::int64_t row0, std::int64_t rows, void* out, int threads)> fill;

  [[nodiscard]] std::int64_t elements() const {
    std::int64_t e = 1;
    for (std::int64_t d : shape) e *= d;
    return e;
  }
  [[nodiscard]] std::int64_t bytes() const { return elements() * dtype_size(dtype); }
};

/// Everything `scalebench datagen` writes for one workload.
struct InputExport {
  std::string workload;
  /// The variants' complete parameters (groupby: one per query; the others: one).
  std::vector<Params> variants;
  /// Scalar attributes of the file root: seed, sizes, how to recompute the answer.
  nlohmann::json attrs = nlohmann::json::object();
  std::vector<InputArray> arrays;
  /// Small constant members written like the answer (groupby: table/name_dictionary).
  nlohmann::json constants = nlohmann::json::object();
  /// Bytes of the answer at most (a generous estimate, for the size limit).
  std::int64_t answer_bytes = 0;
  /// The answer by scalebench's CPU code, or null when it is not cheap. An object: scalars
  /// become attributes, arrays of numbers or strings 1-D datasets, objects groups.
  std::function<nlohmann::json(int threads)> answer;

  /// Bytes of every array plus the answer.
  [[nodiscard]] std::int64_t bytes() const {
    std::int64_t b = answer_bytes;
    for (const auto& a : arrays) b += a.bytes();
    return b;
  }
};

/// The export of the registered workload named `workload` for its expanded case parameters (as
/// plan_cases gives them; the variants must share their data parameters): its
/// Workload::export_inputs. Throws sb::UsageError for an unknown workload or one without an
/// exporter, and on bad parameters. Defined by scalebench (runtime/src/registry.cpp).
[[nodiscard]] InputExport export_inputs(const std::string& workload,
                                        const std::vector<Params>& variants);

}  // namespace sb
