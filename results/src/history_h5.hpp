#pragma once
/// @file history_h5.hpp
/// (private) History stores of earlier scalebench versions: one HDF5 file of flat tables
/// (history version 1, docs/history-schema.md). Read where a command names one; written only
/// by tests, to make a real old store for `history import`.

#include <string>

#include "scalebench/history.hpp"

namespace sb::results {

/// Reads an HDF5 store. Throws sb::UsageError when the file is missing or not a history store.
[[nodiscard]] HistoryStore read_history_h5(const std::string& path);
/// Writes an HDF5 store crash-safely (temporary file, fsync, rename), as earlier versions did.
void write_history_h5(const HistoryStore& store, const std::string& path);

}  // namespace sb::results
