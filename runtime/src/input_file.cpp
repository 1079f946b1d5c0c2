// Input files are regular files, refused without blocking otherwise (input_file.hpp).
#include "scalebench/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "scalebench/error.hpp"
#include "scalebench/printable.hpp"

namespace sb {
namespace {

const char* kind_of(mode_t m) {
  if (S_ISDIR(m)) return "a folder";
  if (S_ISFIFO(m)) return "a FIFO (named pipe)";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "not a regular file";
}

[[noreturn]] void refuse(const std::string& path, std::string_view what, mode_t m) {
  throw UsageError(fmt::format("{} {}: is {}, not a file: give a regular file", what,
                               one_line(path), kind_of(m)));
}

}  // namespace

void check_regular_input(const std::string& path, std::string_view what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return;  // missing: the caller's own message
  if (!S_ISREG(st.st_mode)) refuse(path, what, st.st_mode);
}

std::string read_input_file(const std::string& path, std::string_view what, std::size_t max_bytes) {
  check_regular_input(path, what);
  // O_NONBLOCK: a FIFO put in the file's place after the check does not block the open.
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0)
    throw UsageError(
        fmt::format("cannot read {} {}: {}", what, one_line(path), std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    refuse(path, what, st.st_mode);
  }
  if (static_cast<std::size_t>(st.st_size) > max_bytes) {
    ::close(fd);
    throw UsageError(fmt::format("{} {}: is {} bytes; at most {} are read", what, one_line(path),
                                 st.st_size, max_bytes));
  }
  std::string text;
  char buf[1 << 16];
  while (true) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      throw UsageError(
          fmt::format("cannot read {} {}: {}", what, one_line(path), std::strerror(err)));
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) {  // it grew while read
      ::close(fd);
      throw UsageError(
          fmt::format("{} {}: is more than {} bytes", what, one_line(path), max_bytes));
    }
  }
  ::close(fd);
  return text;
}

}  // namespace sb
