// Conversions between the metadata enums and the names used by policies, by NCCL's profiler
// strings ("AllReduce", "ncclFloat32", "SIMPLE", "RING") and by NCCL's enums and bit masks
// (ncclFunc_t, setNetAttr's op/algo/proto bits). All of them are total: anything unrecognised
// becomes kUnknown.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "compress/codec.h"
#include "plugin/policy/message_meta.h"

namespace squeeze::policy {

// Policy names ("allreduce", "float32", "ll128", "ring"); "unknown" for kUnknown.
const char* collective_name(Collective c);
const char* dtype_name(DataType d);
const char* proto_name(Proto p);
const char* algo_name(Algo a);
const char* reduce_op_name(ReduceOp o);                      // "sum", "min", "max", "unknown"
bool parse_collective(std::string_view s, Collective* out);  // "unknown" is not accepted
bool parse_dtype(std::string_view s, DataType* out);         // "unknown" is accepted
bool parse_proto(std::string_view s, Proto* out);            // "unknown" is not accepted
bool parse_algo(std::string_view s, Algo* out);              // "unknown" is not accepted

// NCCL's strings, as in ncclFuncToString / ncclDatatypeToString / ncclProtoToString /
// ncclAlgoToString. NULL is allowed.
Collective collective_from_nccl_string(const char* s);
DataType dtype_from_nccl_string(const char* s);
Proto proto_from_nccl_string(const char* s);
Algo algo_from_nccl_string(const char* s);

// ncclFunc_t values (Broadcast=0 ... AlltoAll=8, Scatter=9, Gather=10). SendRecv is unknown.
Collective collective_from_nccl_func(int func);
// setNetAttr v11: op = 1 << ncclFunc_t of the API call (AllReduce=1<<4, Send=1<<6,
// Recv=1<<7, AlltoAll=1<<8); algo = 1 << NCCL_ALGO_x; proto = 1 << NCCL_PROTO_x (LL=1<<0,
// LL128=1<<1, SIMPLE=1<<2). A mask with no bit or several bits is unknown. NCCL leaves algo
// and proto at their previous values for point-to-point operations: ignore them there.
Collective collective_from_net_op(uint32_t op_bits);
Algo algo_from_net_bits(uint32_t algo_bits);
Proto proto_from_net_bits(uint32_t proto_bits);

// Policy names of codecs: "raw" is not a codec (no frame is sent); kStored is "stored".
const char* codec_policy_name(compress::CodecId c);
bool parse_codec_policy_name(std::string_view s, compress::CodecId* out);  // not "raw"

std::size_t dtype_size(DataType d);  // 0 for kUnknown
bool is_integer(DataType d);
// The three float formats the lossy codecs accept.
bool lossy_capable(DataType d);
// The codec library's dtype for d: float32/bfloat16/float16 map to themselves, everything
// else (other floats, integers, unknown) is plain bytes.
compress::Dtype codec_dtype(DataType d);

}  // namespace squeeze::policy
