#include "scalebench/error.hpp"

#include <mpi.h>
#include <unistd.h>

#include <H5Epublic.h>

#include <array>
#include <atomic>

#include <fmt/format.h>

namespace sb {
namespace {
std::atomic<int> g_rank{-1};

std::string host_name() {
  std::array<char, 256> buf{};
  if (gethostname(buf.data(), buf.size() - 1) != 0) return "unknown-host";
  return buf.data();
}
}  // namespace

void set_error_rank(int rank) noexcept {
  g_rank.store(rank);
}

std::string error_location() {
  const int r = g_rank.load();
  return r >= 0 ? fmt::format("host {}, rank {}", host_name(), r)
                : fmt::format("host {}", host_name());
}

LibraryError::LibraryError(const char* library, const char* call,
                           const std::string& library_message, const char* file, int line)
    : Error(fmt::format("{} error at {}:{}: {} failed: {} ({})", library, file, line, call,
                        library_message, error_location())),
      library_(library),
      call_(call) {}

namespace detail {

void throw_library_error(const char* library, const char* call, const std::string& message,
                         const char* file, int line) {
  throw LibraryError(library, call, message, file, line);
}

void throw_mpi_error(int code, const char* call, const char* file, int line) {
  std::array<char, MPI_MAX_ERROR_STRING> text{};
  int len = 0;
  if (MPI_Error_string(code, text.data(), &len) != MPI_SUCCESS) len = 0;
  throw LibraryError("MPI", call,
                     len > 0 ? std::string(text.data(), len) : fmt::format("code {}", code), file,
                     line);
}

namespace {
herr_t innermost_error(unsigned n, const H5E_error2_t* err, void* out) {
  auto* msg = static_cast<std::string*>(out);
  if (n == 0 && err != nullptr && err->desc != nullptr) *msg = err->desc;
  return 0;
}
}  // namespace

void throw_hdf5_error(const char* call, const char* file, int line) {
  std::string message = "unknown HDF5 error";
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, innermost_error, &message);
  H5Eclear2(H5E_DEFAULT);
  throw LibraryError("HDF5", call, message, file, line);
}

}  // namespace detail
}  // namespace sb
