#pragma once
/// @file report_path.hpp
/// Where a run's report goes, checked before anything starts.
///
/// Default: `scalebench-reports/<host>-<UTC date>T<time>-<job id or pid>.h5` in the current
/// folder (created when missing), with `scalebench-reports/latest.h5` pointing at the newest.

#include <filesystem>
#include <string>

namespace sb {

/// The default report path for a run on `host` (job id of the batch system, or empty).
[[nodiscard]] std::filesystem::path default_report_path(const std::string& host,
                                                        const std::string& job_id);

/// Checks that a report can be written at `path` (sb::UsageError with one line otherwise): not
/// a folder, device, pipe or socket; a file name of at most 200 bytes and a path of at most
/// PATH_MAX - 64 (room for the work folder's files beside it); an existing, writable folder
/// (created first when `create_folder`). Returns the canonical path (canonical_file_path of
/// file_identity.hpp: `./x.h5`, `../d/x.h5`, a symlinked folder or a link to the file all give the
/// file's one path).
[[nodiscard]] std::filesystem::path check_report_path(const std::filesystem::path& path,
                                                      bool create_folder);

/// Points `<folder of report>/latest.h5` at `report` (a relative symlink, replaced atomically).
/// Best effort: nothing happens where symlinks cannot be made.
void link_latest(const std::filesystem::path& report) noexcept;

}  // namespace sb
