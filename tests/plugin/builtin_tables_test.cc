// NCCL finds the built-in profiler and tuner by dlsym() in the net plugin's library:
// "ncclProfiler_v5" (NCCL 2.28.9 src/plugin/profiler/profiler_v5.cc:15) and
// "ncclTunerPlugin_v5" (src/plugin/tuner/tuner_v5.cc:15); NCCL 2.30.7 asks for
// "ncclProfiler_v6" and "ncclTunerPlugin_v6" first. Net v12 sits beside v11 for NCCL 2.30.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <array>
#include <fstream>
#include <string>

#include "plugin/nccl/net_abi.h"
#include "plugin/nccl/profiler_abi.h"
#include "plugin/nccl/tuner_abi.h"
#include "tests/plugin/fork_peer.h"
#include "tests/plugin_path.h"

namespace {

// No dlclose anywhere: the plugin links libstdc++ statically, whose exception emergency pool
// is never freed; unloading it makes LeakSanitizer report that pool (NCCL keeps net plugins
// loaded).
void* plugin() {
  std::string why;
  void* lib = squeeze::testing::dlopen_plugin(&why);
  EXPECT_NE(lib, nullptr) << why;
  return lib;
}

TEST(BuiltinTables, ProfilerAndTunerAreExportedFromThePlugin) {
  void* lib = plugin();
  ASSERT_NE(lib, nullptr);
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
  EXPECT_EQ(dlsym(lib, "squeeze_profiler_v6_start_event"), nullptr);
  EXPECT_EQ(dlsym(lib, "squeeze_tuner_v5_init"), nullptr);
}

// v6 tables for NCCL 2.30, made of the v5 tables' functions where the signatures agree.
TEST(BuiltinTables, ProfilerAndTunerV6AreThinTablesOverTheSameCode) {
  void* lib = plugin();
  ASSERT_NE(lib, nullptr);
  auto* p5 = static_cast<const nccl_profiler_v5*>(dlsym(lib, "ncclProfiler_v5"));
  auto* p6 = static_cast<const nccl_profiler_v6*>(dlsym(lib, "ncclProfiler_v6"));
  ASSERT_NE(p5, nullptr);
  ASSERT_NE(p6, nullptr) << "ncclProfiler_v6 is not exported (plugin/exports/exports.map)";
  EXPECT_STREQ(p6->name, "Squeeze");
  EXPECT_EQ(reinterpret_cast<void*>(p6->init), reinterpret_cast<void*>(p5->init));
  EXPECT_NE(p6->startEvent, nullptr);  // converts v6 descriptors
  EXPECT_EQ(reinterpret_cast<void*>(p6->stopEvent), reinterpret_cast<void*>(p5->stopEvent));
  EXPECT_EQ(reinterpret_cast<void*>(p6->recordEventState),
            reinterpret_cast<void*>(p5->recordEventState));
  EXPECT_EQ(reinterpret_cast<void*>(p6->finalize), reinterpret_cast<void*>(p5->finalize));

  auto* t5 = static_cast<const nccl_tuner_v5*>(dlsym(lib, "ncclTunerPlugin_v5"));
  auto* t6 = static_cast<const nccl_tuner_v6*>(dlsym(lib, "ncclTunerPlugin_v6"));
  ASSERT_NE(t5, nullptr);
  ASSERT_NE(t6, nullptr) << "ncclTunerPlugin_v6 is not exported (plugin/exports/exports.map)";
  EXPECT_STREQ(t6->name, "Squeeze");
  EXPECT_EQ(reinterpret_cast<void*>(t6->init), reinterpret_cast<void*>(t5->init));
  EXPECT_EQ(reinterpret_cast<void*>(t6->getCollInfo), reinterpret_cast<void*>(t5->getCollInfo));
  EXPECT_EQ(reinterpret_cast<void*>(t6->finalize), reinterpret_cast<void*>(t5->finalize));
  EXPECT_EQ(t6->getChunkSize, nullptr)
      << "getChunkSize leaves NCCL's chunk size everywhere (plugin/exports/tuner_v6.cc says why)";
}

// Net v12 has v11's function table: every entry but getProperties is v11's own function.
TEST(BuiltinTables, NetV12IsV11WithV12Properties) {
  void* lib = plugin();
  ASSERT_NE(lib, nullptr);
  auto* n11 = static_cast<const nccl_net_v11*>(dlsym(lib, "ncclNetPlugin_v11"));
  auto* n12 = static_cast<const nccl_net_v12*>(dlsym(lib, "ncclNetPlugin_v12"));
  ASSERT_NE(n11, nullptr);
  ASSERT_NE(n12, nullptr) << "ncclNetPlugin_v12 is not exported (plugin/exports/exports.map)";
  EXPECT_STREQ(n12->name, "Squeeze");
  auto same = [](auto a, auto b) {
    return reinterpret_cast<void*>(a) == reinterpret_cast<void*>(b);
  };
  EXPECT_TRUE(same(n12->init, n11->init));
  EXPECT_TRUE(same(n12->devices, n11->devices));
  EXPECT_FALSE(same(n12->getProperties, n11->getProperties));  // v11's converts down
  EXPECT_NE(n12->getProperties, nullptr);
  EXPECT_TRUE(same(n12->listen, n11->listen));
  EXPECT_TRUE(same(n12->connect, n11->connect));
  EXPECT_TRUE(same(n12->accept, n11->accept));
  EXPECT_TRUE(same(n12->regMr, n11->regMr));
  EXPECT_TRUE(same(n12->regMrDmaBuf, n11->regMrDmaBuf));
  EXPECT_TRUE(same(n12->deregMr, n11->deregMr));
  EXPECT_TRUE(same(n12->isend, n11->isend));
  EXPECT_TRUE(same(n12->irecv, n11->irecv));
  EXPECT_TRUE(same(n12->iflush, n11->iflush));
  EXPECT_TRUE(same(n12->test, n11->test));
  EXPECT_TRUE(same(n12->closeSend, n11->closeSend));
  EXPECT_TRUE(same(n12->closeRecv, n11->closeRecv));
  EXPECT_TRUE(same(n12->closeListen, n11->closeListen));
  EXPECT_TRUE(same(n12->finalize, n11->finalize));
  EXPECT_TRUE(same(n12->setNetAttr, n11->setNetAttr));
  EXPECT_EQ(n12->getDeviceMr, nullptr);
  EXPECT_EQ(n12->irecvConsumed, nullptr);
  EXPECT_EQ(n12->makeVDevice, nullptr);
}

// What the tuner tables do for NCCL: with the Squeeze net plugin initialised under a policy
// that compresses float32 all-reduce of 1 MiB and more, both steer such an all-reduce onto
// Ring/Simple on a communicator without CollNet and leave everything else; before the net
// plugin runs they leave NCCL alone. (Where NCCL offers CollNet they pick it instead:
// tuner_test.cc.)
// In a child process: the plugin reads its settings and policy once, at the first init (ctest
// runs each test in a process of its own, so no earlier test has initialised it).
constexpr const char* kPolicy = R"({"version": 1, "rules": [
  {"name": "grad", "match": {"collective": "allreduce", "dtype": "float32", "min_bytes": 1048576},
   "codec": "quantize", "error_bound": {"mode": "rel", "value": 0.01}}]})";

