#include "svd/blas_threads.hpp"

// OpenBLAS's extensions, declared weak: with another BLAS they are null and ignored.
extern "C" {
void openblas_set_num_threads(int) __attribute__((weak));
int openblas_get_num_threads() __attribute__((weak));
}

namespace sb::svd {

void set_blas_threads(int threads) noexcept {
  if (openblas_set_num_threads != nullptr) openblas_set_num_threads(threads < 1 ? 1 : threads);
}

int blas_threads() noexcept {
  return openblas_get_num_threads != nullptr ? openblas_get_num_threads() : -1;
}

}  // namespace sb::svd
