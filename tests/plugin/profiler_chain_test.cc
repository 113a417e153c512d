// A harness that plays NCCL 2.28.9's side of the profiler v5 API against the built-in
// profiler, through the same table the library exports: Coll/P2p -> ProxyOp -> ProxyStep ->
// NetPlugin through the net plugin's callback, in the order and on the threads NCCL uses.
// Every ChainTest runs twice: through the v5 table, and through the v6 table as NCCL 2.30
// drives it (the same events in v6 descriptors).
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "plugin/policy/names.h"
#include "plugin/profiler/chain_profiler.h"
#include "plugin/profiler/comm_registry.h"
#include "plugin/profiler/net_query.h"
#include "plugin/profiler/profiler_v5_adapter.h"
#include "plugin/profiler/profiler_v6_adapter.h"

namespace {

using namespace squeeze;
using policy::Collective;
using policy::DataType;
using profiler::ChainResult;

// NCCL's proxy-side structures that the callback reads (src/include/proxy.h).
struct FakeSub {
  int eActivationMask = kProfileNetPlugin;
  void* profilerContext = nullptr;
  int rank = 0;
};
struct FakeProxyEventHandle {
  void* stepEventHandle = nullptr;
  FakeSub* subArgPtr = nullptr;
};

// The profiler NCCL loaded (its global ncclProfiler); nullptr = none.
const nccl_profiler_v5* g_loaded = nullptr;

// NCCL's ncclProfilerCallback (src/plugin/profiler.cc:687-715), which the net plugin calls.
nccl_result_t nccl_callback(void** eHandle, int type, void* pHandle, int64_t pluginId,
                            void* extData) {
  if (g_loaded == nullptr) return kNcclSuccess;
  if (type == kProfilerNetEventStart) {
    auto* p = static_cast<FakeProxyEventHandle*>(pHandle);
    FakeSub* sub = p->subArgPtr;
    if (sub->eActivationMask & kProfileNetPlugin) {
      nccl_profiler_event_descr_v5 d{};
      d.type = kProfileNetPlugin;
      d.parentObj = p->stepEventHandle;
      d.rank = sub->rank;
      d.netPlugin.id = pluginId;
      d.netPlugin.data = extData;
      g_loaded->startEvent(sub->profilerContext, eHandle, &d);
    }
  } else if (type == kProfilerNetEventStop) {
    g_loaded->stopEvent(*eHandle);
  }
  return kNcclSuccess;
}

// NCCL 2.30 describes each event in a v6 descriptor: the same members as v5's, at the same
// offsets (tests/plugin/abi_layout_test.cc), in a union that also holds the copy-engine events.
nccl_profiler_event_descr_v6 as_v6(const nccl_profiler_event_descr_v5& d) {
  nccl_profiler_event_descr_v6 o{};
  o.type = d.type;
  o.parentObj = d.parentObj;
  o.rank = d.rank;
  switch (d.type) {
    case kProfileGroupApi: o.groupApi = d.groupApi; break;
    case kProfileCollApi: o.collApi = d.collApi; break;
    case kProfileP2pApi: o.p2pApi = d.p2pApi; break;
    case kProfileKernelLaunch: o.kernelLaunch = d.kernelLaunch; break;
    case kProfileColl: o.coll = d.coll; break;
    case kProfileP2p: o.p2p = d.p2p; break;
    case kProfileProxyOp: o.proxyOp = d.proxyOp; break;
    case kProfileProxyStep: o.proxyStep = d.proxyStep; break;
    case kProfileKernelCh: o.kernelCh = d.kernelCh; break;
    case kProfileNetPlugin: o.netPlugin = d.netPlugin; break;
    default: break;
  }
  return o;
}

// The v6 table's startEvent, called with what the tests build (v5 descriptors).
nccl_result_t start_through_v6(void* context, void** eHandle, nccl_profiler_event_descr_v5* d) {
  static constexpr nccl_profiler_v6 kV6 = profiler::profiler_v6_table();
  if (d == nullptr) return kV6.startEvent(context, eHandle, nullptr);
  nccl_profiler_event_descr_v6 d6 = as_v6(*d);
  return kV6.startEvent(context, eHandle, &d6);
}

// The table NCCL would load, version 5 or 6, seen through v5's shape.
nccl_profiler_v5 profiler_table(int version) {
  if (version == 5) return profiler::profiler_v5_table();
  constexpr nccl_profiler_v6 v6 = profiler::profiler_v6_table();
  return {v6.name, v6.init, start_through_v6, v6.stopEvent, v6.recordEventState, v6.finalize};
}

class ChainTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    table_ = profiler_table(GetParam());
    g_loaded = &table_;
    ASSERT_EQ(table_.init(&ctx_, kCommHash, &mask_, "dlrm_emb", 2, 16, 3, nullptr), kNcclSuccess);
    ASSERT_NE(ctx_, nullptr);
  }
  void TearDown() override {
    EXPECT_EQ(table_.finalize(ctx_), kNcclSuccess);
    g_loaded = nullptr;
  }

  void* start(nccl_profiler_event_descr_v5 d, void* context = nullptr) {
    void* h = reinterpret_cast<void*>(0xbadbadbad);  // NCCL does not clear it: we must write it
    EXPECT_EQ(table_.startEvent(context != nullptr ? context : ctx_, &h, &d), kNcclSuccess);
    return h;
  }
  void stop(void* h) { EXPECT_EQ(table_.stopEvent(h), kNcclSuccess); }

  void* coll(const char* func, const char* dtype, size_t count, uint64_t seq,
             void* parent = nullptr) {
    nccl_profiler_event_descr_v5 d{};
    d.type = kProfileColl;
    d.parentObj = parent;
    d.rank = 3;
    d.coll.seqNumber = seq;
    d.coll.func = func;
    d.coll.count = count;
    d.coll.datatype = dtype;
    d.coll.algo = "RING";
    d.coll.proto = "SIMPLE";
    d.coll.root = 0;
    return start(d);
  }
  void* coll_api(const char* func, const char* dtype, size_t count) {
    nccl_profiler_event_descr_v5 d{};
    d.type = kProfileCollApi;
    d.collApi.func = func;
    d.collApi.count = count;
    d.collApi.datatype = dtype;
    return start(d);
  }
  void* p2p(const char* func, const char* dtype, size_t count, int peer) {
    nccl_profiler_event_descr_v5 d{};
    d.type = kProfileP2p;
    d.rank = 3;
    d.p2p.func = func;
    d.p2p.datatype = dtype;
    d.p2p.count = count;
    d.p2p.peer = peer;
    return start(d);
  }
  // Started by the proxy thread with the op's own context and pid.
  void* proxy_op(void* task, pid_t pid, int peer, void* context = nullptr) {
    nccl_profiler_event_descr_v5 d{};
    d.type = kProfileProxyOp;
    d.parentObj = task;
    d.rank = 3;
    d.proxyOp.pid = pid;
    d.proxyOp.channelId = 2;
    d.proxyOp.peer = peer;
    d.proxyOp.nSteps = 8;
    d.proxyOp.chunkSize = 1 << 19;
    d.proxyOp.isSend = 1;
    return start(d, context);
  }
  void* proxy_step(void* op, int step, void* context = nullptr) {
    nccl_profiler_event_descr_v5 d{};
    d.type = kProfileProxyStep;
    d.parentObj = op;
    d.proxyStep.step = step;
    return start(d, context);
  }
  // What the net plugin does in isend for the message of one step.
  ChainResult ask(void* step, profiler::NetQuery* q, void* context = nullptr) {
    FakeSub sub;
    sub.profilerContext = context != nullptr ? context : ctx_;
    FakeProxyEventHandle ph{step, &sub};
    return profiler::query_chain(nccl_callback, &ph, q);
  }
  bool ask_meta(void* step, policy::MessageMeta* m) {
    FakeSub sub;
    sub.profilerContext = ctx_;
    FakeProxyEventHandle ph{step, &sub};
    return profiler::query_message_meta(nccl_callback, &ph, m);
  }

  static constexpr uint64_t kCommHash = 0xC0FFEE;
  nccl_profiler_v5 table_{};
  void* ctx_ = nullptr;
  int mask_ = 0;
  const pid_t pid_ = getpid();
};

