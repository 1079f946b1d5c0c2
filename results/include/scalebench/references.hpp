#pragma once
/// @file references.hpp
/// Reference files: the expected median time of a case on a device model, with a tolerance
/// (TOML, docs/acceptance.md "Reference files"). scalebench ships measured ones
/// (examples/references/, installed in share/scalebench/references); users write their own,
/// or let `scalebench report --make-references RUN.h5` write one from a good run.
///
///   [[reference]]
///   model = "NVIDIA H200*"   # device model (GPU name or CPU model), a shell pattern
///   case = "subset-mean/single-gpu/chunk=10000,mu=10,n=100000,seed=42,sigma=1"
///   median_s = 0.02479       # expected median of the timed repeats, seconds
///   tolerance = 0.10         # slower than median_s * (1 + tolerance) is slow
///   source = "..."           # optional: where the figure comes from
///
/// `case` is workload/path/parameters (every parameter, sorted, as in case ids); a single-gpu
/// reference also judges each-gpu devices, an each-node reference each-node devices. A GPU's
/// link to its host (node acceptance's copy bandwidth) has `case = "link/host-to-device"` (or
/// `"link/device-to-host"`) and `bytes_per_s` (the expected bandwidth) instead of `median_s`:
/// slower than bytes_per_s * (1 - tolerance) is slow.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace sb::results {

struct Reference {
  std::string model;  ///< shell pattern (fnmatch) on the device model
  std::string workload;
  std::string path;    ///< "single-gpu", "each-node", ... as written
  std::string params;  ///< "k=v,k=v", sorted
  double median_s = 0;
  double bytes_per_s = 0;  ///< a link reference's expected bandwidth (workload "link"), else 0
  double tolerance = 0.1;
  std::string source;  ///< the entry's `source`, else empty
  std::string file;    ///< the file it was read from
};

struct ReferenceSet {
  std::vector<Reference> entries;
  std::vector<std::string> files;  ///< files read, in order
};

/// Reads one reference file and appends its entries to `set`. Throws sb::UsageError (one line,
/// FILE:LINE) for a file that cannot be read, bad TOML, an unknown key, a missing or bad value.
void read_references(const std::string& path, ReferenceSet& set);
/// The same from text (`name` names it in messages).
void read_references_text(const std::string& text, const std::string& name, ReferenceSet& set);

/// The reference path a record is judged against: single-gpu for single-gpu and each-gpu
/// records, each-node for each-node ones, the record's own path otherwise.
[[nodiscard]] std::string reference_path(const std::string& record_path);

/// The first entry of `set` for a record of `model`, `workload`, `path` and `params` (the
/// record's path; reference_path maps it); null when none. A link: workload "link", path
/// "host-to-device" or "device-to-host", params "".
[[nodiscard]] const Reference* find_reference(const ReferenceSet& set, const std::string& model,
                                              const std::string& workload, const std::string& path,
                                              const std::string& params);

/// A reference file from a run's ok device records (single-gpu, each-gpu, each-node): per
/// model and case the median of the devices' medians, with a tolerance of the larger of
/// `min_tolerance` and three times the devices' robust relative spread (1.4826 MAD / median);
/// and per GPU model and direction the median of its GPUs' host-link bandwidths
/// (/system/host_links), with a tolerance of the larger of 15% and that spread.
/// Throws sb::UsageError when the run has no such record.
[[nodiscard]] std::string make_references(const nlohmann::json& model, double min_tolerance,
                                          const std::string& report_name);

}  // namespace sb::results
