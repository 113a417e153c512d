squeeze_perf_tool(squeeze-hostile-peers ${CMAKE_CURRENT_SOURCE_DIR}/hostile_peers.cc squeeze_transport)
