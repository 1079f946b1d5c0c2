# Warning and sanitizer flags shared by every scalebench target (through sb_options).
add_library(sb_options INTERFACE)
target_compile_options(sb_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wpedantic>
  # GCC 12 reports false maybe-uninitialized positives inside nlohmann::json at -O3.
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wno-maybe-uninitialized>
  # GCC 12 also reports impossible -Wrestrict overlaps in std::string concatenation (GCC bug
  # 105329; inside libstdc++'s char_traits, never in our code).
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Wno-restrict>
  $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<CXX_COMPILER_ID:GNU>,$<VERSION_LESS:$<CXX_COMPILER_VERSION>,13>>:-Xcompiler=-Wno-restrict>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wshadow --expt-relaxed-constexpr>)
# Code against the MPI standard's C API only (no MPI C++ bindings from any implementation).
target_compile_definitions(sb_options INTERFACE OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
if(SCALEBENCH_SANITIZE)
  target_compile_options(sb_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
  target_link_options(sb_options INTERFACE -fsanitize=address,undefined)
endif()

# Fuzzing (tools/fuzz): clang only; every target gets libFuzzer's coverage instrumentation and
# AddressSanitizer + UBSan, the fuzz programs link -fsanitize=fuzzer (cmake/ScalebenchFuzz.cmake).
option(SCALEBENCH_FUZZ "Build libFuzzer targets (clang only; see tools/fuzz)" OFF)
if(SCALEBENCH_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "SCALEBENCH_FUZZ=ON needs clang (CXX=clang++), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  target_compile_options(sb_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined -g>)
  target_link_options(sb_options INTERFACE -fsanitize=address,undefined)
endif()
