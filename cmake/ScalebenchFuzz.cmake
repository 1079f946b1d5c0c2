# Fuzz targets: sb_add_fuzz_target(NAME SOURCE) defines
#   fuzz_<NAME>_replay  (every build): SOURCE + tests/fuzz/replay_main.cpp, CTest test
#                       fuzz.<NAME> replaying tests/fuzz/corpus/<NAME>/ (label fuzz);
#   fuzz_<NAME>         (SCALEBENCH_FUZZ=ON, clang only): a libFuzzer program (tools/fuzz runs it).
# SCALEBENCH_FUZZ itself (option and instrumentation flags) lives in ScalebenchWarnings.cmake.
function(sb_add_fuzz_target name source)
  set(dir ${CMAKE_CURRENT_SOURCE_DIR})
  add_executable(fuzz_${name}_replay ${dir}/${source} ${dir}/replay_main.cpp)
  target_link_libraries(fuzz_${name}_replay PRIVATE sb_launcher sb_results sb_core)
  add_test(NAME fuzz.${name} COMMAND fuzz_${name}_replay ${dir}/corpus/${name})
  set_tests_properties(fuzz.${name} PROPERTIES LABELS fuzz TIMEOUT 300)
  if(SCALEBENCH_FUZZ)
    add_executable(fuzz_${name} ${dir}/${source})
    target_link_libraries(fuzz_${name} PRIVATE sb_launcher sb_results sb_core)
    target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
    set_target_properties(fuzz_${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/fuzz)
  endif()
endfunction()
