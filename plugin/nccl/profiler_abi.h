// Squeeze's own declaration of NCCL's profiler plugin ABI, versions 5 (NCCL 2.28.x; NCCL 2.30
// still loads v5) and 6 (NCCL 2.30). Written from the facts of NCCL 2.28.9's and 2.30.7's
// src/include/plugin/profiler/profiler_v5.h, profiler_v6.h and src/include/plugin/
// nccl_profiler.h; names are ours, layouts match NCCL's bit for bit (see the static_asserts,
// and tests/plugin/abi_layout_test.cc, whose numbers were measured against NCCL's headers).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "plugin/nccl/common.h"

extern "C" {

// ncclProfileXxx event type bits (also the activation mask bits).
enum squeeze_profile_event : uint64_t {
  kProfileGroup = 1u << 0,
  kProfileColl = 1u << 1,
  kProfileP2p = 1u << 2,
  kProfileProxyOp = 1u << 3,
  kProfileProxyStep = 1u << 4,
  kProfileProxyCtrl = 1u << 5,
  kProfileKernelCh = 1u << 6,
  kProfileNetPlugin = 1u << 7,
  kProfileGroupApi = 1u << 8,
  kProfileCollApi = 1u << 9,
  kProfileP2pApi = 1u << 10,
  kProfileKernelLaunch = 1u << 11,
  kProfileCeColl = 1u << 12,  // v6: copy-engine collectives and their sync and batch steps
  kProfileCeSync = 1u << 13,
  kProfileCeBatch = 1u << 14,
};

// Values of the `type` argument of the ncclProfilerCallback_t a net plugin receives in init.
enum squeeze_profiler_net_event : int {
  kProfilerNetEventStart = 0,
  kProfilerNetEventStop = 1,
  kProfilerNetEventUpdate = 2,
  kProfilerNetEventUpdateAndStop = 3,
};

// pluginId = type (upper 16 bits of the low 32) | version (low 16 bits). NCCL's IB is 1<<16,
// Socket 2<<16. Ours is private to this library: foreign profilers ignore types they don't know.
constexpr unsigned kProfilerNetVerBits = 16;
constexpr unsigned kProfilerNetVerMask = ~0u >> kProfilerNetVerBits;
constexpr unsigned kProfilerNetTypeMask = ~0u << kProfilerNetVerBits;

using nccl_profiler_event_state_t = int;  // ncclProfilerEventState_t (an enum of int size)
constexpr nccl_profiler_event_state_t kProfilerNetPluginUpdate = 21;

// The members of ncclProfilerEventDescr_v5_t's union, one per event type. (Named here
// because standard C++ allows no type definitions inside an anonymous union.)
struct nccl_profiler_descr_group_api {
  bool graphCaptured;
  int groupDepth;
};
struct nccl_profiler_descr_coll_api {
  const char* func;
  std::size_t count;
  const char* datatype;
  int root;
  void* stream;
  bool graphCaptured;
};
struct nccl_profiler_descr_p2p_api {
  const char* func;
  std::size_t count;
  const char* datatype;
  void* stream;
  bool graphCaptured;
};
struct nccl_profiler_descr_kernel_launch {
  void* stream;
};
struct nccl_profiler_descr_coll {
  uint64_t seqNumber;
  const char* func;
  const void* sendBuff;
  void* recvBuff;
  std::size_t count;
  int root;
  const char* datatype;
  uint8_t nChannels;
  uint8_t nWarps;
  const char* algo;
  const char* proto;
  void* parentGroup;
};
struct nccl_profiler_descr_p2p {
  const char* func;
  void* buff;
  const char* datatype;
  std::size_t count;
  int peer;
  uint8_t nChannels;
  void* parentGroup;
};
struct nccl_profiler_descr_proxy_op {
  pid_t pid;  // process that created the op: differs from ours under PXN
  uint8_t channelId;
  int peer;
  int nSteps;
  int chunkSize;
  int isSend;
};
struct nccl_profiler_descr_proxy_step {
  int step;
};
struct nccl_profiler_descr_kernel_ch {
  uint8_t channelId;
  uint64_t pTimer;
};
struct nccl_profiler_descr_net_plugin {
  int64_t id;  // the pluginId the net plugin passed to the callback
  void* data;  // the extData the net plugin passed to the callback
};

// ncclProfilerEventDescr_v5_t
struct nccl_profiler_event_descr_v5 {
  uint64_t type;    // one kProfileXxx bit
  void* parentObj;  // handle the profiler returned for the parent event (may be NULL or stale)
  int rank;
  union {
    nccl_profiler_descr_group_api groupApi;
    nccl_profiler_descr_coll_api collApi;
    nccl_profiler_descr_p2p_api p2pApi;
    nccl_profiler_descr_kernel_launch kernelLaunch;
    nccl_profiler_descr_coll coll;
    nccl_profiler_descr_p2p p2p;
    nccl_profiler_descr_proxy_op proxyOp;
    nccl_profiler_descr_proxy_step proxyStep;
    nccl_profiler_descr_kernel_ch kernelCh;
    nccl_profiler_descr_net_plugin netPlugin;
  };
};

// v6's copy-engine descriptors (NCCL 2.30), in the same union.
struct nccl_profiler_descr_ce_coll {
  uint64_t seqNumber;
  const char* func;
  const void* sendBuff;
  void* recvBuff;
  std::size_t count;
  int root;
  const char* datatype;
  const char* syncStrategy;
  bool intraBatchSync;
  uint32_t batchSize;
  uint32_t numBatches;
  uint32_t ceSeqNum;
  void* stream;
};
struct nccl_profiler_descr_ce_sync {
  bool isComplete;
  int nRanks;
};
struct nccl_profiler_descr_ce_batch {
  int numOps;
  std::size_t totalBytes;
  bool useIntraSync;
};

// ncclProfilerEventDescr_v6_t: v5's descriptor with three more members in its union (which
// keeps its size), so every v5 member sits at the same offset.
struct nccl_profiler_event_descr_v6 {
  uint64_t type;
  void* parentObj;
  int rank;
  union {
    nccl_profiler_descr_group_api groupApi;
    nccl_profiler_descr_coll_api collApi;
    nccl_profiler_descr_p2p_api p2pApi;
    nccl_profiler_descr_kernel_launch kernelLaunch;
    nccl_profiler_descr_coll coll;
    nccl_profiler_descr_p2p p2p;
    nccl_profiler_descr_proxy_op proxyOp;
    nccl_profiler_descr_proxy_step proxyStep;
    nccl_profiler_descr_kernel_ch kernelCh;
    nccl_profiler_descr_net_plugin netPlugin;
    nccl_profiler_descr_ce_coll ceColl;
    nccl_profiler_descr_ce_sync ceCollSync;
    nccl_profiler_descr_ce_batch ceCollBatch;
  };
};

// ncclProfilerEventStateArgs_v5_t
union nccl_profiler_event_state_args_v5 {
  struct {
    std::size_t transSize;
  } proxyStep;
  struct {
    int appendedProxyOps;
  } proxyCtrl;
  struct {
    void* data;
  } netPlugin;
  struct {
    uint64_t pTimer;
  } kernelCh;
};

using nccl_profiler_event_state_args_v6 = nccl_profiler_event_state_args_v5;  // unchanged in v6

// ncclProfiler_v5_t: NCCL dlsym()s the data symbol "ncclProfiler_v5".
struct nccl_profiler_v5 {
  const char* name;
  nccl_result_t (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                        int nNodes, int nranks, int rank, nccl_logger_t logfn);
  nccl_result_t (*startEvent)(void* context, void** eHandle, nccl_profiler_event_descr_v5* eDescr);
  nccl_result_t (*stopEvent)(void* eHandle);
  nccl_result_t (*recordEventState)(void* eHandle, nccl_profiler_event_state_t eState,
                                    nccl_profiler_event_state_args_v5* eStateArgs);
  nccl_result_t (*finalize)(void* context);
};

// ncclProfiler_v6_t ("ncclProfiler_v6"): v5's table over the v6 descriptor.
struct nccl_profiler_v6 {
  const char* name;
  nccl_result_t (*init)(void** context, uint64_t commId, int* eActivationMask, const char* commName,
                        int nNodes, int nranks, int rank, nccl_logger_t logfn);
  nccl_result_t (*startEvent)(void* context, void** eHandle, nccl_profiler_event_descr_v6* eDescr);
  nccl_result_t (*stopEvent)(void* eHandle);
  nccl_result_t (*recordEventState)(void* eHandle, nccl_profiler_event_state_t eState,
                                    nccl_profiler_event_state_args_v6* eStateArgs);
  nccl_result_t (*finalize)(void* context);
};

}  // extern "C"

