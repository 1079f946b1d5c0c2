#pragma once
/// @file file_identity.hpp
/// Which file a path names, whatever its spelling: `x.h5`, `./x.h5`, `../d/x.h5`, a path through
/// a symlinked folder, a symlink to the file, a bind mount or a hard link all name the same
/// file. Used wherever two paths must not be the same file: the one writer of a report
/// (run_folder.hpp), an output that would overwrite an input (`--out`), a killed run's report
/// (`recover`, `--resume`).

#include <sys/types.h>

#include <optional>
#include <string>

namespace sb {

struct FileIdentity {
  bool exists = false;  ///< the file exists (dev/ino are the file's)
  dev_t dev = 0;        ///< the file's device and inode, when it exists
  ino_t ino = 0;
  dev_t dir_dev = 0;  ///< its folder's device and inode
  ino_t dir_ino = 0;
  std::string name;       ///< its name in that folder (symbolic links followed)
  std::string canonical;  ///< the canonical folder (symbolic links resolved) / name
};

/// The identity of `path`, symbolic links followed (also a dangling one: the file it would
/// create); nullopt when its folder does not exist (or a link loops).
[[nodiscard]] std::optional<FileIdentity> file_identity(const std::string& path);

/// Whether two identities name the same file: the same device and inode when both exist, else
/// the same name in the same folder.
[[nodiscard]] bool same_file(const FileIdentity& a, const FileIdentity& b);

/// Whether the paths `a` and `b` name the same file (false when either cannot be resolved).
[[nodiscard]] bool same_file(const std::string& a, const std::string& b);

/// `path` with its folder resolved (symbolic links, `.`, `..`) and a symbolic link in its last
/// part followed: the one spelling of the file that run folders and owner files record. `path`
/// itself (made absolute) when its folder does not exist.
[[nodiscard]] std::string canonical_file_path(const std::string& path);

}  // namespace sb
