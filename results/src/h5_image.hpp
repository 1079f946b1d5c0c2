#pragma once
/// @file h5_image.hpp
/// (private) HDF5 files built in memory and written to disk in one durable step: the report
/// writer and the history store. HDF5 never holds a file on disk, so a full disk or a folder
/// turned read-only fails in our own write() with its errno, and a reader never sees half a file.

#include <hdf5.h>

#include <functional>
#include <string>
#include <vector>

namespace sb::results::h5 {

/// The bytes of the HDF5 file (1.8 format, readable by every HDF5 >= 1.8) that `fill` writes
/// into `file`, checked to open again.
[[nodiscard]] std::vector<char> file_image(const std::function<void(hid_t file)>& fill);

/// Writes `bytes` to a new file `tmp`, fsyncs it and renames it over `target`, then fsyncs the
/// folder. On failure removes `tmp` and returns the step that failed and its errno; {"", 0}
/// on success.
struct WriteFailure {
  std::string step;
  int err = 0;
};
[[nodiscard]] WriteFailure write_durably(const std::string& tmp, const std::string& target,
                                         const std::vector<char>& bytes);

/// Writes `bytes` over the existing regular file `target` in place (no new folder entry: its
/// folder may be read-only), cut to their length and fsync'ed. Not atomic: for a last word in a
/// folder that can take no new file, where the file itself stays writable.
[[nodiscard]] WriteFailure write_in_place(const std::string& target,
                                          const std::vector<char>& bytes);

}  // namespace sb::results::h5
