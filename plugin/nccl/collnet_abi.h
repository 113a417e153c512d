// Squeeze's own declarations of NCCL's collective network (CollNet) plugin
// tables, versions 8 to 11, written from the facts in plugin/nccl/COLLNET.md
// (NCCL 2.28.9, src/include/plugin/net/net_v8.h .. net_v11.h). Field order is
// the ABI; names are ours. NCCL takes the newest version it knows (2.28:
// v11; 2.26-2.27: v10; 2.24-2.25: v9; 2.20-2.23: v8) and uses that table
// directly.
#pragma once

#include <cstddef>
#include <cstdint>

#include "plugin/nccl/common.h"
#include "plugin/nccl/net_abi.h"

extern "C" {

// ncclDataType_t and ncclRedOp_t are enums of int size.
using nccl_data_type_t = int;
using nccl_red_op_t = int;

// ncclNetSGE_v8_t .. v11: one part of a scattered buffer (iallgather,
// ireducescatter).
struct nccl_net_sge {
  void* mhandle;
  void* address;
  std::size_t size;
};

struct nccl_collnet_v8 {
  const char* name;
  nccl_result_t (*init)(nccl_logger_t log);
  nccl_result_t (*devices)(int* ndev);
  nccl_result_t (*getProperties)(int dev, nccl_net_props_v8* props);
  nccl_result_t (*listen)(int dev, void* handle, void** listenComm);
  nccl_result_t (*connect)(void* handles[], int nranks, int rank, void* listenComm,
                           void** collComm);
  nccl_result_t (*reduceSupport)(nccl_data_type_t dataType, nccl_red_op_t redOp, int* supported);
  nccl_result_t (*regMr)(void* collComm, void* data, std::size_t size, int type, void** mhandle);
  nccl_result_t (*regMrDmaBuf)(void* collComm, void* data, std::size_t size, int type,
                               uint64_t offset, int fd, void** mhandle);
  nccl_result_t (*deregMr)(void* collComm, void* mhandle);
  nccl_result_t (*iallreduce)(void* collComm, void* sendData, void* recvData, int count,
                              nccl_data_type_t dataType, nccl_red_op_t redOp, void* sendMhandle,
                              void* recvMhandle, void** request);
  nccl_result_t (*iallgather)(void* collComm, void* sendData, int nRecvParts,
                              nccl_net_sge* recvParts, std::size_t bytesPerRank,
                              std::size_t windowOffset, std::size_t windowBytes, void* sendMhandle,
                              void** request);
  nccl_result_t (*ireducescatter)(void* collComm, int nSendParts, nccl_net_sge* sendParts,
                                  void* recvData, std::size_t bytesPerRank,
                                  std::size_t windowOffset, std::size_t windowBytes,
                                  nccl_data_type_t dataType, nccl_red_op_t redOp, void* recvMhandle,
                                  void** request);
  nccl_result_t (*iflush)(void* collComm, void* data, int size, void* mhandle, void** request);
  nccl_result_t (*test)(void* request, int* done, int* size);
  nccl_result_t (*closeColl)(void* collComm);
  nccl_result_t (*closeListen)(void* listenComm);
};

// v9: size_t count in iallreduce, v9 properties, makeVDevice.
struct nccl_collnet_v9 {
  const char* name;
  nccl_result_t (*init)(nccl_logger_t log);
  nccl_result_t (*devices)(int* ndev);
  nccl_result_t (*getProperties)(int dev, nccl_net_props_v9* props);
  nccl_result_t (*listen)(int dev, void* handle, void** listenComm);
  nccl_result_t (*connect)(void* handles[], int nranks, int rank, void* listenComm,
                           void** collComm);
  nccl_result_t (*reduceSupport)(nccl_data_type_t dataType, nccl_red_op_t redOp, int* supported);
  nccl_result_t (*regMr)(void* collComm, void* data, std::size_t size, int type, void** mhandle);
  nccl_result_t (*regMrDmaBuf)(void* collComm, void* data, std::size_t size, int type,
                               uint64_t offset, int fd, void** mhandle);
  nccl_result_t (*deregMr)(void* collComm, void* mhandle);
  nccl_result_t (*iallreduce)(void* collComm, void* sendData, void* recvData, std::size_t count,
                              nccl_data_type_t dataType, nccl_red_op_t redOp, void* sendMhandle,
                              void* recvMhandle, void** request);
  nccl_result_t (*iallgather)(void* collComm, void* sendData, int nRecvParts,
                              nccl_net_sge* recvParts, std::size_t bytesPerRank,
                              std::size_t windowOffset, std::size_t windowBytes, void* sendMhandle,
                              void** request);
  nccl_result_t (*ireducescatter)(void* collComm, int nSendParts, nccl_net_sge* sendParts,
                                  void* recvData, std::size_t bytesPerRank,
                                  std::size_t windowOffset, std::size_t windowBytes,
                                  nccl_data_type_t dataType, nccl_red_op_t redOp, void* recvMhandle,
                                  void** request);
  nccl_result_t (*iflush)(void* collComm, void* data, int size, void* mhandle, void** request);
  nccl_result_t (*test)(void* request, int* done, int* size);
  nccl_result_t (*closeColl)(void* collComm);
  nccl_result_t (*closeListen)(void* listenComm);
  nccl_result_t (*makeVDevice)(int* d, nccl_net_vdevice_props* props);
};

// v10 has the same layout as v9 (its properties type is v9's).
using nccl_collnet_v10 = nccl_collnet_v9;

// v11: init gets a per-communicator context and the commId; listen gets the
// context back; finalize(ctx) ends the table.
struct nccl_collnet_v11 {
  const char* name;
  nccl_result_t (*init)(void** ctx, uint64_t commId, nccl_logger_t log);
  nccl_result_t (*devices)(int* ndev);
  nccl_result_t (*getProperties)(int dev, nccl_net_props_v11* props);
  nccl_result_t (*listen)(void* ctx, int dev, void* handle, void** listenComm);
  nccl_result_t (*connect)(void* handles[], int nranks, int rank, void* listenComm,
                           void** collComm);
  nccl_result_t (*reduceSupport)(nccl_data_type_t dataType, nccl_red_op_t redOp, int* supported);
  nccl_result_t (*regMr)(void* collComm, void* data, std::size_t size, int type, void** mhandle);
  nccl_result_t (*regMrDmaBuf)(void* collComm, void* data, std::size_t size, int type,
                               uint64_t offset, int fd, void** mhandle);
  nccl_result_t (*deregMr)(void* collComm, void* mhandle);
  nccl_result_t (*iallreduce)(void* collComm, void* sendData, void* recvData, std::size_t count,
                              nccl_data_type_t dataType, nccl_red_op_t redOp, void* sendMhandle,
                              void* recvMhandle, void** request);
  nccl_result_t (*iallgather)(void* collComm, void* sendData, int nRecvParts,
                              nccl_net_sge* recvParts, std::size_t bytesPerRank,
                              std::size_t windowOffset, std::size_t windowBytes, void* sendMhandle,
                              void** request);
  nccl_result_t (*ireducescatter)(void* collComm, int nSendParts, nccl_net_sge* sendParts,
                                  void* recvData, std::size_t bytesPerRank,
                                  std::size_t windowOffset, std::size_t windowBytes,
                                  nccl_data_type_t dataType, nccl_red_op_t redOp, void* recvMhandle,
                                  void** request);
  nccl_result_t (*iflush)(void* collComm, void* data, int size, void* mhandle, void** request);
  nccl_result_t (*test)(void* request, int* done, int* size);
  nccl_result_t (*closeColl)(void* collComm);
  nccl_result_t (*closeListen)(void* listenComm);
  nccl_result_t (*makeVDevice)(int* d, nccl_net_vdevice_props* props);
  nccl_result_t (*finalize)(void* ctx);
};

// v12 (NCCL 2.30): v11's table over the v12 property and virtual-device types.
struct nccl_collnet_v12 {
  const char* name;
  nccl_result_t (*init)(void** ctx, uint64_t commId, nccl_logger_t log);
  nccl_result_t (*devices)(int* ndev);
  nccl_result_t (*getProperties)(int dev, nccl_net_props_v12* props);
  nccl_result_t (*listen)(void* ctx, int dev, void* handle, void** listenComm);
  nccl_result_t (*connect)(void* handles[], int nranks, int rank, void* listenComm,
                           void** collComm);
  nccl_result_t (*reduceSupport)(nccl_data_type_t dataType, nccl_red_op_t redOp, int* supported);
  nccl_result_t (*regMr)(void* collComm, void* data, std::size_t size, int type, void** mhandle);
  nccl_result_t (*regMrDmaBuf)(void* collComm, void* data, std::size_t size, int type,
                               uint64_t offset, int fd, void** mhandle);
  nccl_result_t (*deregMr)(void* collComm, void* mhandle);
  nccl_result_t (*iallreduce)(void* collComm, void* sendData, void* recvData, std::size_t count,
                              nccl_data_type_t dataType, nccl_red_op_t redOp, void* sendMhandle,
                              void* recvMhandle, void** request);
  nccl_result_t (*iallgather)(void* collComm, void* sendData, int nRecvParts,
                              nccl_net_sge* recvParts, std::size_t bytesPerRank,
                              std::size_t windowOffset, std::size_t windowBytes, void* sendMhandle,
                              void** request);
  nccl_result_t (*ireducescatter)(void* collComm, int nSendParts, nccl_net_sge* sendParts,
                                  void* recvData, std::size_t bytesPerRank,
                                  std::size_t windowOffset, std::size_t windowBytes,
                                  nccl_data_type_t dataType, nccl_red_op_t redOp, void* recvMhandle,
                                  void** request);
  nccl_result_t (*iflush)(void* collComm, void* data, int size, void* mhandle, void** request);
  nccl_result_t (*test)(void* request, int* done, int* size);
  nccl_result_t (*closeColl)(void* collComm);
  nccl_result_t (*closeListen)(void* listenComm);
  nccl_result_t (*makeVDevice)(int* d, nccl_net_vdevice_props_v12* props);
  nccl_result_t (*finalize)(void* ctx);
};

}  // extern "C"

namespace squeeze::nccl {
// ncclDataType_t values.
enum class DataTypeId : int {
  kInt8 = 0,
  kUint8 = 1,
  kInt32 = 2,
  kUint32 = 3,
  kInt64 = 4,
  kUint64 = 5,
  kFloat16 = 6,
  kFloat32 = 7,
  kFloat64 = 8,
  kBfloat16 = 9,
  kFloat8E4M3 = 10,
  kFloat8E5M2 = 11,
};
inline constexpr int kNumDataTypeIds = 12;  // ncclNumTypes
// ncclRedOp_t values (built-in ones; NCCL asks reduceSupport about the first
// four and maps Avg to Sum before the network sees it).
enum class RedOpId : int { kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAvg = 4 };
inline constexpr int kNumRedOpIds = 5;
}  // namespace squeeze::nccl