constexpr int kA = 7, kP = 3, kRing = 1, kCollNetDirect = 2, kCollNetChain = 3, kSimple = 2;
constexpr int kAllReduce = 4, kAlltoAll = 8;
using CostTable = std::array<std::array<float, kP>, kA>;

CostTable nccl_costs() {
  CostTable t{};
  for (int a = 0; a < kA; ++a) {
    for (int p = 0; p < kP; ++p) t[a][p] = 10.0f + static_cast<float>(a * kP + p);
  }
  t[0][0] = 1.0f;  // NCCL's favourite: Tree/LL
  // Without NCCL_COLLNET_ENABLE, NCCL leaves the CollNet rows at -1 (disabled).
  for (int p = 0; p < kP; ++p) t[kCollNetDirect][p] = t[kCollNetChain][p] = -1.0f;
  return t;
}

// Runs the tuner's init, one getCollInfo and finalize as NCCL does; returns the table after.
// A failing call sets *rc.
template <typename Tuner>
CostTable tune(const Tuner* t, int coll, std::size_t nbytes, int* rc) {
  CostTable c = nccl_costs();
  void* ctx = nullptr;
  nccl_nvl_domain_info_v5 nvl{1, 2, 2};
  nccl_tuner_constants_v5 consts{};
  int r = t->init(&ctx, 0x5eed, 2, 2, nullptr, &nvl, &consts);
  int channels = 0;
  if (r == 0) {
    r = t->getCollInfo(ctx, coll, nbytes, 1, reinterpret_cast<float**>(&c[0][0]), kA, kP, 0,
                       &channels);
  }
  if (r == 0) r = t->finalize(ctx);
  if (r != 0) *rc = r;
  return c;
}

