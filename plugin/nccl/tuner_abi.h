// Squeeze's own declaration of NCCL's tuner plugin ABI, versions 5 (NCCL 2.28.x; NCCL 2.30
// still loads v5) and 6 (NCCL 2.30). Written from the facts of NCCL 2.28.9's and 2.30.7's
// src/include/plugin/tuner/tuner_v5.h, tuner_v6.h and nccl_tuner.h; names are ours, layouts
// match NCCL's (see the static_asserts and tests/plugin/abi_layout_test.cc, measured against
// NCCL's headers).
#pragma once

#include <cstddef>
#include <cstdint>

#include "plugin/nccl/common.h"

namespace squeeze::nccl {
constexpr int kNumAlgorithms = 7;  // Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT
constexpr int kNumProtocols = 3;   // LL, LL128, Simple
constexpr int kAlgoTree = 0;
constexpr int kAlgoRing = 1;
constexpr int kAlgoCollNetDirect = 2;
constexpr int kAlgoCollNetChain = 3;
constexpr int kAlgoNvls = 4;
constexpr int kAlgoNvlsTree = 5;
constexpr int kAlgoPat = 6;
constexpr int kProtoLL = 0;
constexpr int kProtoLL128 = 1;
constexpr int kProtoSimple = 2;
constexpr float kAlgoProtoIgnore = -1.0f;  // a disabled entry of the cost table

// ncclFunc_t
constexpr int kFuncBroadcast = 0;
constexpr int kFuncReduce = 1;
constexpr int kFuncAllGather = 2;
constexpr int kFuncReduceScatter = 3;
constexpr int kFuncAllReduce = 4;
constexpr int kFuncSendRecv = 5;
constexpr int kFuncSend = 6;
constexpr int kFuncRecv = 7;
constexpr int kFuncAlltoAll = 8;
constexpr int kFuncScatter = 9;
constexpr int kFuncGather = 10;
}  // namespace squeeze::nccl

extern "C" {

// ncclNvlDomainInfo_v5_t
struct nccl_nvl_domain_info_v5 {
  int nNvlDomains;
  int minRanksPerNvlDomain;
  int maxRanksPerNvlDomain;
};

// ncclTunerConstants_v5_t (we never change them, but the layout is part of init's signature)
struct nccl_tuner_constants_v5 {
  double baseLatencies[7][3];
  double hwLatencies[3][7][3];
  double llMaxBws[4][3];
  double perChMaxRingLL128Bws[4][3];
  double perChMaxTreeLL128Bws[4][3];
  double perChMaxTreeBws[4][3];
  double perChMaxNVLSTreeBws[4][3];
};

// ncclTuner_v5_t: NCCL dlsym()s the data symbol "ncclTunerPlugin_v5".
struct nccl_tuner_v5 {
  const char* name;
  nccl_result_t (*init)(void** ctx, uint64_t commId, std::size_t nRanks, std::size_t nNodes,
                        nccl_logger_t logFunction, nccl_nvl_domain_info_v5* nvlDomainInfo,
                        nccl_tuner_constants_v5* constants);
  // collCostTable is really float[numAlgo][numProto]; entries of -1 are disabled.
  nccl_result_t (*getCollInfo)(void* context, int collType, std::size_t nBytes, int numPipeOps,
                               float** collCostTable, int numAlgo, int numProto, int regBuff,
                               int* nChannels);
  nccl_result_t (*finalize)(void* context);
};

// v6 keeps v5's constants and NVL domain info.
using nccl_nvl_domain_info_v6 = nccl_nvl_domain_info_v5;
using nccl_tuner_constants_v6 = nccl_tuner_constants_v5;

// ncclTuner_v6_t ("ncclTunerPlugin_v6"): v5's table plus an optional getChunkSize, which NCCL
// calls (when not NULL) after it has chosen algo, proto and nChannels; it may rewrite
// *chunkSize, which NCCL then clamps to its buffer's maximum.
struct nccl_tuner_v6 {
  const char* name;
  nccl_result_t (*init)(void** ctx, uint64_t commId, std::size_t nRanks, std::size_t nNodes,
                        nccl_logger_t logFunction, nccl_nvl_domain_info_v6* nvlDomainInfo,
                        nccl_tuner_constants_v6* constants);
  nccl_result_t (*getCollInfo)(void* context, int collType, std::size_t nBytes, int numPipeOps,
                               float** collCostTable, int numAlgo, int numProto, int regBuff,
                               int* nChannels);
  nccl_result_t (*finalize)(void* context);
  nccl_result_t (*getChunkSize)(void* context, int collType, std::size_t nBytes, int algo,
                                int proto, int nChannels, std::size_t* chunkSize);
};

}  // extern "C"

static_assert(sizeof(nccl_nvl_domain_info_v5) == 12);
static_assert(sizeof(nccl_tuner_constants_v5) == 1152);
static_assert(offsetof(nccl_tuner_constants_v5, hwLatencies) == 168);
static_assert(offsetof(nccl_tuner_constants_v5, perChMaxNVLSTreeBws) == 1056);
static_assert(sizeof(nccl_tuner_v5) == 32);
static_assert(offsetof(nccl_tuner_v5, getCollInfo) == 16);
