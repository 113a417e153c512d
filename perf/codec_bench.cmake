# squeeze-codec-bench: every codec on every traffic data set, CPU, table + JSON lines.
squeeze_perf_tool(squeeze-codec-bench ${CMAKE_CURRENT_SOURCE_DIR}/codec_bench.cc
                  squeeze_compress squeeze_perf_common nlohmann_json::nlohmann_json)
