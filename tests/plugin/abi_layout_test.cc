// Our declarations of NCCL's plugin ABIs (plugin/nccl/*.h) against NCCL's own headers: the size
// and offset of every field of every table, property struct and descriptor we export or read,
// and the constants whose values cross the ABI.
//
// How the numbers were obtained: a throwaway program (never committed), compiled with g++ on
// x86-64 Linux against the headers of NVIDIA/nccl at the tags v2.30.7-1 and v2.28.9-1
// (src/include/plugin/nccl_net.h, nccl_profiler.h, nccl_tuner.h and the net/, profiler/ and
// tuner/ headers they include; nccl.h generated from src/nccl.h.in), printed offsetof() and
// sizeof() of each field, mapped to our names. The Nccl2307 suite is net v12, profiler v6 and
// tuner v6 from v2.30.7-1's net/net_v12.h, profiler/profiler_v6.h and tuner/tuner_v6.h. The
// Nccl2289And2307 suite is net v8..v11, profiler v5 and tuner v5: the program printed the same
// numbers under both tags.
#include <gtest/gtest.h>

#include <cstddef>
#include <utility>

#include "plugin/nccl/net_abi.h"
#include "plugin/nccl/profiler_abi.h"
#include "plugin/nccl/tuner_abi.h"

namespace {

#define EXPECT_SIZE(T, n) EXPECT_EQ(sizeof(T), std::size_t{n}) << #T
#define EXPECT_FIELD(T, f, off, n)                                                \
  do {                                                                            \
    EXPECT_EQ(offsetof(T, f), std::size_t{off}) << #T "." #f " offset";           \
    EXPECT_EQ(sizeof(std::declval<T&>().f), std::size_t{n}) << #T "." #f " size"; \
  } while (0)
#define EXPECT_CONST(c, v) EXPECT_EQ(static_cast<long long>(c), v) << #c

TEST(Nccl2307, NetV12Properties) {
  EXPECT_SIZE(nccl_net_props_v12, 128);
  EXPECT_FIELD(nccl_net_props_v12, name, 0, 8);
  EXPECT_FIELD(nccl_net_props_v12, pciPath, 8, 8);
  EXPECT_FIELD(nccl_net_props_v12, guid, 16, 8);
  EXPECT_FIELD(nccl_net_props_v12, ptrSupport, 24, 4);
  EXPECT_FIELD(nccl_net_props_v12, regIsGlobal, 28, 4);
  EXPECT_FIELD(nccl_net_props_v12, forceFlush, 32, 4);
  EXPECT_FIELD(nccl_net_props_v12, speed, 36, 4);
  EXPECT_FIELD(nccl_net_props_v12, port, 40, 4);
  EXPECT_FIELD(nccl_net_props_v12, latency, 44, 4);
  EXPECT_FIELD(nccl_net_props_v12, maxComms, 48, 4);
  EXPECT_FIELD(nccl_net_props_v12, maxRecvs, 52, 4);
  EXPECT_FIELD(nccl_net_props_v12, netDeviceType, 56, 4);
  EXPECT_FIELD(nccl_net_props_v12, netDeviceVersion, 60, 4);
  EXPECT_FIELD(nccl_net_props_v12, vProps, 64, 36);
  EXPECT_FIELD(nccl_net_props_v12, vProps.ndevs, 64, 4);
  EXPECT_FIELD(nccl_net_props_v12, vProps.devs, 68, 32);
  EXPECT_FIELD(nccl_net_props_v12, maxP2pBytes, 104, 8);
  EXPECT_FIELD(nccl_net_props_v12, maxCollBytes, 112, 8);
  EXPECT_FIELD(nccl_net_props_v12, maxMultiRequestSize, 120, 4);
  EXPECT_FIELD(nccl_net_props_v12, railId, 124, 2);
  EXPECT_FIELD(nccl_net_props_v12, planeId, 126, 2);
  EXPECT_SIZE(nccl_net_vdevice_props_v12, 36);
  EXPECT_FIELD(nccl_net_vdevice_props_v12, ndevs, 0, 4);
  EXPECT_FIELD(nccl_net_vdevice_props_v12, devs, 4, 32);
  EXPECT_CONST(squeeze::nccl::kMaxDevsPerNicV12, 8);  // NCCL_NET_MAX_DEVS_PER_NIC_V12
  EXPECT_CONST(squeeze::nccl::kNetIdUndef, -1);       // NCCL_NET_ID_UNDEF
}

TEST(Nccl2307, NetV12Table) {
  EXPECT_SIZE(nccl_net_v12, 176);
  EXPECT_FIELD(nccl_net_v12, name, 0, 8);
  EXPECT_FIELD(nccl_net_v12, init, 8, 8);
  EXPECT_FIELD(nccl_net_v12, devices, 16, 8);
  EXPECT_FIELD(nccl_net_v12, getProperties, 24, 8);
  EXPECT_FIELD(nccl_net_v12, listen, 32, 8);
  EXPECT_FIELD(nccl_net_v12, connect, 40, 8);
  EXPECT_FIELD(nccl_net_v12, accept, 48, 8);
  EXPECT_FIELD(nccl_net_v12, regMr, 56, 8);
  EXPECT_FIELD(nccl_net_v12, regMrDmaBuf, 64, 8);
  EXPECT_FIELD(nccl_net_v12, deregMr, 72, 8);
  EXPECT_FIELD(nccl_net_v12, isend, 80, 8);
  EXPECT_FIELD(nccl_net_v12, irecv, 88, 8);
  EXPECT_FIELD(nccl_net_v12, iflush, 96, 8);
  EXPECT_FIELD(nccl_net_v12, test, 104, 8);
  EXPECT_FIELD(nccl_net_v12, closeSend, 112, 8);
  EXPECT_FIELD(nccl_net_v12, closeRecv, 120, 8);
  EXPECT_FIELD(nccl_net_v12, closeListen, 128, 8);
  EXPECT_FIELD(nccl_net_v12, getDeviceMr, 136, 8);
  EXPECT_FIELD(nccl_net_v12, irecvConsumed, 144, 8);
  EXPECT_FIELD(nccl_net_v12, makeVDevice, 152, 8);
  EXPECT_FIELD(nccl_net_v12, finalize, 160, 8);
  EXPECT_FIELD(nccl_net_v12, setNetAttr, 168, 8);
}

TEST(Nccl2307, NetV12SmallTypes) {
  EXPECT_SIZE(nccl_net_comm_config, 4);
  EXPECT_FIELD(nccl_net_comm_config, trafficClass, 0, 4);
  EXPECT_SIZE(nccl_net_comm_attr_v11, 16);
  EXPECT_FIELD(nccl_net_comm_attr_v11, maxConcurrentPeers, 0, 4);
  EXPECT_FIELD(nccl_net_comm_attr_v11, minConcurrentPeers, 4, 4);
  EXPECT_FIELD(nccl_net_comm_attr_v11, maxFlowsPerPeer, 8, 4);
  EXPECT_FIELD(nccl_net_comm_attr_v11, minFlowsPerPeer, 12, 4);
  EXPECT_SIZE(nccl_net_attr_v12, 44);
  EXPECT_FIELD(nccl_net_attr_v12, sendCommAttr, 0, 16);
  EXPECT_FIELD(nccl_net_attr_v12, recvCommAttr, 16, 16);
  EXPECT_FIELD(nccl_net_attr_v12, op, 32, 4);
  EXPECT_FIELD(nccl_net_attr_v12, algo, 36, 4);
  EXPECT_FIELD(nccl_net_attr_v12, proto, 40, 4);
  EXPECT_SIZE(nccl_net_device_handle, 32);
  EXPECT_FIELD(nccl_net_device_handle, type, 0, 4);
  EXPECT_FIELD(nccl_net_device_handle, version, 4, 4);
  EXPECT_FIELD(nccl_net_device_handle, handle, 8, 8);
  EXPECT_FIELD(nccl_net_device_handle, size, 16, 8);
  EXPECT_FIELD(nccl_net_device_handle, needsProxyProgress, 24, 4);
}

TEST(Nccl2307, ProfilerV6Descriptor) {
  EXPECT_SIZE(nccl_profiler_event_descr_v6, 112);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, type, 0, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, parentObj, 8, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, rank, 16, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, groupApi.graphCaptured, 24, 1);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, groupApi.groupDepth, 28, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, collApi.func, 24, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, collApi.count, 32, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, collApi.datatype, 40, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, collApi.root, 48, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, collApi.stream, 56, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, collApi.graphCaptured, 64, 1);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, p2pApi.func, 24, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, p2pApi.count, 32, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, p2pApi.datatype, 40, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, p2pApi.stream, 48, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, p2pApi.graphCaptured, 56, 1);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, kernelLaunch.stream, 24, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, coll.seqNumber, 24, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, coll.func, 32, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, coll.sendBuff, 40, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, coll.recvBuff, 48, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, coll.count, 56, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, coll.root, 64, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, coll.datatype, 72, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, coll.nChannels, 80, 1);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, coll.nWarps, 81, 1);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, coll.algo, 88, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, coll.proto, 96, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, coll.parentGroup, 104, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, p2p.func, 24, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, p2p.buff, 32, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, p2p.datatype, 40, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, p2p.count, 48, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, p2p.peer, 56, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, p2p.nChannels, 60, 1);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, p2p.parentGroup, 64, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, proxyOp.pid, 24, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, proxyOp.channelId, 28, 1);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, proxyOp.peer, 32, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, proxyOp.nSteps, 36, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, proxyOp.chunkSize, 40, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, proxyOp.isSend, 44, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, proxyStep.step, 24, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, kernelCh.channelId, 24, 1);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, kernelCh.pTimer, 32, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, netPlugin.id, 24, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, netPlugin.data, 32, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, ceColl.seqNumber, 24, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, ceColl.func, 32, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, ceColl.sendBuff, 40, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, ceColl.recvBuff, 48, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, ceColl.count, 56, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, ceColl.root, 64, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, ceColl.datatype, 72, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, ceColl.syncStrategy, 80, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, ceColl.intraBatchSync, 88, 1);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, ceColl.batchSize, 92, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, ceColl.numBatches, 96, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, ceColl.ceSeqNum, 100, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, ceColl.stream, 104, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, ceCollSync.isComplete, 24, 1);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, ceCollSync.nRanks, 28, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, ceCollBatch.numOps, 24, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, ceCollBatch.totalBytes, 32, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v6, ceCollBatch.useIntraSync, 40, 1);
  EXPECT_CONST(kProfileCeColl, 4096);    // ncclProfileCeColl
  EXPECT_CONST(kProfileCeSync, 8192);    // ncclProfileCeSync
  EXPECT_CONST(kProfileCeBatch, 16384);  // ncclProfileCeBatch
}

