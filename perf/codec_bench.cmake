# squeeze-codec-bench: every codec on every traffic data set, CPU, table + JSON lines; with
# CUDA, also --gpu: the CUDA codecs on the same cases, checked against the CPU's frames.
squeeze_perf_tool(squeeze-codec-bench ${CMAKE_CURRENT_SOURCE_DIR}/codec_bench.cc
                  squeeze_compress squeeze_perf_common nlohmann_json::nlohmann_json)
target_sources(squeeze-codec-bench PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/codec_bench_cases.cc)
if(TARGET squeeze_compress_cuda)
  # Host code only (the CUDA runtime API); squeeze_compress_cuda defines SQUEEZE_HAVE_CUDA.
  target_sources(squeeze-codec-bench PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/codec_bench_gpu.cc
                 ${CMAKE_CURRENT_SOURCE_DIR}/codec_bench_gpu_case.cc)
  target_link_libraries(squeeze-codec-bench PRIVATE squeeze_compress_cuda)
endif()
