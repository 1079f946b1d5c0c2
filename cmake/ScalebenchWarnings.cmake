# Warning and sanitizer flags shared by every scalebench target (through sb_options).
add_library(sb_options INTERFACE)
target_compile_options(sb_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wpedantic>
  # GCC 12 reports false maybe-uninitialized positives inside nlohmann::json at -O3.
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wno-maybe-uninitialized>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra --expt-relaxed-constexpr>)
# Code against the MPI standard's C API only (no MPI C++ bindings from any implementation).
target_compile_definitions(sb_options INTERFACE OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
if(SCALEBENCH_SANITIZE)
  target_compile_options(sb_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
  target_link_options(sb_options INTERFACE -fsanitize=address,undefined)
endif()