TEST(Nccl2307, ProfilerV6Table) {
  EXPECT_SIZE(nccl_profiler_event_state_args_v6, 8);
  EXPECT_FIELD(nccl_profiler_event_state_args_v6, proxyStep.transSize, 0, 8);
  EXPECT_FIELD(nccl_profiler_event_state_args_v6, proxyCtrl.appendedProxyOps, 0, 4);
  EXPECT_FIELD(nccl_profiler_event_state_args_v6, netPlugin.data, 0, 8);
  EXPECT_FIELD(nccl_profiler_event_state_args_v6, kernelCh.pTimer, 0, 8);
  EXPECT_SIZE(nccl_profiler_v6, 48);
  EXPECT_FIELD(nccl_profiler_v6, name, 0, 8);
  EXPECT_FIELD(nccl_profiler_v6, init, 8, 8);
  EXPECT_FIELD(nccl_profiler_v6, startEvent, 16, 8);
  EXPECT_FIELD(nccl_profiler_v6, stopEvent, 24, 8);
  EXPECT_FIELD(nccl_profiler_v6, recordEventState, 32, 8);
  EXPECT_FIELD(nccl_profiler_v6, finalize, 40, 8);
}

TEST(Nccl2307, TunerV6) {
  EXPECT_SIZE(nccl_tuner_v6, 40);
  EXPECT_FIELD(nccl_tuner_v6, name, 0, 8);
  EXPECT_FIELD(nccl_tuner_v6, init, 8, 8);
  EXPECT_FIELD(nccl_tuner_v6, getCollInfo, 16, 8);
  EXPECT_FIELD(nccl_tuner_v6, finalize, 24, 8);
  EXPECT_FIELD(nccl_tuner_v6, getChunkSize, 32, 8);
  EXPECT_SIZE(nccl_nvl_domain_info_v6, 12);
  EXPECT_FIELD(nccl_nvl_domain_info_v6, nNvlDomains, 0, 4);
  EXPECT_FIELD(nccl_nvl_domain_info_v6, minRanksPerNvlDomain, 4, 4);
  EXPECT_FIELD(nccl_nvl_domain_info_v6, maxRanksPerNvlDomain, 8, 4);
  EXPECT_SIZE(nccl_tuner_constants_v6, 1152);
  EXPECT_FIELD(nccl_tuner_constants_v6, baseLatencies, 0, 168);
  EXPECT_FIELD(nccl_tuner_constants_v6, hwLatencies, 168, 504);
  EXPECT_FIELD(nccl_tuner_constants_v6, llMaxBws, 672, 96);
  EXPECT_FIELD(nccl_tuner_constants_v6, perChMaxRingLL128Bws, 768, 96);
  EXPECT_FIELD(nccl_tuner_constants_v6, perChMaxTreeLL128Bws, 864, 96);
  EXPECT_FIELD(nccl_tuner_constants_v6, perChMaxTreeBws, 960, 96);
  EXPECT_FIELD(nccl_tuner_constants_v6, perChMaxNVLSTreeBws, 1056, 96);
}

