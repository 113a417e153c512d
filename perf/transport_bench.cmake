squeeze_perf_tool(squeeze-transport-bench ${CMAKE_CURRENT_SOURCE_DIR}/transport_bench.cc squeeze_perf_common
                  squeeze_core)
