// NCCL's datatype and reduction enums as the collective network sees them: what
// each is to the policy and the reduction kernels, and which pairs
// reduceSupport accepts.
#pragma once

#include <cstddef>

#include "plugin/nccl/collnet_abi.h"
#include "plugin/policy/message_meta.h"

namespace squeeze::collnet {

// The policy's dtype for an ncclDataType_t value (kUnknown outside the enum).
policy::DataType dtype_from_nccl(int dtype);
// Bytes per element of an ncclDataType_t value; 0 outside the enum.
std::size_t nccl_dtype_size(int dtype);
// The reductions Squeeze implements; kUnknown for the rest (Prod, Avg,
// user-defined ops).
policy::ReduceOp reduce_op_from_nccl(int op);
const char* nccl_dtype_name(int dtype);  // "float32", ...; "ncclDataType_t N" outside the enum
const char* nccl_op_name(int op);        // "sum", "prod", ...; "ncclRedOp_t N" outside the enum

// What reduceSupport answers: sum, min and max on float32, bfloat16 and float16
// (lossy codecs allowed where the policy says so), and sum on the integer types
// (the policy's lossless or raw: lossy codecs never apply to integers).
// Everything else is refused, so NCCL keeps those collectives on its other
// algorithms.
bool reduce_supported(int dtype, int op);

}  // namespace squeeze::collnet
