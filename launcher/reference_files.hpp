#pragma once
/// @file reference_files.hpp
/// The reference files a run judges its devices against (results/include/scalebench/
/// references.hpp, docs/acceptance.md): the user's (`run --references FILE`, repeatable, first
/// match wins) before the shipped ones, found in SCALEBENCH_REFERENCE_DIR, else the installed
/// <prefix>/share/scalebench/references, else the source tree's examples/references.

#include <string>
#include <vector>

#include "scalebench/references.hpp"

namespace sb {

/// The folder of the shipped reference files ("" when there is none).
[[nodiscard]] std::string shipped_reference_dir();

/// `files` in order, then every *.toml of shipped_reference_dir() in name order. Throws
/// sb::UsageError (one line) for a file that cannot be read or is not a reference file.
[[nodiscard]] results::ReferenceSet load_references(const std::vector<std::string>& files);

}  // namespace sb
