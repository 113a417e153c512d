#include "plugin/policy/names.h"

#include <array>
#include <bit>
#include <cstring>

namespace squeeze::policy {
namespace {

constexpr std::array<const char*, kNumCollectives> kCollectiveNames = {
    "unknown",       "allreduce", "alltoall", "send",   "recv",   "allgather",
    "reducescatter", "broadcast", "reduce",   "gather", "scatter"};
constexpr std::array<const char*, kNumCollectives> kCollectiveNccl = {
    "",          "AllReduce", "AlltoAll", "Send",   "Recv", "AllGather", "ReduceScatter",
    "Broadcast", "Reduce",    "Gather",   "Scatter"};

constexpr std::array<const char*, kNumDataTypes> kDtypeNames = {
    "unknown", "int8",    "uint8",   "int32",    "uint32",     "int64",     "uint64",
    "float16", "float32", "float64", "bfloat16", "float8e4m3", "float8e5m2"};
// ncclDatatypeToString in NCCL 2.28.9 has no entry for ncclUint8 (it prints "Unknown"); the
// name is listed anyway so a later NCCL that adds it is understood.
constexpr std::array<const char*, kNumDataTypes> kDtypeNccl = {"",
                                                               "ncclInt8",
                                                               "ncclUint8",
                                                               "ncclInt32",
                                                               "ncclUint32",
                                                               "ncclInt64",
                                                               "ncclUint64",
                                                               "ncclFloat16",
                                                               "ncclFloat32",
                                                               "ncclFloat64",
                                                               "ncclBfloat16",
                                                               "ncclFloat8e4m3",
                                                               "ncclFloat8e5m2"};
constexpr std::array<std::size_t, kNumDataTypes> kDtypeSizes = {0, 1, 1, 4, 4, 8, 8,
                                                                2, 4, 8, 2, 1, 1};

constexpr std::array<const char*, kNumProtos> kProtoNames = {"unknown", "ll", "ll128", "simple"};
constexpr std::array<const char*, kNumProtos> kProtoNccl = {"", "LL", "LL128", "SIMPLE"};

constexpr std::array<const char*, kNumAlgos> kAlgoNames = {
    "unknown", "tree",      "ring", "collnet_direct", "collnet_chain",
    "nvls",    "nvls_tree", "pat",  "collnet"};
// kCollNet is Squeeze's own (no NCCL string names it).
constexpr std::array<const char*, kNumAlgos> kAlgoNccl = {
    "", "TREE", "RING", "COLLNET_DIRECT", "COLLNET_CHAIN", "NVLS", "NVLS_TREE", "PAT", ""};
constexpr std::array<const char*, 4> kReduceOpNames = {"unknown", "sum", "min", "max"};

// ncclFunc_t -> Collective; SendRecv (5) has no collective of its own.
constexpr std::array<Collective, 11> kFromFunc = {
    Collective::kBroadcast,     Collective::kReduce,    Collective::kAllGather,
    Collective::kReduceScatter, Collective::kAllReduce, Collective::kUnknown,
    Collective::kSend,          Collective::kRecv,      Collective::kAllToAll,
    Collective::kScatter,       Collective::kGather};

template <typename E, std::size_t N>
const char* name_of(const std::array<const char*, N>& names, E e) {
  auto i = static_cast<std::size_t>(e);
  return i < N ? names[i] : names[0];
}

template <typename E, std::size_t N>
bool find(const std::array<const char*, N>& names, std::string_view s, std::size_t first, E* out) {
  for (std::size_t i = first; i < N; ++i) {
    if (s == names[i]) {
      *out = static_cast<E>(i);
      return true;
    }
  }
  return false;
}

template <typename E, std::size_t N>
E from_nccl(const std::array<const char*, N>& names, const char* s) {
  E e = E::kUnknown;
  if (s != nullptr && *s != '\0') find(names, std::string_view(s), 1, &e);
  return e;
}

// Index of the single set bit, or -1 when the mask has none or several.
int single_bit(uint32_t bits) { return std::has_single_bit(bits) ? std::countr_zero(bits) : -1; }

}  // namespace

const char* collective_name(Collective c) { return name_of(kCollectiveNames, c); }
const char* dtype_name(DataType d) { return name_of(kDtypeNames, d); }
const char* proto_name(Proto p) { return name_of(kProtoNames, p); }
const char* algo_name(Algo a) { return name_of(kAlgoNames, a); }
const char* reduce_op_name(ReduceOp o) { return name_of(kReduceOpNames, o); }

bool parse_collective(std::string_view s, Collective* out) {
  return find(kCollectiveNames, s, 1, out);
}
bool parse_dtype(std::string_view s, DataType* out) { return find(kDtypeNames, s, 0, out); }
bool parse_proto(std::string_view s, Proto* out) { return find(kProtoNames, s, 1, out); }
bool parse_algo(std::string_view s, Algo* out) { return find(kAlgoNames, s, 1, out); }

Collective collective_from_nccl_string(const char* s) {
  return from_nccl<Collective>(kCollectiveNccl, s);
}
DataType dtype_from_nccl_string(const char* s) { return from_nccl<DataType>(kDtypeNccl, s); }
Proto proto_from_nccl_string(const char* s) { return from_nccl<Proto>(kProtoNccl, s); }
Algo algo_from_nccl_string(const char* s) { return from_nccl<Algo>(kAlgoNccl, s); }

Collective collective_from_nccl_func(int func) {
  if (func < 0 || func >= static_cast<int>(kFromFunc.size())) return Collective::kUnknown;
  return kFromFunc[static_cast<std::size_t>(func)];
}

Collective collective_from_net_op(uint32_t op_bits) {
  return collective_from_nccl_func(single_bit(op_bits));
}

Algo algo_from_net_bits(uint32_t algo_bits) {
  int b = single_bit(algo_bits);  // NCCL_ALGO_TREE=0 ... NCCL_ALGO_PAT=6
  return b < 0 || b > 6 ? Algo::kUnknown : static_cast<Algo>(b + 1);
}

Proto proto_from_net_bits(uint32_t proto_bits) {
  switch (single_bit(proto_bits)) {  // NCCL_PROTO_LL=0, LL128=1, SIMPLE=2
    case 0: return Proto::kLL;
    case 1: return Proto::kLL128;
    case 2: return Proto::kSimple;
    default: return Proto::kUnknown;
  }
}

const char* codec_policy_name(compress::CodecId c) {
  switch (c) {
    case compress::CodecId::kStored: return "stored";
    case compress::CodecId::kQuantize: return "quantize";
    case compress::CodecId::kThreshold: return "threshold";
    case compress::CodecId::kLossless: return "lossless";
    case compress::CodecId::kCast: return "cast";
  }
  return "stored";
}

bool parse_codec_policy_name(std::string_view s, compress::CodecId* out) {
  for (auto c : {compress::CodecId::kQuantize, compress::CodecId::kThreshold,
                 compress::CodecId::kLossless, compress::CodecId::kCast}) {
    if (s == codec_policy_name(c)) {
      *out = c;
      return true;
    }
  }
  return false;
}

std::size_t dtype_size(DataType d) {
  auto i = static_cast<std::size_t>(d);
  return i < kDtypeSizes.size() ? kDtypeSizes[i] : 0;
}

bool is_integer(DataType d) {
  switch (d) {
    case DataType::kInt8:
    case DataType::kUint8:
    case DataType::kInt32:
    case DataType::kUint32:
    case DataType::kInt64:
    case DataType::kUint64: return true;
    default: return false;
  }
}

bool lossy_capable(DataType d) {
  return d == DataType::kFloat32 || d == DataType::kBfloat16 || d == DataType::kFloat16;
}

compress::Dtype codec_dtype(DataType d) {
  switch (d) {
    case DataType::kFloat32: return compress::Dtype::kFloat32;
    case DataType::kBfloat16: return compress::Dtype::kBfloat16;
    case DataType::kFloat16: return compress::Dtype::kFloat16;
    default: return compress::Dtype::kBytes;
  }
}

}  // namespace squeeze::policy
