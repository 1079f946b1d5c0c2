#pragma once
/// @file blas_threads.hpp
/// Control of the BLAS library's own threads, so the svd CPU worker never oversubscribes its
/// cores: pool threads call BLAS single-threaded; lone large calls use all of the worker's threads.

namespace sb::svd {

/// Sets OpenBLAS's thread count when the BLAS is OpenBLAS; a no-op with other BLAS libraries.
void set_blas_threads(int threads) noexcept;

/// OpenBLAS's current thread count, or -1 when the BLAS is not OpenBLAS.
[[nodiscard]] int blas_threads() noexcept;

/// Sets the BLAS thread count for a scope and restores the previous one.
class ScopedBlasThreads {
 public:
  explicit ScopedBlasThreads(int threads) noexcept : previous_(blas_threads()) {
    set_blas_threads(threads);
  }
  ~ScopedBlasThreads() {
    if (previous_ > 0) set_blas_threads(previous_);
  }
  ScopedBlasThreads(const ScopedBlasThreads&) = delete;
  ScopedBlasThreads& operator=(const ScopedBlasThreads&) = delete;

 private:
  int previous_;
};

}  // namespace sb::svd
