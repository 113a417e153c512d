# squeeze-train-check: data-parallel training through the plugin's collective network, a
# compressing policy against raw (perf/train/).
file(GLOB SQUEEZE_TRAIN_SRC CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/train/*.cc)
add_executable(squeeze-train-check ${CMAKE_CURRENT_SOURCE_DIR}/train_check.cc ${SQUEEZE_TRAIN_SRC})
target_include_directories(squeeze-train-check PRIVATE ${PROJECT_SOURCE_DIR})
target_link_libraries(squeeze-train-check PRIVATE squeeze_perf_proxy nlohmann_json::nlohmann_json
                      squeeze_warnings Threads::Threads ${CMAKE_DL_LIBS})
target_compile_definitions(squeeze-train-check PRIVATE
  SQUEEZE_PLUGIN_PATH="$<TARGET_FILE:nccl-net-squeeze>"
  SQUEEZE_CONFIG_DIR="${PROJECT_SOURCE_DIR}/config"
  SQUEEZE_PERF_POLICY_DIR="${CMAKE_CURRENT_SOURCE_DIR}/collective/policies")
add_dependencies(squeeze-train-check nccl-net-squeeze)
install(TARGETS squeeze-train-check RUNTIME DESTINATION bin)

# The check itself (issue 23): threshold keep 1% with error feedback trains like raw, 2 ranks,
# 150 steps (about 8 s on a quiet machine; the run is deterministic for a seed). The recorded
# figures (perf/RESULTS.md) use 4 ranks and 300 steps.
if(SQUEEZE_BUILD_TESTS)
  add_test(NAME perf_train.threshold_feedback_trains_like_raw
           COMMAND $<TARGET_FILE:squeeze-train-check> -N 2 --steps 150 --seed 1)
  set_tests_properties(perf_train.threshold_feedback_trains_like_raw PROPERTIES TIMEOUT 300 LABELS perf)
endif()