TEST(BuiltinTables, TunerV5AndV6SteerWithTheNetPluginsPolicy) {
  char path[] = "/tmp/squeeze-tuner-policy-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  close(fd);
  std::ofstream(path) << kPolicy;
  // Each step the child checks, in order; it exits with the number of the first that fails.
  const char* steps[] = {"ok",
                         "dlopen or dlsym",
                         "before the net plugin's init, v6 changed NCCL's table",
                         "before the net plugin's init, v5 changed NCCL's table",
                         "net v12 init failed",
                         "v6 did not steer a 4 MiB all-reduce to Ring/Simple",
                         "v5 did not steer a 4 MiB all-reduce to Ring/Simple",
                         "v6 changed more than Ring/Simple",
                         "v6 touched an all-to-all",
                         "v6 touched a 64 KiB all-reduce",
                         "a call failed"};
  squeeze::testing::ForkPeer child([&] {
    setenv("SQUEEZE_POLICY", path, 1);
    setenv("SQUEEZE_SOCKET_IFNAME", "lo", 0);
    void* lib = squeeze::testing::dlopen_plugin(nullptr);
    if (lib == nullptr) return 1;
    auto* t5 = static_cast<const nccl_tuner_v5*>(dlsym(lib, "ncclTunerPlugin_v5"));
    auto* t6 = static_cast<const nccl_tuner_v6*>(dlsym(lib, "ncclTunerPlugin_v6"));
    auto* net = static_cast<const nccl_net_v12*>(dlsym(lib, "ncclNetPlugin_v12"));
    if (t5 == nullptr || t6 == nullptr || net == nullptr) return 1;
    int rc = 0;
    const CostTable nccl = nccl_costs();
    if (tune(t6, kAllReduce, 4 << 20, &rc) != nccl) return 2;
    if (tune(t5, kAllReduce, 4 << 20, &rc) != nccl) return 3;
    void* ctx = nullptr;
    nccl_net_comm_config cfg{-1};
    if (net->init(&ctx, 1, &cfg, nullptr, nullptr) != 0) return 4;
    CostTable steered = nccl;
    steered[kRing][kSimple] = 0.0f;
    if (tune(t6, kAllReduce, 4 << 20, &rc) != steered) return 5;
    if (tune(t5, kAllReduce, 4 << 20, &rc) != steered) return 6;
    if (tune(t6, kAllReduce, 4 << 20, &rc)[0] != nccl[0]) return 7;
    if (tune(t6, kAlltoAll, 4 << 20, &rc) != nccl) return 8;
    if (tune(t6, kAllReduce, 64 << 10, &rc) != nccl) return 9;
    if (rc != 0 || net->finalize(ctx) != 0) return 10;
    return 0;
  });
  int code = child.wait(60);
  unlink(path);
  ASSERT_GE(code, 0);
  EXPECT_EQ(code, 0) << (code < 11 ? steps[code] : "the child crashed or hung");
}

}  // namespace
