#pragma once
/// @file error.hpp
/// One error family for scalebench. Every call into CUDA, NCCL, cuSOLVER, cuBLAS, MPI and HDF5 goes
/// through a SB_*_CHECK macro that throws sb::LibraryError carrying file:line, the call's text, the
/// library's own message, the host name and the MPI rank. Bad user input throws sb::UsageError
/// (exit code 2); an unusable environment throws sb::EnvironmentError (exit code 3).

#include <stdexcept>
#include <string>

namespace sb {

/// Exit codes of every scalebench program, all of them (docs/specification.md §7.7).
enum ExitCode : int {
  kExitOk = 0,
  kExitFailed = 1,        ///< a case failed validation, or `compare` found a regression
  kExitUsage = 2,         ///< bad usage or bad input file
  kExitEnvironment = 3,   ///< no MPI launcher, GPU path forced without a GPU, ...
  kExitIncomplete = 4,    ///< `compare`: no regression, but a baseline case is missing, or none
  kExitInconclusive = 5,  ///< `compare`: a case is noisy or inconclusive (--on-noisy warn)
  /// scalebench-rank to the launcher (rank_protocol.hpp): the scheduler ended the job on
  /// purpose (a case failed in a way that may leave workers stuck in collectives, or timed out).
  kExitRestart = 42,
  /// scalebench-rank to the launcher: the scheduler found the launcher gone (its lifeline
  /// broke) and ended the job, keeping every finished case in the record stream.
  kExitLauncherGone = 43,
  kExitSignalBase = 128,  ///< ended by signal n: 128 + n, as a shell reports it
};

/// The exit code of a program ended by signal `sig`: 128 + sig (130 for SIGINT).
[[nodiscard]] constexpr int exit_code_of_signal(int sig) noexcept {
  return kExitSignalBase + sig;
}

/// Base of every scalebench error. what() is one line meant for a person.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, int exit_code = kExitFailed)
      : std::runtime_error(message), exit_code_(exit_code) {}
  [[nodiscard]] int exit_code() const noexcept { return exit_code_; }

 private:
  int exit_code_;
};

/// Bad command line, bad parameter, unreadable input file: exit code 2.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(message, kExitUsage) {}
};

/// The machine cannot do what was asked (no mpiexec, no GPU for a forced GPU path): exit code 3.
class EnvironmentError : public Error {
 public:
  explicit EnvironmentError(const std::string& message) : Error(message, kExitEnvironment) {}
};

/// A failed library call. Carries where it happened and what the library said.
class LibraryError : public Error {
 public:
  LibraryError(const char* library, const char* call, const std::string& library_message,
               const char* file, int line);
  [[nodiscard]] const std::string& library() const noexcept { return library_; }
  [[nodiscard]] const std::string& call() const noexcept { return call_; }

 private:
  std::string library_;
  std::string call_;
};

/// Where this process is, for error messages: host name and MPI rank (-1 before MPI is up).
void set_error_rank(int rank) noexcept;
[[nodiscard]] std::string error_location();

namespace detail {
[[noreturn]] void throw_library_error(const char* library, const char* call,
                                      const std::string& message, const char* file, int line);
[[noreturn]] void throw_mpi_error(int code, const char* call, const char* file, int line);
[[noreturn]] void throw_hdf5_error(const char* call, const char* file, int line);
}  // namespace detail

}  // namespace sb

/// Throws sb::UsageError(message) unless cond holds (cudf's CUDF_EXPECTS, for user input).
#define SB_EXPECTS(cond, message)                 \
  do {                                            \
    if (!(cond)) throw ::sb::UsageError(message); \
  } while (0)

/// MPI calls: anything but MPI_SUCCESS throws sb::LibraryError (needs MPI_ERRORS_RETURN).
#define SB_MPI_CHECK(call)                                                                     \
  do {                                                                                         \
    const int sb_mpi_rc_ = (call);                                                             \
    if (sb_mpi_rc_ != 0) ::sb::detail::throw_mpi_error(sb_mpi_rc_, #call, __FILE__, __LINE__); \
  } while (0)

/// HDF5 calls returning herr_t or hid_t: a negative value throws sb::LibraryError with the
/// HDF5 error stack's innermost message.
#define SB_HDF5_CHECK(call)                                                       \
  ([&]() {                                                                        \
    auto sb_h5_rc_ = (call);                                                      \
    if (sb_h5_rc_ < 0) ::sb::detail::throw_hdf5_error(#call, __FILE__, __LINE__); \
    return sb_h5_rc_;                                                             \
  }())
