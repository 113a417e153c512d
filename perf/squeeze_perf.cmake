# squeeze-perf: the collective emulator (ring all-reduce and all-to-all through the plugin).
# Several sources, so not squeeze_perf_tool(); the same settings by hand.
file(GLOB SQUEEZE_PERF_COLLECTIVE_SRC CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/collective/*.cc)
list(REMOVE_ITEM SQUEEZE_PERF_COLLECTIVE_SRC ${SQUEEZE_PERF_PROXY_SRC})
add_executable(squeeze-perf ${CMAKE_CURRENT_SOURCE_DIR}/squeeze_perf.cc ${SQUEEZE_PERF_COLLECTIVE_SRC})
target_include_directories(squeeze-perf PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(squeeze-perf PRIVATE squeeze_perf_proxy squeeze_perf_checks squeeze_core nlohmann_json::nlohmann_json
                      squeeze_warnings Threads::Threads ${CMAKE_DL_LIBS})
target_compile_definitions(squeeze-perf PRIVATE SQUEEZE_PLUGIN_PATH="$<TARGET_FILE:nccl-net-squeeze>")
add_dependencies(squeeze-perf nccl-net-squeeze)
install(TARGETS squeeze-perf RUNTIME DESTINATION bin)

# Its table read by a parser written for nccl-tests' output (perf/nccl_table.py), and the
# parser on nccl-tests' own format.
if(SQUEEZE_BUILD_TESTS)
  find_package(Python3 COMPONENTS Interpreter)
  if(Python3_Interpreter_FOUND)
    add_test(NAME perf_table.nccl_tests_format
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tests/nccl_table_test.py sample)
    add_test(NAME perf_table.squeeze_perf
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tests/nccl_table_test.py tool 3
                     $<TARGET_FILE:squeeze-perf> -N 3 -b 64K -e 1M -f 4 -n 2 -w 1 -c 1 --timeout 60)
    # --route collnet: 4 ranks on the collective network, quantize judged by its stated bound
    # (-c 1), side by side with the raw ring (SQUEEZE_BYPASS=off: coding never pays on loopback).
    add_test(NAME perf_table.squeeze_perf_collnet
             COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/tests/nccl_table_test.py tool 4
                     $<TARGET_FILE:squeeze-perf> -N 4 -b 256K -e 1M -f 4 -n 2 -w 1 -c 1 --timeout 60
                     --collective allreduce --route collnet
                     --policy ${CMAKE_CURRENT_SOURCE_DIR}/collective/policies/collnet-quantize.json
                     --baseline ${PROJECT_SOURCE_DIR}/config/off.json --baseline-route ring)
    set_tests_properties(perf_table.squeeze_perf_collnet PROPERTIES ENVIRONMENT "SQUEEZE_BYPASS=off")
    set_tests_properties(perf_table.nccl_tests_format perf_table.squeeze_perf perf_table.squeeze_perf_collnet
                         PROPERTIES TIMEOUT 300 LABELS perf)
  endif()
endif()
