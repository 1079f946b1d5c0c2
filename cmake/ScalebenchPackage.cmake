# What `cmake --install` puts into a prefix: the two programs, the batch templates, the public
# headers of the workload API and the CMake package that plugins use (find_package(scalebench)
# gives scalebench::workload_api; docs/writing-a-workload.md), the man page, the shell
# completions and the documentation.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# A plugin is a MODULE library that resolves the API's functions against the program loading
# it, as extension modules of an interpreter do: both programs export their symbols and hold the
# whole runtime libraries, so every function of the public headers is there to resolve.
foreach(program scalebench scalebench-rank)
  set_target_properties(${program} PROPERTIES
    ENABLE_EXPORTS ON
    LINK_LIBRARY_OVERRIDE_sb_core WHOLE_ARCHIVE
    LINK_LIBRARY_OVERRIDE_sb_gpu_runtime WHOLE_ARCHIVE
    # an installed program finds the CUDA, MPI and HDF5 libraries it was linked with
    INSTALL_RPATH_USE_LINK_PATH ON)
endforeach()

file(STRINGS ${PROJECT_SOURCE_DIR}/runtime/include/scalebench/api_version.hpp sb_api_line
     REGEX "^#define SCALEBENCH_API_VERSION [0-9]+$")
string(REGEX REPLACE "^.* ([0-9]+)$" "\\1" SCALEBENCH_API_VERSION "${sb_api_line}")

# The public headers; the rest of runtime/include stays private to scalebench.
set(sb_public_headers api_version.hpp workload.hpp workload_registration.hpp input_export.hpp
    params.hpp exec_path.hpp repeat_rule.hpp error.hpp clock.hpp philox.hpp box_muller_tables.hpp)
if(SCALEBENCH_HAVE_CUDA)
  list(APPEND sb_public_headers gpu_context.cuh gpu_error.cuh philox.cuh box_muller_tables.cuh)
endif()
list(TRANSFORM sb_public_headers PREPEND ${PROJECT_SOURCE_DIR}/runtime/include/scalebench/)

# scalebench::workload_api: headers, definitions and the libraries the headers need. MPI is
# added by the package's config file (the C++ component there, which needs no C compiler).
add_library(sb_workload_api INTERFACE)
add_library(scalebench::workload_api ALIAS sb_workload_api)
set_target_properties(sb_workload_api PROPERTIES EXPORT_NAME workload_api)
target_include_directories(sb_workload_api INTERFACE
  $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/runtime/include>
  $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
target_compile_features(sb_workload_api INTERFACE cxx_std_20)
target_compile_definitions(sb_workload_api INTERFACE OMPI_SKIP_MPICXX=1 MPICH_SKIP_MPICXX=1)
target_link_libraries(sb_workload_api INTERFACE $<BUILD_INTERFACE:MPI::MPI_C>
  nlohmann_json::nlohmann_json fmt::fmt Random123::Random123 OpenMP::OpenMP_CXX)
if(SCALEBENCH_HAVE_CUDA)
  target_compile_definitions(sb_workload_api INTERFACE SCALEBENCH_HAVE_CUDA=1)
  target_link_libraries(sb_workload_api INTERFACE CUDA::cudart CUDA::cublas CUDA::cusolver
                        CUDA::curand NCCL::nccl)
endif()

set(sb_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/scalebench)
install(TARGETS scalebench scalebench-rank RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# The man page and the bash and zsh completions, written by the built program from its option
# definitions (`scalebench completion man|bash|zsh`), and the documentation the help texts name
# (docs/*.md, README.md).
set(sb_cli_dir ${PROJECT_BINARY_DIR}/cli-reference)
set(sb_cli_files ${sb_cli_dir}/scalebench.1 ${sb_cli_dir}/scalebench.bash ${sb_cli_dir}/_scalebench)
add_custom_command(OUTPUT ${sb_cli_files}
  COMMAND ${CMAKE_COMMAND} -DSCALEBENCH=$<TARGET_FILE:scalebench> -DOUT=${sb_cli_dir}
          -P ${PROJECT_SOURCE_DIR}/cmake/ScalebenchCliReference.cmake
  DEPENDS scalebench ${PROJECT_SOURCE_DIR}/cmake/ScalebenchCliReference.cmake
  COMMENT "man page and shell completions from scalebench's option definitions")
add_custom_target(sb_cli_reference ALL DEPENDS ${sb_cli_files})
install(FILES ${sb_cli_dir}/scalebench.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES ${sb_cli_dir}/scalebench.bash
        DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME scalebench)
install(FILES ${sb_cli_dir}/_scalebench DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/site-functions)
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs
        FILES_MATCHING PATTERN "*.md")
install(DIRECTORY ${PROJECT_SOURCE_DIR}/slurm/ DESTINATION ${CMAKE_INSTALL_DATADIR}/scalebench/slurm)
install(FILES ${sb_public_headers} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/scalebench)
install(TARGETS sb_workload_api EXPORT scalebench-targets)
install(EXPORT scalebench-targets NAMESPACE scalebench:: DESTINATION ${sb_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/scalebench-config.cmake.in
  ${PROJECT_BINARY_DIR}/package/scalebench-config.cmake
  INSTALL_DESTINATION ${sb_cmake_dir}
  PATH_VARS CMAKE_INSTALL_BINDIR)
# The package version is scalebench's; plugins are matched on the API version at load time.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/package/scalebench-config-version.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/package/scalebench-config.cmake
              ${PROJECT_BINARY_DIR}/package/scalebench-config-version.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FindRandom123.cmake
              ${PROJECT_SOURCE_DIR}/cmake/FindNCCL.cmake
        DESTINATION ${sb_cmake_dir})