TEST_P(ChainTest, InitRequestsNetPluginEventsAndRegistersTheComm) {
  EXPECT_EQ(mask_, static_cast<int>(kProfileNetPlugin));
  profiler::CommInfo info;
  ASSERT_TRUE(profiler::lookup_comm(kCommHash, &info));
  EXPECT_EQ(info.name, "dlrm_emb");
  EXPECT_EQ(info.nranks, 16);
  EXPECT_EQ(info.rank, 3);
  EXPECT_STREQ(table_.name, "Squeeze");
}

TEST_P(ChainTest, AllReduceRecoversDtypeOpCountSeqEvenAfterTheCollIsStopped) {
  void* c = coll("AllReduce", "ncclFloat32", 1 << 20, 42);
  ASSERT_NE(c, nullptr);
  stop(c);  // NCCL stops task events right after kicking the proxy, before ProxyOps start
  void* op = proxy_op(c, pid_, 5);
  ASSERT_NE(op, nullptr);
  for (int s = 0; s < 12; ++s) {  // steps wrap around NCCL's 8 step slots
    void* st = proxy_step(op, s);
    ASSERT_NE(st, nullptr);
    profiler::NetQuery q;
    ASSERT_EQ(ask(st, &q), ChainResult::kFound);
    EXPECT_EQ(q.meta.func, Collective::kAllReduce);
    EXPECT_EQ(q.meta.dtype, DataType::kFloat32);
    EXPECT_EQ(q.meta.count, 1u << 20);
    EXPECT_TRUE(q.meta.has_seq);
    EXPECT_EQ(q.meta.seq, 42u);
    EXPECT_EQ(q.meta.algo, policy::Algo::kRing);
    EXPECT_EQ(q.meta.proto, policy::Proto::kSimple);
    EXPECT_EQ(q.meta.comm_hash, kCommHash);
    EXPECT_EQ(q.meta.nranks, 16);
    EXPECT_EQ(q.op.peer, 5);
    EXPECT_EQ(q.step, s);
    stop(st);
  }
  stop(op);
}

