// NCCL finds the built-in profiler and tuner by dlsym() in the net plugin's library:
// "ncclProfiler_v5" (NCCL 2.28.9 src/plugin/profiler/profiler_v5.cc:15) and
// "ncclTunerPlugin_v5" (src/plugin/tuner/tuner_v5.cc:15).
#include <dlfcn.h>
#include <gtest/gtest.h>

#include "plugin/nccl/profiler_abi.h"
#include "plugin/nccl/tuner_abi.h"

namespace {

TEST(BuiltinTables, ProfilerAndTunerAreExportedFromThePlugin) {
  void* lib = dlopen(SQUEEZE_PLUGIN_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  auto* prof = static_cast<const nccl_profiler_v5*>(dlsym(lib, "ncclProfiler_v5"));
  ASSERT_NE(prof, nullptr) << "ncclProfiler_v5 is not exported (plugin/exports/exports.map)";
  EXPECT_STREQ(prof->name, "Squeeze");
  EXPECT_NE(prof->init, nullptr);
  EXPECT_NE(prof->startEvent, nullptr);
  EXPECT_NE(prof->stopEvent, nullptr);
  EXPECT_NE(prof->recordEventState, nullptr);
  EXPECT_NE(prof->finalize, nullptr);
  auto* tuner = static_cast<const nccl_tuner_v5*>(dlsym(lib, "ncclTunerPlugin_v5"));
  ASSERT_NE(tuner, nullptr) << "ncclTunerPlugin_v5 is not exported (plugin/exports/exports.map)";
  EXPECT_STREQ(tuner->name, "Squeeze");
  EXPECT_NE(tuner->init, nullptr);
  EXPECT_NE(tuner->getCollInfo, nullptr);
  EXPECT_NE(tuner->finalize, nullptr);
  // Internal helpers stay hidden.
  EXPECT_EQ(dlsym(lib, "squeeze_profiler_v5_init"), nullptr);
  EXPECT_EQ(dlsym(lib, "squeeze_tuner_v5_init"), nullptr);
  // No dlclose: the plugin links libstdc++ statically, whose exception emergency pool is
  // never freed; unloading it makes LeakSanitizer report that pool (NCCL keeps net plugins loaded).
  (void)lib;
}

}  // namespace