// Offsets measured by compiling NCCL 2.28.9's profiler_v5.h on x86-64 Linux.
static_assert(sizeof(nccl_profiler_event_descr_v5) == 112);
static_assert(offsetof(nccl_profiler_event_descr_v5, parentObj) == 8);
static_assert(offsetof(nccl_profiler_event_descr_v5, rank) == 16);
static_assert(offsetof(nccl_profiler_event_descr_v5, collApi.datatype) == 40);
static_assert(offsetof(nccl_profiler_event_descr_v5, p2pApi.datatype) == 40);
static_assert(offsetof(nccl_profiler_event_descr_v5, coll.seqNumber) == 24);
static_assert(offsetof(nccl_profiler_event_descr_v5, coll.count) == 56);
static_assert(offsetof(nccl_profiler_event_descr_v5, coll.datatype) == 72);
static_assert(offsetof(nccl_profiler_event_descr_v5, coll.nWarps) == 81);
static_assert(offsetof(nccl_profiler_event_descr_v5, coll.algo) == 88);
static_assert(offsetof(nccl_profiler_event_descr_v5, coll.proto) == 96);
static_assert(offsetof(nccl_profiler_event_descr_v5, coll.parentGroup) == 104);
static_assert(offsetof(nccl_profiler_event_descr_v5, p2p.count) == 48);
static_assert(offsetof(nccl_profiler_event_descr_v5, p2p.peer) == 56);
static_assert(offsetof(nccl_profiler_event_descr_v5, p2p.parentGroup) == 64);
static_assert(offsetof(nccl_profiler_event_descr_v5, proxyOp.pid) == 24);
static_assert(offsetof(nccl_profiler_event_descr_v5, proxyOp.channelId) == 28);
static_assert(offsetof(nccl_profiler_event_descr_v5, proxyOp.peer) == 32);
static_assert(offsetof(nccl_profiler_event_descr_v5, proxyOp.isSend) == 44);
static_assert(offsetof(nccl_profiler_event_descr_v5, proxyStep.step) == 24);
static_assert(offsetof(nccl_profiler_event_descr_v5, kernelCh.pTimer) == 32);
static_assert(offsetof(nccl_profiler_event_descr_v5, netPlugin.id) == 24);
static_assert(offsetof(nccl_profiler_event_descr_v5, netPlugin.data) == 32);
static_assert(sizeof(nccl_profiler_event_state_args_v5) == 8);
static_assert(sizeof(nccl_profiler_v5) == 48);
static_assert(offsetof(nccl_profiler_v5, finalize) == 40);