TEST_P(ChainTest, MessageMetaKeepsTheEnginesCollectiveAndAddsTheRest) {
  void* c = coll("AllReduce", "ncclBfloat16", 3000, 7);
  void* op = proxy_op(c, pid_, 1);
  stop(c);
  void* st = proxy_step(op, 0);
  policy::MessageMeta m;
  m.bytes = 6000;
  m.proto = policy::Proto::kSimple;
  ASSERT_TRUE(ask_meta(st, &m));
  EXPECT_EQ(m.collective, Collective::kAllReduce);  // unknown before: taken from the chain
  EXPECT_EQ(m.dtype, DataType::kBfloat16);
  EXPECT_EQ(m.count, 3000u);
  EXPECT_EQ(m.coll_bytes, 6000u);
  EXPECT_EQ(m.seq, 7u);
  EXPECT_EQ(m.nranks, 16);
  EXPECT_EQ(m.peer, 1);
  EXPECT_EQ(m.proto, policy::Proto::kSimple);  // untouched
  stop(st);
  stop(op);
}

TEST_P(ChainTest, AllToAllArrivesAsP2pSendAndRecv) {
  // NCCL 2.28.9 splits ncclAlltoAll into one Send and one Recv P2p task per peer; the P2p
  // (and P2pApi) events say "Send"/"Recv". The engine knows AlltoAll from setNetAttr.
  for (int peer = 0; peer < 4; ++peer) {
    for (const char* func : {"Send", "Recv"}) {
      void* t = p2p(func, "ncclBfloat16", 65536, peer);
      ASSERT_NE(t, nullptr);
      stop(t);
      void* op = proxy_op(t, pid_, peer);
      void* st = proxy_step(op, 0);
      policy::MessageMeta m;
      m.collective = Collective::kAllToAll;  // from setNetAttr op = 1 << 8
      ASSERT_TRUE(ask_meta(st, &m));
      EXPECT_EQ(m.collective, Collective::kAllToAll);
      EXPECT_EQ(m.dtype, DataType::kBfloat16);
      EXPECT_EQ(m.count, 65536u);
      EXPECT_EQ(m.coll_bytes, 131072u);
      EXPECT_EQ(m.peer, peer);
      EXPECT_FALSE(m.has_seq);
      profiler::NetQuery q;
      EXPECT_EQ(ask(st, &q), ChainResult::kFound);
      EXPECT_EQ(q.meta.func, std::string(func) == "Send" ? Collective::kSend : Collective::kRecv);
      EXPECT_TRUE(q.meta.from_p2p);
      stop(st);
      stop(op);
    }
  }
}

TEST_P(ChainTest, AllGatherGetsTheUsersDtypeFromItsCollApiParent) {
  // NCCL runs AllGather as int8 with count in bytes; the CollApi event (stopped before the
  // Coll starts) still has float32 and the element count.
  void* api = coll_api("AllGather", "ncclFloat32", 1000);
  stop(api);
  void* c = coll("AllGather", "ncclInt8", 4000, 1, api);
  stop(c);
  void* op = proxy_op(c, pid_, 2);
  void* st = proxy_step(op, 0);
  profiler::NetQuery q;
  ASSERT_EQ(ask(st, &q), ChainResult::kFound);
  EXPECT_EQ(q.meta.dtype, DataType::kFloat32);
  EXPECT_EQ(q.meta.count, 1000u);
  stop(st);
  stop(op);
  // Without its CollApi parent, the truth NCCL reports: int8 bytes.
  c = coll("AllGather", "ncclInt8", 4000, 2, nullptr);
  op = proxy_op(c, pid_, 2);
  stop(c);
  st = proxy_step(op, 0);
  ASSERT_EQ(ask(st, &q), ChainResult::kFound);
  EXPECT_EQ(q.meta.dtype, DataType::kInt8);
  EXPECT_EQ(q.meta.count, 4000u);
  stop(st);
  stop(op);
}

