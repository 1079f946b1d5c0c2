#include "report_path.hpp"

#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "console.hpp"
#include "scalebench/error.hpp"
#include "scalebench/file_identity.hpp"
#include "scalebench/job_plan.hpp"
#include "scalebench/utc_time.hpp"

namespace fs = std::filesystem;

namespace sb {
namespace {

constexpr std::size_t kMaxNameBytes = 200;  // NAME_MAX (255) less the work files' suffixes

std::string safe_component(const std::string& s) {
  std::string out;
  for (const char c : s)
    out +=
        (std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-') ? c : '_';
  return out.substr(0, 64);
}

}  // namespace

fs::path default_report_path(const std::string& host, const std::string& job_id) {
  const std::string stamp = utc_now();  // 2026-11-22T10:00:00.123Z
  std::string compact;
  for (char c : stamp.substr(0, 19))
    if (c != '-' && c != ':') compact.push_back(c);
  const std::string who =
      job_id.empty() ? fmt::format("p{}", ::getpid()) : "job" + safe_component(job_id);
  return fs::path("scalebench-reports") /
         fmt::format("{}-{}-{}.h5", safe_component(host.empty() ? "host" : host), compact, who);
}

fs::path check_report_path(const fs::path& path, bool create_folder) {
  const std::string shown = one_line(path.string());
  if (path.empty()) throw UsageError("--out: the report path is empty");
  if (path.filename().empty() || path.filename() == "." || path.filename() == "..")
    throw UsageError(fmt::format("--out {}: give a file name, e.g. run.h5", shown));
  if (path.filename().string().size() > kMaxNameBytes)
    throw UsageError(fmt::format("--out: the file name is {} bytes long; at most {} are allowed",
                                 path.filename().string().size(), kMaxNameBytes));
  const fs::path abs = fs::absolute(path);
  if (abs.string().size() > PATH_MAX - 64)
    throw UsageError(fmt::format("--out: the path is {} bytes long; at most {} are allowed",
                                 abs.string().size(), PATH_MAX - 64));
  std::error_code ec;
  const fs::file_status st = fs::status(abs, ec);
  if (fs::exists(st)) {
    if (fs::is_directory(st))
      throw UsageError(fmt::format("--out {} is a folder: give a file name inside it", shown));
    if (!fs::is_regular_file(st))
      throw UsageError(fmt::format(
          "--out {} is not a regular file (a device, pipe or socket): scalebench writes an HDF5 "
          "report there; give a file name such as run.h5",
          shown));
  }
  const fs::path dir = abs.parent_path();
  if (create_folder) fs::create_directories(dir, ec);
  if (!fs::is_directory(dir, ec))
    throw UsageError(fmt::format("cannot write report {}: folder {} does not exist", shown,
                                 one_line(dir.string())));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    throw UsageError(fmt::format("cannot write report {}: folder {} is not writable ({})", shown,
                                 one_line(dir.string()), std::strerror(errno)));
  // One spelling of the file (links, `.` and `..` resolved): the work folder goes beside the
  // file itself, and the one-writer check and `recover` find it whatever the path's text.
  return canonical_file_path(abs.string());
}

void link_latest(const fs::path& report) noexcept {
  try {
    const fs::path dir = report.parent_path();
    const fs::path link = dir / "latest.h5";
    if (report.filename() == link.filename()) return;
    std::error_code ec;
    if (fs::exists(fs::symlink_status(link, ec)) && !fs::is_symlink(fs::symlink_status(link, ec)))
      return;  // a real file of that name is the user's
    const fs::path tmp = dir / fmt::format(".latest.h5.{}", ::getpid());
    fs::remove(tmp, ec);
    fs::create_symlink(report.filename(), tmp, ec);
    if (!ec) fs::rename(tmp, link, ec);
    if (ec) fs::remove(tmp, ec);
  } catch (...) {
  }
}

}  // namespace sb
