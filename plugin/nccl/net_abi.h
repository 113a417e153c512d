// Squeeze's own declarations of NCCL's net plugin tables, versions 8 to 12.
// Field order is the ABI; see shared/DESIGN.md §1 for where each fact comes from (v12: NCCL
// 2.30.7's src/include/plugin/net/net_v12.h). tests/plugin/abi_layout_test.cc checks every
// size and offset against NCCL's headers.
#pragma once

#include "plugin/nccl/common.h"

extern "C" {

// ncclNetDeviceHandle_v8..v12
struct nccl_net_device_handle {
  int type;  // ncclNetDeviceType: 0 = host
  int version;
  void* handle;
  std::size_t size;
  int needsProxyProgress;
};

struct nccl_net_vdevice_props {  // v9..v11
  int ndevs;
  int devs[squeeze::nccl::kMaxDevsPerNic];
};

struct nccl_net_vdevice_props_v12 {  // 8 virtual devices per NIC instead of 4
  int ndevs;
  int devs[squeeze::nccl::kMaxDevsPerNicV12];
};

struct nccl_net_comm_config {  // v10, v11, v12
  int trafficClass;
};

struct nccl_net_comm_attr_v11 {
  int32_t maxConcurrentPeers;
  int32_t minConcurrentPeers;
  int32_t maxFlowsPerPeer;
  int32_t minFlowsPerPeer;
};

struct nccl_net_attr_v11 {
  nccl_net_comm_attr_v11 sendCommAttr;
  nccl_net_comm_attr_v11 recvCommAttr;
  uint32_t op;
  uint32_t algo;
  uint32_t proto;
};
using nccl_net_attr_v12 = nccl_net_attr_v11;  // unchanged in v12

struct nccl_net_props_v8 {
  char* name;
  char* pciPath;
  uint64_t guid;
  int ptrSupport;
  int regIsGlobal;
  int speed;  // Mbps
  int port;
  float latency;
  int maxComms;
  int maxRecvs;
  int netDeviceType;
  int netDeviceVersion;
};

struct nccl_net_props_v9 {  // v10 is identical
  char* name;
  char* pciPath;
  uint64_t guid;
  int ptrSupport;
  int regIsGlobal;
  int forceFlush;
  int speed;
  int port;
  float latency;
  int maxComms;
  int maxRecvs;
  int netDeviceType;
  int netDeviceVersion;
  nccl_net_vdevice_props vProps;
  std::size_t maxP2pBytes;
  std::size_t maxCollBytes;
};
using nccl_net_props_v10 = nccl_net_props_v9;

struct nccl_net_props_v11 {
  char* name;
  char* pciPath;
  uint64_t guid;
  int ptrSupport;
  int regIsGlobal;
  int forceFlush;
  int speed;
  int port;
  float latency;
  int maxComms;
  int maxRecvs;
  int netDeviceType;
  int netDeviceVersion;
  nccl_net_vdevice_props vProps;
  std::size_t maxP2pBytes;
  std::size_t maxCollBytes;
  int maxMultiRequestSize;
};

// v11's fields with 8 virtual devices per NIC, then the NIC's rail and plane (kNetIdUndef
// when unknown).
struct nccl_net_props_v12 {
  char* name;
  char* pciPath;
  uint64_t guid;
  int ptrSupport;
  int regIsGlobal;
  int forceFlush;
  int speed;
  int port;
  float latency;
  int maxComms;
  int maxRecvs;
  int netDeviceType;
  int netDeviceVersion;
  nccl_net_vdevice_props_v12 vProps;
  std::size_t maxP2pBytes;
  std::size_t maxCollBytes;
  int maxMultiRequestSize;
  int16_t railId;
  int16_t planeId;
};

struct nccl_net_v8 {
  const char* name;
  nccl_result_t (*init)(nccl_logger_t log);
  nccl_result_t (*devices)(int* ndev);
  nccl_result_t (*getProperties)(int dev, nccl_net_props_v8* props);
  nccl_result_t (*listen)(int dev, void* handle, void** listenComm);
  nccl_result_t (*connect)(int dev, void* handle, void** sendComm,
                           nccl_net_device_handle** sendDevComm);
  nccl_result_t (*accept)(void* listenComm, void** recvComm, nccl_net_device_handle** recvDevComm);
  nccl_result_t (*regMr)(void* comm, void* data, std::size_t size, int type, void** mhandle);
  nccl_result_t (*regMrDmaBuf)(void* comm, void* data, std::size_t size, int type, uint64_t offset,
                               int fd, void** mhandle);
  nccl_result_t (*deregMr)(void* comm, void* mhandle);
  nccl_result_t (*isend)(void* sendComm, void* data, int size, int tag, void* mhandle,
                         void** request);
  nccl_result_t (*irecv)(void* recvComm, int n, void** data, int* sizes, int* tags, void** mhandles,
                         void** request);
  nccl_result_t (*iflush)(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                          void** request);
  nccl_result_t (*test)(void* request, int* done, int* sizes);
  nccl_result_t (*closeSend)(void* sendComm);
  nccl_result_t (*closeRecv)(void* recvComm);
  nccl_result_t (*closeListen)(void* listenComm);
  nccl_result_t (*getDeviceMr)(void* comm, void* mhandle, void** dptr_mhandle);
  nccl_result_t (*irecvConsumed)(void* recvComm, int n, void* request);
};

struct nccl_net_v9 {
  const char* name;
  nccl_result_t (*init)(nccl_logger_t log);
  nccl_result_t (*devices)(int* ndev);
  nccl_result_t (*getProperties)(int dev, nccl_net_props_v9* props);
  nccl_result_t (*listen)(int dev, void* handle, void** listenComm);
  nccl_result_t (*connect)(int dev, void* handle, void** sendComm,
                           nccl_net_device_handle** sendDevComm);
  nccl_result_t (*accept)(void* listenComm, void** recvComm, nccl_net_device_handle** recvDevComm);
  nccl_result_t (*regMr)(void* comm, void* data, std::size_t size, int type, void** mhandle);
  nccl_result_t (*regMrDmaBuf)(void* comm, void* data, std::size_t size, int type, uint64_t offset,
                               int fd, void** mhandle);
  nccl_result_t (*deregMr)(void* comm, void* mhandle);
  nccl_result_t (*isend)(void* sendComm, void* data, std::size_t size, int tag, void* mhandle,
                         void** request);
  nccl_result_t (*irecv)(void* recvComm, int n, void** data, std::size_t* sizes, int* tags,
                         void** mhandles, void** request);
  nccl_result_t (*iflush)(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                          void** request);
  nccl_result_t (*test)(void* request, int* done, int* sizes);
  nccl_result_t (*closeSend)(void* sendComm);
  nccl_result_t (*closeRecv)(void* recvComm);
  nccl_result_t (*closeListen)(void* listenComm);
  nccl_result_t (*getDeviceMr)(void* comm, void* mhandle, void** dptr_mhandle);
  nccl_result_t (*irecvConsumed)(void* recvComm, int n, void* request);
  nccl_result_t (*makeVDevice)(int* d, nccl_net_vdevice_props* props);
};

struct nccl_net_v10 {
  const char* name;
  nccl_result_t (*init)(nccl_logger_t log, nccl_profiler_callback_t prof);
  nccl_result_t (*devices)(int* ndev);
  nccl_result_t (*getProperties)(int dev, nccl_net_props_v10* props);
  nccl_result_t (*listen)(int dev, void* handle, void** listenComm);
  nccl_result_t (*connect)(int dev, nccl_net_comm_config* config, void* handle, void** sendComm,
                           nccl_net_device_handle** sendDevComm);
  nccl_result_t (*accept)(void* listenComm, void** recvComm, nccl_net_device_handle** recvDevComm);
  nccl_result_t (*regMr)(void* comm, void* data, std::size_t size, int type, void** mhandle);
  nccl_result_t (*regMrDmaBuf)(void* comm, void* data, std::size_t size, int type, uint64_t offset,
                               int fd, void** mhandle);
  nccl_result_t (*deregMr)(void* comm, void* mhandle);
  nccl_result_t (*isend)(void* sendComm, void* data, std::size_t size, int tag, void* mhandle,
                         void* phandle, void** request);
  nccl_result_t (*irecv)(void* recvComm, int n, void** data, std::size_t* sizes, int* tags,
                         void** mhandles, void** phandles, void** request);
  nccl_result_t (*iflush)(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                          void** request);
  nccl_result_t (*test)(void* request, int* done, int* sizes);
  nccl_result_t (*closeSend)(void* sendComm);
  nccl_result_t (*closeRecv)(void* recvComm);
  nccl_result_t (*closeListen)(void* listenComm);
  nccl_result_t (*getDeviceMr)(void* comm, void* mhandle, void** dptr_mhandle);
  nccl_result_t (*irecvConsumed)(void* recvComm, int n, void* request);
  nccl_result_t (*makeVDevice)(int* d, nccl_net_vdevice_props* props);
};

struct nccl_net_v11 {
  const char* name;
  nccl_result_t (*init)(void** ctx, uint64_t commId, nccl_net_comm_config* config,
                        nccl_logger_t log, nccl_profiler_callback_t prof);
  nccl_result_t (*devices)(int* ndev);
  nccl_result_t (*getProperties)(int dev, nccl_net_props_v11* props);
  nccl_result_t (*listen)(void* ctx, int dev, void* handle, void** listenComm);
  nccl_result_t (*connect)(void* ctx, int dev, void* handle, void** sendComm,
                           nccl_net_device_handle** sendDevComm);
  nccl_result_t (*accept)(void* listenComm, void** recvComm, nccl_net_device_handle** recvDevComm);
  nccl_result_t (*regMr)(void* comm, void* data, std::size_t size, int type, void** mhandle);
  nccl_result_t (*regMrDmaBuf)(void* comm, void* data, std::size_t size, int type, uint64_t offset,
                               int fd, void** mhandle);
  nccl_result_t (*deregMr)(void* comm, void* mhandle);
  nccl_result_t (*isend)(void* sendComm, void* data, std::size_t size, int tag, void* mhandle,
                         void* phandle, void** request);
  nccl_result_t (*irecv)(void* recvComm, int n, void** data, std::size_t* sizes, int* tags,
                         void** mhandles, void** phandles, void** request);
  nccl_result_t (*iflush)(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                          void** request);
  nccl_result_t (*test)(void* request, int* done, int* sizes);
  nccl_result_t (*closeSend)(void* sendComm);
  nccl_result_t (*closeRecv)(void* recvComm);
  nccl_result_t (*closeListen)(void* listenComm);
  nccl_result_t (*getDeviceMr)(void* comm, void* mhandle, void** dptr_mhandle);
  nccl_result_t (*irecvConsumed)(void* recvComm, int n, void* request);
  nccl_result_t (*makeVDevice)(int* d, nccl_net_vdevice_props* props);
  nccl_result_t (*finalize)(void* ctx);
  nccl_result_t (*setNetAttr)(void* ctx, nccl_net_attr_v11* attr);
};

// v11's function table over the v12 property and virtual-device types.
struct nccl_net_v12 {
  const char* name;
  nccl_result_t (*init)(void** ctx, uint64_t commId, nccl_net_comm_config* config,
                        nccl_logger_t log, nccl_profiler_callback_t prof);
  nccl_result_t (*devices)(int* ndev);
  nccl_result_t (*getProperties)(int dev, nccl_net_props_v12* props);
  nccl_result_t (*listen)(void* ctx, int dev, void* handle, void** listenComm);
  nccl_result_t (*connect)(void* ctx, int dev, void* handle, void** sendComm,
                           nccl_net_device_handle** sendDevComm);
  nccl_result_t (*accept)(void* listenComm, void** recvComm, nccl_net_device_handle** recvDevComm);
  nccl_result_t (*regMr)(void* comm, void* data, std::size_t size, int type, void** mhandle);
  nccl_result_t (*regMrDmaBuf)(void* comm, void* data, std::size_t size, int type, uint64_t offset,
                               int fd, void** mhandle);
  nccl_result_t (*deregMr)(void* comm, void* mhandle);
  nccl_result_t (*isend)(void* sendComm, void* data, std::size_t size, int tag, void* mhandle,
                         void* phandle, void** request);
  nccl_result_t (*irecv)(void* recvComm, int n, void** data, std::size_t* sizes, int* tags,
                         void** mhandles, void** phandles, void** request);
  nccl_result_t (*iflush)(void* recvComm, int n, void** data, int* sizes, void** mhandles,
                          void** request);
  nccl_result_t (*test)(void* request, int* done, int* sizes);
  nccl_result_t (*closeSend)(void* sendComm);
  nccl_result_t (*closeRecv)(void* recvComm);
  nccl_result_t (*closeListen)(void* listenComm);
  nccl_result_t (*getDeviceMr)(void* comm, void* mhandle, void** dptr_mhandle);
  nccl_result_t (*irecvConsumed)(void* recvComm, int n, void* request);
  nccl_result_t (*makeVDevice)(int* d, nccl_net_vdevice_props_v12* props);
  nccl_result_t (*finalize)(void* ctx);
  nccl_result_t (*setNetAttr)(void* ctx, nccl_net_attr_v12* attr);
};

}  // extern "C"