TEST_P(ChainTest, ForeignPxnOpIsNeverResolved) {
  // Under PXN this proxy runs another process's op: its parent handle and its context are
  // that process's values. Here they happen to look exactly like ours.
  void* c = coll("AllReduce", "ncclFloat32", 100, 1);
  void* foreign_ctx = reinterpret_cast<void*>(0xdeadbeef0000);
  void* op = proxy_op(c, pid_ + 1, 9, foreign_ctx);
  ASSERT_NE(op, nullptr);
  void* st = proxy_step(op, 0, foreign_ctx);
  profiler::NetQuery q;
  EXPECT_EQ(ask(st, &q, foreign_ctx), ChainResult::kForeign);
  EXPECT_EQ(q.meta.dtype, DataType::kUnknown);
  EXPECT_TRUE(q.op.foreign);
  EXPECT_EQ(q.op.peer, 9);
  policy::MessageMeta m;
  EXPECT_TRUE(ask_meta(st, &m));           // answered ...
  EXPECT_EQ(m.dtype, DataType::kUnknown);  // ... with "unknown"
  EXPECT_EQ(m.peer, 9);
  stop(st);
  stop(op);
  stop(c);
}

TEST_P(ChainTest, MissingOrGarbageParentsGiveUnknownNeverACrash) {
  int on_stack = 0;
  std::vector<void*> garbage = {nullptr,
                                &on_stack,
                                reinterpret_cast<void*>(1),
                                reinterpret_cast<void*>(~uintptr_t{0}),
                                reinterpret_cast<void*>(0x7fff00000000),
                                ctx_};
  for (void* g : garbage) {
    void* op = proxy_op(g, pid_, 1);  // an op whose Coll is missing
    ASSERT_NE(op, nullptr);
    void* st = proxy_step(op, 0);
    profiler::NetQuery q;
    EXPECT_EQ(ask(st, &q), ChainResult::kNoParent);
    EXPECT_EQ(q.meta.dtype, DataType::kUnknown);
    stop(st);
    stop(op);
    EXPECT_EQ(proxy_step(g, 0), nullptr);  // a step whose op is missing
    profiler::NetQuery q2;
    EXPECT_EQ(ask(g, &q2), ChainResult::kNoParent);  // the NetPlugin event's step is missing
    EXPECT_TRUE(q2.answered);
    EXPECT_FALSE(q2.found_op);
    stop(g);  // stopping garbage is ignored
  }
  // NULL everywhere.
  EXPECT_EQ(table_.startEvent(ctx_, nullptr, nullptr), kNcclSuccess);
  void* h = reinterpret_cast<void*>(1);
  EXPECT_EQ(table_.startEvent(ctx_, &h, nullptr), kNcclSuccess);
  EXPECT_EQ(h, nullptr);
  EXPECT_EQ(table_.stopEvent(nullptr), kNcclSuccess);
  EXPECT_EQ(table_.recordEventState(nullptr, 0, nullptr), kNcclSuccess);
  EXPECT_EQ(table_.finalize(nullptr), kNcclSuccess);
  // A Coll from an unknown context (never initialised, or finalised) gets no event.
  nccl_profiler_event_descr_v5 d{};
  d.type = kProfileColl;
  d.coll.func = "AllReduce";
  EXPECT_EQ(start(d, reinterpret_cast<void*>(0x1234)), nullptr);
  // Strings NCCL never sends.
  EXPECT_NE(coll(nullptr, nullptr, 0, 0), nullptr);
}

TEST_P(ChainTest, RecycledParentsAreNotMistakenForNewOnes) {
  void* old = coll("AllReduce", "ncclFloat32", 1, 1);
  stop(old);
  // Far more collectives than the pool retains after their stop.
  for (int i = 0; i < 10000; ++i) stop(coll("Broadcast", "ncclInt64", 8, static_cast<uint64_t>(i)));
  void* op = proxy_op(old, pid_, 1);
  void* st = proxy_step(op, 0);
  profiler::NetQuery q;
  EXPECT_EQ(ask(st, &q), ChainResult::kNoParent);  // not some Broadcast's data
  stop(st);
  stop(op);
}

TEST_P(ChainTest, ParentsStayAliveWhileChildrenRun) {
  void* c = coll("AllReduce", "ncclFloat16", 64, 3);
  void* op = proxy_op(c, pid_, 1);  // holds a reference on c
  stop(c);
  for (int i = 0; i < 10000; ++i) stop(coll("Reduce", "ncclInt32", 8, 0));
  void* op2 = proxy_op(c, pid_, 2);  // another channel's op of the same collective, started late
  void* st = proxy_step(op2, 0);
  profiler::NetQuery q;
  ASSERT_EQ(ask(st, &q), ChainResult::kFound);
  EXPECT_EQ(q.meta.dtype, DataType::kFloat16);
  // NCCL stopping an op before its steps (it doesn't) must not free the op under a live step.
  stop(op2);
  ASSERT_EQ(ask(st, &q), ChainResult::kFound);
  stop(st);
  stop(st);  // a second stop is ignored
  EXPECT_EQ(ask(st, &q), ChainResult::kNoParent);
  stop(op);
  stop(op);
}

