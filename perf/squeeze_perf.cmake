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
    set_tests_properties(perf_table.nccl_tests_format perf_table.squeeze_perf PROPERTIES TIMEOUT 300 LABELS perf)
  endif()
endif()
