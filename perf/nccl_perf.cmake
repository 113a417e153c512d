# squeeze-nccl-perf: all-reduce and all-to-all under real NCCL, through the plugin or NCCL's
# Socket transport (perf/nccl/). Built when CUDA is on and NCCL's header and library are found
# (the CUDA toolkit's, or under $NCCL_HOME). libnccl is loaded at run time, so the same build
# also runs with PyTorch's bundled NCCL (--nccl-lib). Without a CUDA device it exits 77, which
# CTest reports as skipped.
if(SQUEEZE_HAVE_CUDA)
  find_path(SQUEEZE_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS} ENV NCCL_HOME PATH_SUFFIXES include)
  find_library(SQUEEZE_NCCL_LIBRARY NAMES nccl HINTS ${CUDAToolkit_LIBRARY_DIR} ENV NCCL_HOME PATH_SUFFIXES lib lib64)
endif()

if(SQUEEZE_HAVE_CUDA AND SQUEEZE_NCCL_INCLUDE_DIR AND SQUEEZE_NCCL_LIBRARY)
  file(GLOB SQUEEZE_NCCL_PERF_SRC CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/nccl/*.cc)
  # The emulator's input generator, comparison helpers and statistics reader, shared as sources.
  add_executable(squeeze-nccl-perf ${SQUEEZE_NCCL_PERF_SRC}
                 ${CMAKE_CURRENT_SOURCE_DIR}/collective/data.cc ${CMAKE_CURRENT_SOURCE_DIR}/collective/stats_file.cc)
  target_include_directories(squeeze-nccl-perf PRIVATE ${PROJECT_SOURCE_DIR})
  target_include_directories(squeeze-nccl-perf SYSTEM PRIVATE ${SQUEEZE_NCCL_INCLUDE_DIR})
  target_link_libraries(squeeze-nccl-perf PRIVATE squeeze_perf_checks squeeze_core nlohmann_json::nlohmann_json
                        CUDA::cudart_static squeeze_warnings Threads::Threads ${CMAKE_DL_LIBS})
  get_filename_component(SQUEEZE_NCCL_LIBRARY_REAL ${SQUEEZE_NCCL_LIBRARY} REALPATH)
  target_compile_definitions(squeeze-nccl-perf PRIVATE
    SQUEEZE_PLUGIN_PATH="$<TARGET_FILE:nccl-net-squeeze>"
    SQUEEZE_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    SQUEEZE_NCCL_LIBRARY="${SQUEEZE_NCCL_LIBRARY_REAL}")
  add_dependencies(squeeze-nccl-perf nccl-net-squeeze)
  install(TARGETS squeeze-nccl-perf RUNTIME DESTINATION bin)
  message(STATUS "Squeeze: squeeze-nccl-perf with ${SQUEEZE_NCCL_INCLUDE_DIR}/nccl.h (default library ${SQUEEZE_NCCL_LIBRARY_REAL})")

  if(SQUEEZE_BUILD_TESTS)
    # Real NCCL, two ranks on GPU 0: Socket baseline, raw and every codec, results checked.
    add_test(NAME squeeze_nccl_perf_sweep
             COMMAND squeeze-nccl-perf --sweep -b 1M -e 4M -n 5 -w 2 -c 1 --timeout 600)
    set_tests_properties(squeeze_nccl_perf_sweep PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900 LABELS gpu)
    # Its table read by a parser written for nccl-tests' output (perf/nccl_table.py).
    find_package(Python3 COMPONENTS Interpreter)
    if(Python3_Interpreter_FOUND)
      add_test(NAME perf_table.squeeze_nccl_perf
               COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tests/nccl_table_test.py tool 2
                       $<TARGET_FILE:squeeze-nccl-perf> -N 2 -b 64K -e 1M -f 4 -n 5 -w 2 -c 1 --timeout 300)
      set_tests_properties(perf_table.squeeze_nccl_perf PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 LABELS gpu)
    endif()
  endif()
else()
  message(STATUS "Squeeze: squeeze-nccl-perf not built (needs CUDA on, nccl.h and libnccl; set NCCL_HOME)")
endif()

# The host-side logic of squeeze-nccl-perf (bounds, checks, options, rows, run files): no GPU
# and no NCCL needed, so it is built and run everywhere.
if(SQUEEZE_BUILD_TESTS)
  find_package(GTest REQUIRED)
  include(GoogleTest)
  add_executable(squeeze_nccl_perf_tests ${CMAKE_CURRENT_SOURCE_DIR}/nccl/tests/nccl_perf_test.cc
                 ${CMAKE_CURRENT_SOURCE_DIR}/nccl/tests/stats_file_test.cc ${CMAKE_CURRENT_SOURCE_DIR}/collective/stats_file.cc
                 ${CMAKE_CURRENT_SOURCE_DIR}/nccl/options.cc
                 ${CMAKE_CURRENT_SOURCE_DIR}/nccl/paths.cc ${CMAKE_CURRENT_SOURCE_DIR}/nccl/report.cc
                 ${CMAKE_CURRENT_SOURCE_DIR}/nccl/run_files.cc ${CMAKE_CURRENT_SOURCE_DIR}/nccl/rank_env.cc
                 ${CMAKE_CURRENT_SOURCE_DIR}/collective/data.cc)
  target_include_directories(squeeze_nccl_perf_tests PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(squeeze_nccl_perf_tests PRIVATE squeeze_perf_checks squeeze_core nlohmann_json::nlohmann_json
                        squeeze_warnings GTest::gtest GTest::gtest_main Threads::Threads)
  find_package(Python3 COMPONENTS Interpreter)
  target_compile_definitions(squeeze_nccl_perf_tests PRIVATE
    SQUEEZE_PLUGIN_PATH="$<TARGET_FILE:nccl-net-squeeze>" SQUEEZE_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    SQUEEZE_NCCL_LIBRARY="" SQUEEZE_PYTHON3="${Python3_EXECUTABLE}")
  add_dependencies(squeeze_nccl_perf_tests nccl-net-squeeze)  # Paths.* looks for it beside the binary
  gtest_discover_tests(squeeze_nccl_perf_tests TEST_PREFIX "nccl_perf." DISCOVERY_TIMEOUT 120
                       PROPERTIES TIMEOUT 300 LABELS perf)
endif()

# The unmodified PyTorch scripts (perf/torch/): skipped (77) without torch or a CUDA device.
if(SQUEEZE_BUILD_TESTS)
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_Interpreter_FOUND)
    add_test(NAME squeeze_torch_collectives
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/torch/launch.sh --build ${PROJECT_BINARY_DIR} --python ${Python3_EXECUTABLE}
                     collectives)
    set_tests_properties(squeeze_torch_collectives PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 600 LABELS gpu)
    # The GPU proof's scripts where there is no GPU (perf/gpu/device_run.sh, perf/torch/,
    # perf/jax/): option handling, the runs they plan, their skips, the train summary, MPS.
    add_test(NAME gpu_scripts.launchers_plan_skip_and_summarise
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tests/gpu_scripts_test.sh ${Python3_EXECUTABLE})
    add_test(NAME gpu_scripts.device_run_mps_budget_and_outputs
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/tests/device_run_test.sh)
    set_tests_properties(gpu_scripts.launchers_plan_skip_and_summarise gpu_scripts.device_run_mps_budget_and_outputs
                         PROPERTIES TIMEOUT 180 LABELS perf)
    # The JAX script's logic on the CPU (gloo collectives, no NCCL): skipped (77) without jax.
    add_test(NAME jax_collectives_cpu
             COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/jax/launch.sh --python ${Python3_EXECUTABLE} --platform cpu
                     --timeout 120 -- --elements 4096)
    set_tests_properties(jax_collectives_cpu PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 180 LABELS perf)
  endif()
endif()
