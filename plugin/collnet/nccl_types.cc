#include "plugin/collnet/nccl_types.h"

#include <array>
#include <cstdio>

#include "plugin/collnet/reduce.h"

namespace squeeze::collnet {

namespace {

using nccl::DataTypeId;
using policy::DataType;

struct TypeRow {
  DataType dtype;
  std::size_t size;
  const char* name;
};

// Indexed by ncclDataType_t.
constexpr std::array<TypeRow, nccl::kNumDataTypeIds> kTypes = {{
    {DataType::kInt8, 1, "int8"},
    {DataType::kUint8, 1, "uint8"},
    {DataType::kInt32, 4, "int32"},
    {DataType::kUint32, 4, "uint32"},
    {DataType::kInt64, 8, "int64"},
    {DataType::kUint64, 8, "uint64"},
    {DataType::kFloat16, 2, "float16"},
    {DataType::kFloat32, 4, "float32"},
    {DataType::kFloat64, 8, "float64"},
    {DataType::kBfloat16, 2, "bfloat16"},
    {DataType::kFloat8E4M3, 1, "float8e4m3"},
    {DataType::kFloat8E5M2, 1, "float8e5m2"},
}};

constexpr std::array<const char*, nccl::kNumRedOpIds> kOpNames = {"sum", "prod", "max", "min",
                                                                  "avg"};

bool in_range(int v, int n) { return v >= 0 && v < n; }

}  // namespace

DataType dtype_from_nccl(int dtype) {
  return in_range(dtype, nccl::kNumDataTypeIds) ? kTypes[static_cast<std::size_t>(dtype)].dtype
                                                : DataType::kUnknown;
}

std::size_t nccl_dtype_size(int dtype) {
  return in_range(dtype, nccl::kNumDataTypeIds) ? kTypes[static_cast<std::size_t>(dtype)].size : 0;
}

policy::ReduceOp reduce_op_from_nccl(int op) {
  switch (static_cast<nccl::RedOpId>(op)) {
    case nccl::RedOpId::kSum: return policy::ReduceOp::kSum;
    case nccl::RedOpId::kMin: return policy::ReduceOp::kMin;
    case nccl::RedOpId::kMax: return policy::ReduceOp::kMax;
    default: return policy::ReduceOp::kUnknown;
  }
}

const char* nccl_dtype_name(int dtype) {
  if (in_range(dtype, nccl::kNumDataTypeIds)) return kTypes[static_cast<std::size_t>(dtype)].name;
  thread_local char buf[32];
  std::snprintf(buf, sizeof buf, "ncclDataType_t %d", dtype);
  return buf;
}

const char* nccl_op_name(int op) {
  if (in_range(op, nccl::kNumRedOpIds)) return kOpNames[static_cast<std::size_t>(op)];
  thread_local char buf[32];
  std::snprintf(buf, sizeof buf, "ncclRedOp_t %d", op);
  return buf;
}

bool reduce_supported(int dtype, int op) {
  return can_reduce(dtype_from_nccl(dtype), reduce_op_from_nccl(op));
}

}  // namespace squeeze::collnet
