// Which file a path names, whatever its spelling (file_identity.hpp).
#include "scalebench/file_identity.hpp"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <memory>

namespace sb {
namespace {

namespace fs = std::filesystem;

/// realpath(3) of an existing path; "" when it cannot be resolved.
std::string real_path(const std::string& p) {
  const std::unique_ptr<char, void (*)(void*)> r(::realpath(p.c_str(), nullptr), std::free);
  return r ? std::string(r.get()) : std::string();
}

/// `path` with a symbolic link in its last part followed (relative targets from its folder),
/// up to 40 links as the kernel does; "" when they loop.
std::string follow_last_link(std::string path) {
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
    std::string target(static_cast<std::size_t>(PATH_MAX), '\0');
    const ssize_t n = ::readlink(path.c_str(), target.data(), target.size());
    if (n < 0) return path;
    target.resize(static_cast<std::size_t>(n));
    const fs::path t(target);
    path = t.is_absolute() ? target : (fs::path(path).parent_path() / t).string();
  }
  return {};
}

}  // namespace

std::optional<FileIdentity> file_identity(const std::string& path) {
  if (path.empty()) return std::nullopt;
  std::error_code ec;
  const std::string followed = follow_last_link(fs::absolute(path, ec).string());
  if (followed.empty()) return std::nullopt;
  const fs::path p(followed);
  const std::string dir = real_path(p.parent_path().empty() ? "/" : p.parent_path().string());
  if (dir.empty()) return std::nullopt;
  FileIdentity id;
  id.name = p.filename().string();
  id.canonical = (fs::path(dir) / id.name).string();
  struct stat ds {};
  if (::stat(dir.c_str(), &ds) != 0) return std::nullopt;
  id.dir_dev = ds.st_dev;
  id.dir_ino = ds.st_ino;
  struct stat fst {};
  if (::stat(id.canonical.c_str(), &fst) == 0) {
    id.exists = true;
    id.dev = fst.st_dev;
    id.ino = fst.st_ino;
  }
  return id;
}

bool same_file(const FileIdentity& a, const FileIdentity& b) {
  if (a.exists && b.exists) return a.dev == b.dev && a.ino == b.ino;
  return a.dir_dev == b.dir_dev && a.dir_ino == b.dir_ino && a.name == b.name;
}

bool same_file(const std::string& a, const std::string& b) {
  const auto ia = file_identity(a);
  const auto ib = file_identity(b);
  return ia && ib && same_file(*ia, *ib);
}

std::string canonical_file_path(const std::string& path) {
  if (const auto id = file_identity(path)) return id->canonical;
  std::error_code ec;
  return fs::absolute(path, ec).lexically_normal().string();
}

}  // namespace sb