TEST(Nccl2289And2307, NetV11) {
  EXPECT_SIZE(nccl_net_props_v11, 112);
  EXPECT_FIELD(nccl_net_props_v11, name, 0, 8);
  EXPECT_FIELD(nccl_net_props_v11, pciPath, 8, 8);
  EXPECT_FIELD(nccl_net_props_v11, guid, 16, 8);
  EXPECT_FIELD(nccl_net_props_v11, ptrSupport, 24, 4);
  EXPECT_FIELD(nccl_net_props_v11, regIsGlobal, 28, 4);
  EXPECT_FIELD(nccl_net_props_v11, forceFlush, 32, 4);
  EXPECT_FIELD(nccl_net_props_v11, speed, 36, 4);
  EXPECT_FIELD(nccl_net_props_v11, port, 40, 4);
  EXPECT_FIELD(nccl_net_props_v11, latency, 44, 4);
  EXPECT_FIELD(nccl_net_props_v11, maxComms, 48, 4);
  EXPECT_FIELD(nccl_net_props_v11, maxRecvs, 52, 4);
  EXPECT_FIELD(nccl_net_props_v11, netDeviceType, 56, 4);
  EXPECT_FIELD(nccl_net_props_v11, netDeviceVersion, 60, 4);
  EXPECT_FIELD(nccl_net_props_v11, vProps, 64, 20);
  EXPECT_FIELD(nccl_net_props_v11, vProps.ndevs, 64, 4);
  EXPECT_FIELD(nccl_net_props_v11, vProps.devs, 68, 16);
  EXPECT_FIELD(nccl_net_props_v11, maxP2pBytes, 88, 8);
  EXPECT_FIELD(nccl_net_props_v11, maxCollBytes, 96, 8);
  EXPECT_FIELD(nccl_net_props_v11, maxMultiRequestSize, 104, 4);
  EXPECT_SIZE(nccl_net_vdevice_props, 20);
  EXPECT_FIELD(nccl_net_vdevice_props, ndevs, 0, 4);
  EXPECT_FIELD(nccl_net_vdevice_props, devs, 4, 16);
  EXPECT_SIZE(nccl_net_v11, 176);
  EXPECT_FIELD(nccl_net_v11, name, 0, 8);
  EXPECT_FIELD(nccl_net_v11, init, 8, 8);
  EXPECT_FIELD(nccl_net_v11, devices, 16, 8);
  EXPECT_FIELD(nccl_net_v11, getProperties, 24, 8);
  EXPECT_FIELD(nccl_net_v11, listen, 32, 8);
  EXPECT_FIELD(nccl_net_v11, connect, 40, 8);
  EXPECT_FIELD(nccl_net_v11, accept, 48, 8);
  EXPECT_FIELD(nccl_net_v11, regMr, 56, 8);
  EXPECT_FIELD(nccl_net_v11, regMrDmaBuf, 64, 8);
  EXPECT_FIELD(nccl_net_v11, deregMr, 72, 8);
  EXPECT_FIELD(nccl_net_v11, isend, 80, 8);
  EXPECT_FIELD(nccl_net_v11, irecv, 88, 8);
  EXPECT_FIELD(nccl_net_v11, iflush, 96, 8);
  EXPECT_FIELD(nccl_net_v11, test, 104, 8);
  EXPECT_FIELD(nccl_net_v11, closeSend, 112, 8);
  EXPECT_FIELD(nccl_net_v11, closeRecv, 120, 8);
  EXPECT_FIELD(nccl_net_v11, closeListen, 128, 8);
  EXPECT_FIELD(nccl_net_v11, getDeviceMr, 136, 8);
  EXPECT_FIELD(nccl_net_v11, irecvConsumed, 144, 8);
  EXPECT_FIELD(nccl_net_v11, makeVDevice, 152, 8);
  EXPECT_FIELD(nccl_net_v11, finalize, 160, 8);
  EXPECT_FIELD(nccl_net_v11, setNetAttr, 168, 8);
  EXPECT_SIZE(nccl_net_comm_config, 4);
  EXPECT_FIELD(nccl_net_comm_config, trafficClass, 0, 4);
  EXPECT_SIZE(nccl_net_attr_v11, 44);
  EXPECT_FIELD(nccl_net_attr_v11, sendCommAttr, 0, 16);
  EXPECT_FIELD(nccl_net_attr_v11, recvCommAttr, 16, 16);
  EXPECT_FIELD(nccl_net_attr_v11, op, 32, 4);
  EXPECT_FIELD(nccl_net_attr_v11, algo, 36, 4);
  EXPECT_FIELD(nccl_net_attr_v11, proto, 40, 4);
  EXPECT_SIZE(nccl_net_device_handle, 32);
  EXPECT_FIELD(nccl_net_device_handle, type, 0, 4);
  EXPECT_FIELD(nccl_net_device_handle, version, 4, 4);
  EXPECT_FIELD(nccl_net_device_handle, handle, 8, 8);
  EXPECT_FIELD(nccl_net_device_handle, size, 16, 8);
  EXPECT_FIELD(nccl_net_device_handle, needsProxyProgress, 24, 4);
}

