/// cuBLAS and cuSOLVER load when first needed, not at program start (gpu_math_library.hpp):
/// the rank program does not link them, the first call loads them, and a missing entry point is
/// a typed error naming it. No GPU is needed: the version queries run without one.

#include <cublas_v2.h>
#include <cusolverDn.h>
#include <gtest/gtest.h>
#include <link.h>

#include <array>
#include <cstdio>
#include <memory>
#include <string>

#include "gpu/gpu_math_library.hpp"
#include "scalebench/error.hpp"

namespace {

/// Whether a shared object whose file name contains `part` is loaded in this process.
bool loaded(const char* part) {
  struct Search {
    const char* part;
    bool found;
  } s{part, false};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto* search = static_cast<Search*>(data);
        if (info->dlpi_name != nullptr &&
            std::string(info->dlpi_name).find(search->part) != std::string::npos)
          search->found = true;
        return 0;
      },
      &s);
  return s.found;
}

std::string command_output(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> p(popen(command.c_str(), "r"), pclose);
  std::string out;
  if (!p) return out;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p.get())) > 0) out.append(buf.data(), n);
  return out;
}

TEST(GpuMathLibrary, TheRankProgramDoesNotLinkThem) {
  const std::string dynamic = command_output(std::string("readelf -d '") + SB_RANK_EXE + "'");
  ASSERT_NE(dynamic.find("(NEEDED)"), std::string::npos) << dynamic;
  EXPECT_NE(dynamic.find("libcudart"), std::string::npos) << dynamic;
  EXPECT_EQ(dynamic.find("libcublas"), std::string::npos) << dynamic;
  EXPECT_EQ(dynamic.find("libcusolver"), std::string::npos) << dynamic;
}

/// The load tests need a process where nothing has called the libraries yet: CTest runs each
/// test alone; a run of the whole program skips the second one.
bool loaded_by_an_earlier_test() {
  static bool fresh = true;
  const bool earlier = !fresh;
  fresh = false;
  return earlier;
}

TEST(GpuMathLibrary, TheFirstCallLoadsTheLibrary) {
  if (loaded_by_an_earlier_test()) GTEST_SKIP() << "needs a process of its own";
  ASSERT_FALSE(loaded("libcublas")) << "cuBLAS was loaded at start";
  ASSERT_FALSE(loaded("libcusolver")) << "cuSOLVER was loaded at start";
  int major = -1;
  ASSERT_EQ(cublasGetProperty(MAJOR_VERSION, &major), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(major, CUBLAS_VER_MAJOR);
  EXPECT_TRUE(loaded("libcublas"));
  EXPECT_FALSE(loaded("libcusolver"));
  major = -1;
  ASSERT_EQ(cusolverGetProperty(MAJOR_VERSION, &major), CUSOLVER_STATUS_SUCCESS);
  EXPECT_EQ(major, CUSOLVER_VER_MAJOR);
  EXPECT_TRUE(loaded("libcusolver"));
}

TEST(GpuMathLibrary, LoadingAheadLoadsBothOnceForEveryCaller) {
  if (loaded_by_an_earlier_test()) GTEST_SKIP() << "needs a process of its own";
  ASSERT_FALSE(loaded("libcublas")) << "cuBLAS was loaded at start";
  ASSERT_FALSE(loaded("libcusolver")) << "cuSOLVER was loaded at start";
  (void)sb::detail::load_gpu_math_libraries();
  EXPECT_TRUE(loaded("libcublas"));
  EXPECT_TRUE(loaded("libcusolver"));
  void* cublas = sb::detail::gpu_math_library(sb::detail::GpuMathLibrary::cublas);
  void* cusolver = sb::detail::gpu_math_library(sb::detail::GpuMathLibrary::cusolver);
  ASSERT_NE(cublas, nullptr);
  ASSERT_NE(cusolver, nullptr);
  (void)sb::detail::load_gpu_math_libraries();
  EXPECT_EQ(sb::detail::gpu_math_library(sb::detail::GpuMathLibrary::cublas), cublas);
  EXPECT_EQ(sb::detail::gpu_math_library(sb::detail::GpuMathLibrary::cusolver), cusolver);
}

TEST(GpuMathLibrary, AMissingEntryPointIsATypedErrorNamingIt) {
  try {
    (void)sb::detail::gpu_math_symbol(sb::detail::GpuMathLibrary::cusolver,
                                      "cusolverDnNoSuchFunction");
    FAIL() << "no error";
  } catch (const sb::LibraryError& e) {
    EXPECT_EQ(e.library(), "cuSOLVER");
    EXPECT_EQ(e.call(), "dlsym");
    EXPECT_NE(std::string(e.what()).find("cusolverDnNoSuchFunction"), std::string::npos)
        << e.what();
  }
}

}  // namespace
