// What the plugin knows about one network message when it decides how to send it. The engine
// fills it from setNetAttr (collective, algo, proto bits), the order of regMr calls (which
// protocol's buffer this is), the profiler chain (dtype, count, sequence number) and its own
// per-communicator cache (nranks, communicator name). Everything may be unknown.
#pragma once

#include <cstdint>

namespace squeeze::policy {

// Policy names: allreduce, alltoall, send, recv, allgather, reducescatter, broadcast, reduce,
// gather, scatter.
enum class Collective : uint8_t {
  kUnknown = 0,
  kAllReduce,
  kAllToAll,
  kSend,
  kRecv,
  kAllGather,
  kReduceScatter,
  kBroadcast,
  kReduce,
  kGather,
  kScatter,
};
inline constexpr int kNumCollectives = 11;  // including kUnknown

// Policy names: ll, ll128, simple.
enum class Proto : uint8_t { kUnknown = 0, kLL, kLL128, kSimple };
inline constexpr int kNumProtos = 4;

// Policy names: int8, uint8, int32, uint32, int64, uint64, float16, float32, float64,
// bfloat16, float8e4m3, float8e5m2, unknown.
enum class DataType : uint8_t {
  kUnknown = 0,
  kInt8,
  kUint8,
  kInt32,
  kUint32,
  kInt64,
  kUint64,
  kFloat16,
  kFloat32,
  kFloat64,
  kBfloat16,
  kFloat8E4M3,
  kFloat8E5M2,
};
inline constexpr int kNumDataTypes = 13;  // including kUnknown

// NCCL's algorithms, as the profiler and setNetAttr report them, then kCollNet: a message of
// Squeeze's collective network (plugin/collnet) whose NCCL algorithm (CollNetDirect or
// CollNetChain) is not known. Policy names: tree, ring, collnet_direct, collnet_chain, nvls,
// nvls_tree, pat, collnet; a rule's "collnet" matches all three CollNet values.
enum class Algo : uint8_t {
  kUnknown = 0,
  kTree,
  kRing,
  kCollNetDirect,
  kCollNetChain,
  kNvls,
  kNvlsTree,
  kPat,
  kCollNet,
};
inline constexpr int kNumAlgos = 9;  // including kUnknown

// The reduction of an all-reduce; only the collective network (plugin/collnet) knows it.
enum class ReduceOp : uint8_t { kUnknown = 0, kSum, kMin, kMax };

// Which hop of Squeeze's CollNet all-reduce a message is (plugin/collnet/README.md):
// kContribution: rank r's piece j of its input, on its way to piece j's owner (reduce-scatter);
// kResult: the owner's reduced piece, encoded once, kept decoded by the owner and sent as the
// same bytes to every other rank (all-gather).
enum class CollNetHop : uint8_t { kNone = 0, kContribution, kResult };

// What the collective network knows about one piece of one iallreduce call.
struct CollNetPiece {
  CollNetHop hop = CollNetHop::kNone;
  ReduceOp op = ReduceOp::kUnknown;
  int32_t nodes = 0;  // ranks of the collective network (one per node)
  // The stream identity of the piece: elements of the tensor the call belongs to and the
  // element offset of the piece in it. When !position_known (the collective's boundaries are
  // unknown), they describe the call itself, which another tensor may share.
  uint64_t stream_count = 0;
  uint64_t position = 0;
  bool position_known = false;
};

// Which rules' communicator patterns match one communicator. Computed once per communicator
// by Policy::resolve_comm() so decide() never compares strings. Defined in policy.h.
struct CommMatch;

struct MessageMeta {
  Collective collective = Collective::kUnknown;  // the API call (setNetAttr op), e.g. kAllToAll
  Proto proto = Proto::kUnknown;                 // the protocol of the connection buffer used
  DataType dtype = DataType::kUnknown;           // from the profiler chain
  Algo algo = Algo::kUnknown;
  bool is_send = true;
  uint64_t bytes = 0;  // bytes of this network message (what isend was given)
  uint64_t coll_bytes =
      0;               // count x dtype size of the call (per peer for p2p/all-to-all); 0 = unknown
  uint64_t count = 0;  // elements of the call (per peer for p2p/all-to-all); 0 = unknown
  uint64_t seq = 0;    // the collective's sequence number (valid when has_seq)
  bool has_seq = false;
  int32_t nranks = 0;  // 0 = unknown
  int32_t peer = -1;   // -1 = unknown
  int32_t step = -1;   // the message's index within its proxy op (profiler ProxyStep); -1 = unknown
  const CommMatch* comm = nullptr;  // nullptr = communicator name unknown
  CollNetPiece collnet;             // hop kNone except on the collective network

  // The size min_bytes/max_bytes compare with: the call's size when known, else the message's.
  uint64_t match_bytes() const { return coll_bytes != 0 ? coll_bytes : bytes; }
};

}  // namespace squeeze::policy