TEST(Nccl2289And2307, NetV10V9V8) {
  EXPECT_SIZE(nccl_net_props_v10, 104);
  EXPECT_FIELD(nccl_net_props_v10, name, 0, 8);
  EXPECT_FIELD(nccl_net_props_v10, pciPath, 8, 8);
  EXPECT_FIELD(nccl_net_props_v10, guid, 16, 8);
  EXPECT_FIELD(nccl_net_props_v10, ptrSupport, 24, 4);
  EXPECT_FIELD(nccl_net_props_v10, regIsGlobal, 28, 4);
  EXPECT_FIELD(nccl_net_props_v10, forceFlush, 32, 4);
  EXPECT_FIELD(nccl_net_props_v10, speed, 36, 4);
  EXPECT_FIELD(nccl_net_props_v10, port, 40, 4);
  EXPECT_FIELD(nccl_net_props_v10, latency, 44, 4);
  EXPECT_FIELD(nccl_net_props_v10, maxComms, 48, 4);
  EXPECT_FIELD(nccl_net_props_v10, maxRecvs, 52, 4);
  EXPECT_FIELD(nccl_net_props_v10, netDeviceType, 56, 4);
  EXPECT_FIELD(nccl_net_props_v10, netDeviceVersion, 60, 4);
  EXPECT_FIELD(nccl_net_props_v10, vProps, 64, 20);
  EXPECT_FIELD(nccl_net_props_v10, vProps.ndevs, 64, 4);
  EXPECT_FIELD(nccl_net_props_v10, vProps.devs, 68, 16);
  EXPECT_FIELD(nccl_net_props_v10, maxP2pBytes, 88, 8);
  EXPECT_FIELD(nccl_net_props_v10, maxCollBytes, 96, 8);
  EXPECT_SIZE(nccl_net_props_v9, 104);
  EXPECT_FIELD(nccl_net_props_v9, name, 0, 8);
  EXPECT_FIELD(nccl_net_props_v9, pciPath, 8, 8);
  EXPECT_FIELD(nccl_net_props_v9, guid, 16, 8);
  EXPECT_FIELD(nccl_net_props_v9, ptrSupport, 24, 4);
  EXPECT_FIELD(nccl_net_props_v9, regIsGlobal, 28, 4);
  EXPECT_FIELD(nccl_net_props_v9, forceFlush, 32, 4);
  EXPECT_FIELD(nccl_net_props_v9, speed, 36, 4);
  EXPECT_FIELD(nccl_net_props_v9, port, 40, 4);
  EXPECT_FIELD(nccl_net_props_v9, latency, 44, 4);
  EXPECT_FIELD(nccl_net_props_v9, maxComms, 48, 4);
  EXPECT_FIELD(nccl_net_props_v9, maxRecvs, 52, 4);
  EXPECT_FIELD(nccl_net_props_v9, netDeviceType, 56, 4);
  EXPECT_FIELD(nccl_net_props_v9, netDeviceVersion, 60, 4);
  EXPECT_FIELD(nccl_net_props_v9, vProps, 64, 20);
  EXPECT_FIELD(nccl_net_props_v9, vProps.ndevs, 64, 4);
  EXPECT_FIELD(nccl_net_props_v9, vProps.devs, 68, 16);
  EXPECT_FIELD(nccl_net_props_v9, maxP2pBytes, 88, 8);
  EXPECT_FIELD(nccl_net_props_v9, maxCollBytes, 96, 8);
  EXPECT_SIZE(nccl_net_props_v8, 64);
  EXPECT_FIELD(nccl_net_props_v8, name, 0, 8);
  EXPECT_FIELD(nccl_net_props_v8, pciPath, 8, 8);
  EXPECT_FIELD(nccl_net_props_v8, guid, 16, 8);
  EXPECT_FIELD(nccl_net_props_v8, ptrSupport, 24, 4);
  EXPECT_FIELD(nccl_net_props_v8, regIsGlobal, 28, 4);
  EXPECT_FIELD(nccl_net_props_v8, speed, 32, 4);
  EXPECT_FIELD(nccl_net_props_v8, port, 36, 4);
  EXPECT_FIELD(nccl_net_props_v8, latency, 40, 4);
  EXPECT_FIELD(nccl_net_props_v8, maxComms, 44, 4);
  EXPECT_FIELD(nccl_net_props_v8, maxRecvs, 48, 4);
  EXPECT_FIELD(nccl_net_props_v8, netDeviceType, 52, 4);
  EXPECT_FIELD(nccl_net_props_v8, netDeviceVersion, 56, 4);
  EXPECT_SIZE(nccl_net_v10, 160);
  EXPECT_FIELD(nccl_net_v10, name, 0, 8);
  EXPECT_FIELD(nccl_net_v10, init, 8, 8);
  EXPECT_FIELD(nccl_net_v10, devices, 16, 8);
  EXPECT_FIELD(nccl_net_v10, getProperties, 24, 8);
  EXPECT_FIELD(nccl_net_v10, listen, 32, 8);
  EXPECT_FIELD(nccl_net_v10, connect, 40, 8);
  EXPECT_FIELD(nccl_net_v10, accept, 48, 8);
  EXPECT_FIELD(nccl_net_v10, regMr, 56, 8);
  EXPECT_FIELD(nccl_net_v10, regMrDmaBuf, 64, 8);
  EXPECT_FIELD(nccl_net_v10, deregMr, 72, 8);
  EXPECT_FIELD(nccl_net_v10, isend, 80, 8);
  EXPECT_FIELD(nccl_net_v10, irecv, 88, 8);
  EXPECT_FIELD(nccl_net_v10, iflush, 96, 8);
  EXPECT_FIELD(nccl_net_v10, test, 104, 8);
  EXPECT_FIELD(nccl_net_v10, closeSend, 112, 8);
  EXPECT_FIELD(nccl_net_v10, closeRecv, 120, 8);
  EXPECT_FIELD(nccl_net_v10, closeListen, 128, 8);
  EXPECT_FIELD(nccl_net_v10, getDeviceMr, 136, 8);
  EXPECT_FIELD(nccl_net_v10, irecvConsumed, 144, 8);
  EXPECT_FIELD(nccl_net_v10, makeVDevice, 152, 8);
  EXPECT_SIZE(nccl_net_v9, 160);
  EXPECT_FIELD(nccl_net_v9, name, 0, 8);
  EXPECT_FIELD(nccl_net_v9, init, 8, 8);
  EXPECT_FIELD(nccl_net_v9, devices, 16, 8);
  EXPECT_FIELD(nccl_net_v9, getProperties, 24, 8);
  EXPECT_FIELD(nccl_net_v9, listen, 32, 8);
  EXPECT_FIELD(nccl_net_v9, connect, 40, 8);
  EXPECT_FIELD(nccl_net_v9, accept, 48, 8);
  EXPECT_FIELD(nccl_net_v9, regMr, 56, 8);
  EXPECT_FIELD(nccl_net_v9, regMrDmaBuf, 64, 8);
  EXPECT_FIELD(nccl_net_v9, deregMr, 72, 8);
  EXPECT_FIELD(nccl_net_v9, isend, 80, 8);
  EXPECT_FIELD(nccl_net_v9, irecv, 88, 8);
  EXPECT_FIELD(nccl_net_v9, iflush, 96, 8);
  EXPECT_FIELD(nccl_net_v9, test, 104, 8);
  EXPECT_FIELD(nccl_net_v9, closeSend, 112, 8);
  EXPECT_FIELD(nccl_net_v9, closeRecv, 120, 8);
  EXPECT_FIELD(nccl_net_v9, closeListen, 128, 8);
  EXPECT_FIELD(nccl_net_v9, getDeviceMr, 136, 8);
  EXPECT_FIELD(nccl_net_v9, irecvConsumed, 144, 8);
  EXPECT_FIELD(nccl_net_v9, makeVDevice, 152, 8);
  EXPECT_SIZE(nccl_net_v8, 152);
  EXPECT_FIELD(nccl_net_v8, name, 0, 8);
  EXPECT_FIELD(nccl_net_v8, init, 8, 8);
  EXPECT_FIELD(nccl_net_v8, devices, 16, 8);
  EXPECT_FIELD(nccl_net_v8, getProperties, 24, 8);
  EXPECT_FIELD(nccl_net_v8, listen, 32, 8);
  EXPECT_FIELD(nccl_net_v8, connect, 40, 8);
  EXPECT_FIELD(nccl_net_v8, accept, 48, 8);
  EXPECT_FIELD(nccl_net_v8, regMr, 56, 8);
  EXPECT_FIELD(nccl_net_v8, regMrDmaBuf, 64, 8);
  EXPECT_FIELD(nccl_net_v8, deregMr, 72, 8);
  EXPECT_FIELD(nccl_net_v8, isend, 80, 8);
  EXPECT_FIELD(nccl_net_v8, irecv, 88, 8);
  EXPECT_FIELD(nccl_net_v8, iflush, 96, 8);
  EXPECT_FIELD(nccl_net_v8, test, 104, 8);
  EXPECT_FIELD(nccl_net_v8, closeSend, 112, 8);
  EXPECT_FIELD(nccl_net_v8, closeRecv, 120, 8);
  EXPECT_FIELD(nccl_net_v8, closeListen, 128, 8);
  EXPECT_FIELD(nccl_net_v8, getDeviceMr, 136, 8);
  EXPECT_FIELD(nccl_net_v8, irecvConsumed, 144, 8);
}