TEST_P(ChainTest, OtherPluginsQueriesAndBadQueriesAreIgnored) {
  void* c = coll("AllReduce", "ncclFloat32", 10, 1);
  void* op = proxy_op(c, pid_, 1);
  void* st = proxy_step(op, 0);
  // NCCL's IB plugin's event (pluginId = IB | v1) with its own data.
  int ib_data[4] = {1, 2, 3, 4};
  nccl_profiler_event_descr_v5 d{};
  d.type = kProfileNetPlugin;
  d.parentObj = st;
  d.netPlugin.id = int64_t{1} << 16 | 1;
  d.netPlugin.data = ib_data;
  EXPECT_EQ(start(d), nullptr);
  EXPECT_EQ(ib_data[0], 1);
  // Our id, but no data, or data that is not a query.
  d.netPlugin.id = profiler::kNetPluginId;
  d.netPlugin.data = nullptr;
  EXPECT_EQ(start(d), nullptr);
  profiler::NetQuery bad;
  bad.magic = 0;
  d.netPlugin.data = &bad;
  EXPECT_EQ(start(d), nullptr);
  EXPECT_FALSE(bad.answered);
  stop(st);
  stop(op);
  stop(c);
}

TEST_P(ChainTest, UnavailableChainMeansUnknown) {
  void* c = coll("AllReduce", "ncclFloat32", 10, 1);
  void* op = proxy_op(c, pid_, 1);
  void* st = proxy_step(op, 0);
  FakeSub sub;
  sub.profilerContext = ctx_;
  FakeProxyEventHandle ph{st, &sub};
  profiler::NetQuery q;
  // The net API versions without phandle (v8, v9), or no callback at all.
  EXPECT_EQ(profiler::query_chain(nccl_callback, nullptr, &q), ChainResult::kUnavailable);
  EXPECT_EQ(profiler::query_chain(nullptr, &ph, &q), ChainResult::kUnavailable);
  EXPECT_EQ(profiler::query_chain(nccl_callback, &ph, nullptr), ChainResult::kUnavailable);
  EXPECT_FALSE(profiler::query_message_meta(nccl_callback, &ph, nullptr));
  // The NetPlugin event is not enabled for this op.
  sub.eActivationMask = kProfileColl;
  EXPECT_EQ(profiler::query_chain(nccl_callback, &ph, &q), ChainResult::kUnavailable);
  sub.eActivationMask = kProfileNetPlugin;
  // NCCL loaded no profiler (NCCL_PROFILER_PLUGIN=none).
  g_loaded = nullptr;
  policy::MessageMeta m;
  EXPECT_FALSE(profiler::query_message_meta(nccl_callback, &ph, &m));
  EXPECT_EQ(m.dtype, DataType::kUnknown);
  // Another profiler is loaded: it gets the query, returns its own event, which is stopped.
  static std::atomic<int> foreign_live{0};
  nccl_profiler_v5 other{};
  other.name = "other";
  other.startEvent = [](void*, void** h, nccl_profiler_event_descr_v5*) -> nccl_result_t {
    *h = new int(7);
    foreign_live.fetch_add(1);
    return kNcclSuccess;
  };
  other.stopEvent = [](void* h) -> nccl_result_t {
    delete static_cast<int*>(h);
    foreign_live.fetch_sub(1);
    return kNcclSuccess;
  };
  g_loaded = &other;
  EXPECT_FALSE(profiler::query_message_meta(nccl_callback, &ph, &m));
  EXPECT_EQ(foreign_live.load(), 0);
  EXPECT_EQ(m.dtype, DataType::kUnknown);
  g_loaded = &table_;
  stop(st);
  stop(op);
  stop(c);
}

