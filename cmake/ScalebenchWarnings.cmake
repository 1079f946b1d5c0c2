# Warning and sanitizer flags shared by every scalebench target (through sb_options).
add_library(sb_options INTERFACE)
target_compile_options(sb_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wpedantic>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra --expt-relaxed-constexpr>)
if(SCALEBENCH_SANITIZE)
  target_compile_options(sb_options INTERFACE
    $<$<COMPILE_LANGUAGE:CXX>:-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined>)
  target_link_options(sb_options INTERFACE -fsanitize=address,undefined)
endif()