TEST(Nccl2289And2307, ProfilerV5) {
  EXPECT_SIZE(nccl_profiler_event_descr_v5, 112);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, type, 0, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, parentObj, 8, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, rank, 16, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, groupApi.graphCaptured, 24, 1);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, groupApi.groupDepth, 28, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, collApi.func, 24, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, collApi.count, 32, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, collApi.datatype, 40, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, collApi.root, 48, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, collApi.stream, 56, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, collApi.graphCaptured, 64, 1);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, p2pApi.func, 24, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, p2pApi.count, 32, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, p2pApi.datatype, 40, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, p2pApi.stream, 48, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, p2pApi.graphCaptured, 56, 1);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, kernelLaunch.stream, 24, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, coll.seqNumber, 24, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, coll.func, 32, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, coll.sendBuff, 40, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, coll.recvBuff, 48, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, coll.count, 56, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, coll.root, 64, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, coll.datatype, 72, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, coll.nChannels, 80, 1);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, coll.nWarps, 81, 1);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, coll.algo, 88, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, coll.proto, 96, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, coll.parentGroup, 104, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, p2p.func, 24, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, p2p.buff, 32, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, p2p.datatype, 40, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, p2p.count, 48, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, p2p.peer, 56, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, p2p.nChannels, 60, 1);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, p2p.parentGroup, 64, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, proxyOp.pid, 24, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, proxyOp.channelId, 28, 1);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, proxyOp.peer, 32, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, proxyOp.nSteps, 36, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, proxyOp.chunkSize, 40, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, proxyOp.isSend, 44, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, proxyStep.step, 24, 4);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, kernelCh.channelId, 24, 1);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, kernelCh.pTimer, 32, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, netPlugin.id, 24, 8);
  EXPECT_FIELD(nccl_profiler_event_descr_v5, netPlugin.data, 32, 8);
  EXPECT_SIZE(nccl_profiler_event_state_args_v5, 8);
  EXPECT_FIELD(nccl_profiler_event_state_args_v5, proxyStep.transSize, 0, 8);
  EXPECT_FIELD(nccl_profiler_event_state_args_v5, proxyCtrl.appendedProxyOps, 0, 4);
  EXPECT_FIELD(nccl_profiler_event_state_args_v5, netPlugin.data, 0, 8);
  EXPECT_FIELD(nccl_profiler_event_state_args_v5, kernelCh.pTimer, 0, 8);
  EXPECT_SIZE(nccl_profiler_v5, 48);
  EXPECT_FIELD(nccl_profiler_v5, name, 0, 8);
  EXPECT_FIELD(nccl_profiler_v5, init, 8, 8);
  EXPECT_FIELD(nccl_profiler_v5, startEvent, 16, 8);
  EXPECT_FIELD(nccl_profiler_v5, stopEvent, 24, 8);
  EXPECT_FIELD(nccl_profiler_v5, recordEventState, 32, 8);
  EXPECT_FIELD(nccl_profiler_v5, finalize, 40, 8);
  EXPECT_CONST(kProfileNetPlugin, 128);        // ncclProfileNetPlugin
  EXPECT_CONST(kProfilerNetPluginUpdate, 21);  // ncclProfilerNetPluginUpdate
}