TEST_P(ChainTest, ManyThreadsEachGetTheirOwnAnswers) {
  auto before = profiler::ChainProfiler::instance().pool().usage();
  constexpr int kThreads = 8, kIters = 3000;
  const char* dtypes[] = {"ncclFloat32", "ncclBfloat16", "ncclFloat16", "ncclInt32"};
  const DataType want[] = {DataType::kFloat32, DataType::kBfloat16, DataType::kFloat16,
                           DataType::kInt32};
  // wrong: an answer about another message (must never happen); unknown_held: no answer
  // although the op held its parent (must never happen); unknown_retained: no answer for a
  // task stopped before its op started, whose retained copy other threads' traffic pushed
  // out while this thread was descheduled (allowed, rare: the message is then treated as
  // dtype unknown, which is safe).
  std::atomic<int> wrong{0}, found{0}, unknown_held{0}, unknown_retained{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kIters; ++i) {
        size_t count = static_cast<size_t>(t) * 1000000 + static_cast<size_t>(i) + 1;
        bool is_p2p = (i % 3) == 0;
        void* task = is_p2p ? p2p("Send", dtypes[t % 4], count, t)
                            : coll("AllReduce", dtypes[t % 4], count, 0);
        bool stop_first = (i % 2) == 0;
        if (stop_first) stop(task);
        void* op = proxy_op(task, pid_, t);
        if (!stop_first) stop(task);
        for (int s = 0; s < 3; ++s) {
          void* st = proxy_step(op, s);
          policy::MessageMeta m;
          bool answered = ask_meta(st, &m);
          if (answered && m.dtype == DataType::kUnknown && m.count == 0 && m.peer == t) {
            (stop_first ? unknown_retained : unknown_held).fetch_add(1);
          } else if (!answered || m.count != count || m.dtype != want[t % 4] || m.peer != t) {
            wrong.fetch_add(1);
          } else {
            found.fetch_add(1);
          }
          stop(st);
        }
        stop(op);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(unknown_held.load(), 0);
  EXPECT_LT(unknown_retained.load(), kThreads * kIters * 3 / 100);
  EXPECT_EQ(found.load() + unknown_retained.load(), kThreads * kIters * 3);
  auto after = profiler::ChainProfiler::instance().pool().usage();
  EXPECT_EQ(after.live_ops, before.live_ops);  // every op released
  EXPECT_EQ(after.live_tasks,
            before.live_tasks);  // every task released (retained ones are bounded)
  EXPECT_LE(after.retained_tasks, profiler::EventPool::kDefaultRetainedTasks);
}

// What only v6 has: copy-engine collectives (NCCL 2.30's ncclProfilerStartCe*Event). We never
// ask for them (init's mask is NetPlugin only), but a v6 profiler may get them anyway when
// another component's mask enables them: each gets no event and success, and the network chain
// around them is unchanged.
class ChainV6Test : public ChainTest {
 protected:
  void* start_v6(const nccl_profiler_event_descr_v6& d) {
    nccl_profiler_event_descr_v6 copy = d;
    void* h = reinterpret_cast<void*>(0xbadbadbad);
    EXPECT_EQ(v6_.startEvent(ctx_, &h, &copy), kNcclSuccess);
    return h;
  }
  const nccl_profiler_v6 v6_ = profiler::profiler_v6_table();
};

TEST_P(ChainV6Test, CopyEngineEventsGetNoEventAndLeaveTheChainAlone) {
  void* api = coll_api("AllGather", "ncclFloat32", 1000);
  ASSERT_NE(api, nullptr);
  nccl_profiler_event_descr_v6 ce{};
  ce.type = kProfileCeColl;
  ce.parentObj = api;
  ce.rank = 3;
  ce.ceColl.seqNumber = 9;
  ce.ceColl.func = "AllGather";
  ce.ceColl.datatype = "ncclFloat32";
  ce.ceColl.count = 1000;
  ce.ceColl.syncStrategy = "UC";
  ce.ceColl.numBatches = 2;
  EXPECT_EQ(start_v6(ce), nullptr);
  nccl_profiler_event_descr_v6 sync{};
  sync.type = kProfileCeSync;
  sync.ceCollSync.nRanks = 16;
  EXPECT_EQ(start_v6(sync), nullptr);
  nccl_profiler_event_descr_v6 batch{};
  batch.type = kProfileCeBatch;
  batch.ceCollBatch.numOps = 4;
  batch.ceCollBatch.totalBytes = 4000;
  EXPECT_EQ(start_v6(batch), nullptr);
  nccl_profiler_event_descr_v6 later{};
  later.type = uint64_t{1} << 20;  // a type a later NCCL may add
  EXPECT_EQ(start_v6(later), nullptr);
  EXPECT_EQ(v6_.recordEventState(nullptr, 25, nullptr), kNcclSuccess);  // ncclProfilerCeCollStart
  EXPECT_EQ(v6_.stopEvent(nullptr), kNcclSuccess);
  // The AllGather that runs over the network after it still finds its user's dtype and count.
  stop(api);
  void* c = coll("AllGather", "ncclInt8", 4000, 1, api);
  stop(c);
  void* op = proxy_op(c, pid_, 2);
  void* st = proxy_step(op, 0);
  profiler::NetQuery q;
  ASSERT_EQ(ask(st, &q), ChainResult::kFound);
  EXPECT_EQ(q.meta.func, Collective::kAllGather);
  EXPECT_EQ(q.meta.dtype, DataType::kFloat32);
  EXPECT_EQ(q.meta.count, 1000u);
  stop(st);
  stop(op);
}

INSTANTIATE_TEST_SUITE_P(ProfilerVersions, ChainV6Test, ::testing::Values(6),
                         [](const ::testing::TestParamInfo<int>& p) {
                           return std::string("v").append(std::to_string(p.param));
                         });

// The adapter's conversion carries each v5 member whole, and nothing for other types.
TEST(ProfilerV6, ToV5CarriesEveryV5EventAndOnlyThose) {
  int parent = 0;
  nccl_profiler_event_descr_v6 in{};
  in.parentObj = &parent;
  in.rank = 7;
  nccl_profiler_event_descr_v5 out{};

  in.type = kProfileColl;
  in.coll = {11, "AllReduce", &parent, &parent, 12, 13, "ncclBfloat16", 14, 15, "RING", "LL", &in};
  ASSERT_TRUE(profiler::to_v5(in, &out));
  EXPECT_EQ(out.type, uint64_t{kProfileColl});
  EXPECT_EQ(out.parentObj, &parent);
  EXPECT_EQ(out.rank, 7);
  EXPECT_EQ(out.coll.seqNumber, 11u);
  EXPECT_STREQ(out.coll.func, "AllReduce");
  EXPECT_EQ(out.coll.count, 12u);
  EXPECT_EQ(out.coll.root, 13);
  EXPECT_STREQ(out.coll.datatype, "ncclBfloat16");
  EXPECT_EQ(out.coll.nChannels, 14);
  EXPECT_EQ(out.coll.nWarps, 15);
  EXPECT_STREQ(out.coll.algo, "RING");
  EXPECT_STREQ(out.coll.proto, "LL");
  EXPECT_EQ(out.coll.parentGroup, &in);

  in = {};
  in.type = kProfileCollApi;
  in.collApi = {"AllGather", 21, "ncclFloat16", 22, &parent, true};
  ASSERT_TRUE(profiler::to_v5(in, &out));
  EXPECT_STREQ(out.collApi.func, "AllGather");
  EXPECT_EQ(out.collApi.count, 21u);
  EXPECT_STREQ(out.collApi.datatype, "ncclFloat16");
  EXPECT_EQ(out.collApi.root, 22);
  EXPECT_EQ(out.collApi.stream, &parent);
  EXPECT_TRUE(out.collApi.graphCaptured);

  in = {};
  in.type = kProfileP2p;
  in.p2p = {"Send", &parent, "ncclInt32", 31, 32, 33, &in};
  ASSERT_TRUE(profiler::to_v5(in, &out));
  EXPECT_STREQ(out.p2p.func, "Send");
  EXPECT_EQ(out.p2p.buff, &parent);
  EXPECT_STREQ(out.p2p.datatype, "ncclInt32");
  EXPECT_EQ(out.p2p.count, 31u);
  EXPECT_EQ(out.p2p.peer, 32);
  EXPECT_EQ(out.p2p.nChannels, 33);
  EXPECT_EQ(out.p2p.parentGroup, &in);

  in = {};
  in.type = kProfileProxyOp;
  in.proxyOp = {41, 42, 43, 44, 45, 1};
  ASSERT_TRUE(profiler::to_v5(in, &out));
  EXPECT_EQ(out.proxyOp.pid, 41);
  EXPECT_EQ(out.proxyOp.channelId, 42);
  EXPECT_EQ(out.proxyOp.peer, 43);
  EXPECT_EQ(out.proxyOp.nSteps, 44);
  EXPECT_EQ(out.proxyOp.chunkSize, 45);
  EXPECT_EQ(out.proxyOp.isSend, 1);

  in = {};
  in.type = kProfileProxyStep;
  in.proxyStep.step = 51;
  ASSERT_TRUE(profiler::to_v5(in, &out));
  EXPECT_EQ(out.proxyStep.step, 51);

  in = {};
  in.type = kProfileNetPlugin;
  in.netPlugin = {61, &parent};
  ASSERT_TRUE(profiler::to_v5(in, &out));
  EXPECT_EQ(out.netPlugin.id, 61);
  EXPECT_EQ(out.netPlugin.data, &parent);

  in = {};
  in.type = kProfileP2pApi;
  in.p2pApi = {"Recv", 71, "ncclUint8", &parent, true};
  ASSERT_TRUE(profiler::to_v5(in, &out));
  EXPECT_STREQ(out.p2pApi.func, "Recv");
  EXPECT_EQ(out.p2pApi.count, 71u);
  EXPECT_EQ(out.p2pApi.stream, &parent);

  in = {};
  in.type = kProfileGroupApi;
  in.groupApi = {true, 81};
  ASSERT_TRUE(profiler::to_v5(in, &out));
  EXPECT_EQ(out.groupApi.groupDepth, 81);

  in = {};
  in.type = kProfileKernelCh;
  in.kernelCh = {91, 92};
  ASSERT_TRUE(profiler::to_v5(in, &out));
  EXPECT_EQ(out.kernelCh.channelId, 91);
  EXPECT_EQ(out.kernelCh.pTimer, 92u);

  in = {};
  in.type = kProfileKernelLaunch;
  in.kernelLaunch.stream = &parent;
  ASSERT_TRUE(profiler::to_v5(in, &out));
  EXPECT_EQ(out.kernelLaunch.stream, &parent);

  for (uint64_t t : {uint64_t{kProfileGroup}, uint64_t{kProfileProxyCtrl}}) {
    in = {};
    in.type = t;
    EXPECT_TRUE(profiler::to_v5(in, &out)) << t;  // type only
    EXPECT_EQ(out.type, t);
  }
  for (uint64_t t : {uint64_t{kProfileCeColl}, uint64_t{kProfileCeSync}, uint64_t{kProfileCeBatch},
                     uint64_t{1} << 20}) {
    in = {};
    in.type = t;
    EXPECT_FALSE(profiler::to_v5(in, &out)) << t;
  }
}

INSTANTIATE_TEST_SUITE_P(ProfilerVersions, ChainTest, ::testing::Values(5, 6),
                         [](const ::testing::TestParamInfo<int>& p) {
                           return std::string("v").append(std::to_string(p.param));
                         });

TEST(ChainProfiler, OffSwitchRequestsNoEvents) {
  nccl_profiler_v5 t = profiler::profiler_v5_table();
  ::setenv("SQUEEZE_PROFILER", "off", 1);
  void* ctx = nullptr;
  int mask = -1;
  EXPECT_EQ(t.init(&ctx, 77, &mask, nullptr, 1, 2, 0, nullptr), kNcclSuccess);
  ::unsetenv("SQUEEZE_PROFILER");
  EXPECT_EQ(mask, 0);
  profiler::CommInfo info;
  EXPECT_TRUE(profiler::lookup_comm(77, &info));  // still known to the engine and tuner
  EXPECT_EQ(info.name, "");
  EXPECT_EQ(t.finalize(ctx), kNcclSuccess);
  EXPECT_FALSE(profiler::lookup_comm(77, &info));
  EXPECT_EQ(t.init(nullptr, 77, &mask, nullptr, 1, 2, 0, nullptr), kNcclInvalidArgument);
}

TEST(EventPool, BoundedMemoryDropsInsteadOfGrowing) {
  profiler::EventPool pool(1024, 16);
  std::vector<void*> ops;
  for (int i = 0; i < 1024; ++i) {
    void* h = pool.create_op(nullptr, {});
    ASSERT_NE(h, nullptr);
    ops.push_back(h);
  }
  EXPECT_EQ(pool.create_op(nullptr, {}), nullptr);  // full of live events
  EXPECT_EQ(pool.create_task(profiler::TaskKind::kColl, {}), nullptr);
  EXPECT_EQ(pool.dropped(), 2u);
  EXPECT_EQ(pool.usage().allocated_slots, 1024u);
  pool.stop(ops.back());
  EXPECT_NE(pool.create_task(profiler::TaskKind::kColl, {}), nullptr);
  for (void* h : ops) pool.stop(h);
  EXPECT_EQ(pool.usage().live_ops, 0u);
}

TEST(EventPool, RetainedTasksAreRecycledOldestFirstWhenFull) {
  profiler::EventPool pool(1024, 4096);
  profiler::ChainMeta m;
  m.count = 1;
  void* first = pool.create_task(profiler::TaskKind::kColl, m);
  pool.stop(first);
  for (int i = 0; i < 1023; ++i) {
    m.count = 2;
    pool.stop(pool.create_task(profiler::TaskKind::kColl, m));
  }
  profiler::TaskKind k{};
  profiler::ChainMeta out;
  EXPECT_TRUE(pool.read_task(first, &k, &out));  // still retained
  EXPECT_EQ(out.count, 1u);
  pool.stop(pool.create_task(profiler::TaskKind::kColl, m));  // the pool is full: first goes
  EXPECT_FALSE(pool.read_task(first, &k, &out));
}

TEST(EventPool, HandlesOfAnotherPoolAreRejected) {
  profiler::EventPool a, b;
  void* h = a.create_task(profiler::TaskKind::kColl, {});
  profiler::TaskKind k{};
  profiler::ChainMeta m;
  EXPECT_TRUE(a.read_task(h, &k, &m));
  // Another pool (another process, in real life) has another salt; equal salts are 1 in 32767.
  if (b.create_task(profiler::TaskKind::kColl, {}) != h) {
    EXPECT_FALSE(b.read_task(h, &k, &m));
  }
  b.stop(h);
  EXPECT_TRUE(a.read_task(h, &k, &m));
}

}  // namespace
