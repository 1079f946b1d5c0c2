# Writes the man page and the bash and zsh completions with the built program (cmake -P): they are
# made from its option definitions (launcher/cli_reference.hpp), so they never drift from them.
#   cmake -DSCALEBENCH=path/to/scalebench -DOUT=folder -P ScalebenchCliReference.cmake
file(MAKE_DIRECTORY ${OUT})
foreach(pair "man;scalebench.1" "bash;scalebench.bash" "zsh;_scalebench")
  list(GET pair 0 what)
  list(GET pair 1 name)
  execute_process(COMMAND ${SCALEBENCH} completion ${what} OUTPUT_FILE ${OUT}/${name}.tmp
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "scalebench completion ${what} failed (${rc})")
  endif()
  file(RENAME ${OUT}/${name}.tmp ${OUT}/${name})
endforeach()