TEST(Nccl2289And2307, TunerV5) {
  EXPECT_SIZE(nccl_tuner_v5, 32);
  EXPECT_FIELD(nccl_tuner_v5, name, 0, 8);
  EXPECT_FIELD(nccl_tuner_v5, init, 8, 8);
  EXPECT_FIELD(nccl_tuner_v5, getCollInfo, 16, 8);
  EXPECT_FIELD(nccl_tuner_v5, finalize, 24, 8);
  EXPECT_SIZE(nccl_nvl_domain_info_v5, 12);
  EXPECT_FIELD(nccl_nvl_domain_info_v5, nNvlDomains, 0, 4);
  EXPECT_FIELD(nccl_nvl_domain_info_v5, minRanksPerNvlDomain, 4, 4);
  EXPECT_FIELD(nccl_nvl_domain_info_v5, maxRanksPerNvlDomain, 8, 4);
  EXPECT_SIZE(nccl_tuner_constants_v5, 1152);
  EXPECT_FIELD(nccl_tuner_constants_v5, baseLatencies, 0, 168);
  EXPECT_FIELD(nccl_tuner_constants_v5, hwLatencies, 168, 504);
  EXPECT_FIELD(nccl_tuner_constants_v5, llMaxBws, 672, 96);
  EXPECT_FIELD(nccl_tuner_constants_v5, perChMaxRingLL128Bws, 768, 96);
  EXPECT_FIELD(nccl_tuner_constants_v5, perChMaxTreeLL128Bws, 864, 96);
  EXPECT_FIELD(nccl_tuner_constants_v5, perChMaxTreeBws, 960, 96);
  EXPECT_FIELD(nccl_tuner_constants_v5, perChMaxNVLSTreeBws, 1056, 96);
  EXPECT_CONST(squeeze::nccl::kNumAlgorithms, 7);  // NCCL_NUM_ALGORITHMS_V5
  EXPECT_CONST(squeeze::nccl::kNumProtocols, 3);   // NCCL_NUM_PROTOCOLS_V5
}

}  // namespace
