#include "plugin/engine/describe.h"

#include "plugin/log.h"
#include "plugin/profiler/net_query.h"

namespace squeeze::plugin {

using policy::Algo;
using policy::Collective;
using policy::Proto;

int single_bit(uint32_t mask) {
  if (mask == 0 || (mask & (mask - 1)) != 0) return -1;
  return __builtin_ctz(mask);
}

Collective collective_from_func(int func) {
  switch (func) {
    case 0: return Collective::kBroadcast;
    case 1: return Collective::kReduce;
    case 2: return Collective::kAllGather;
    case 3: return Collective::kReduceScatter;
    case 4: return Collective::kAllReduce;
    case 6: return Collective::kSend;
    case 7: return Collective::kRecv;
    case 8: return Collective::kAllToAll;
    case 9: return Collective::kScatter;
    case 10: return Collective::kGather;
    default: return Collective::kUnknown;
  }
}

Proto proto_from_index(int proto) {
  switch (proto) {
    case 0: return Proto::kLL;
    case 1: return Proto::kLL128;
    case 2: return Proto::kSimple;
    default: return Proto::kUnknown;
  }
}

Algo algo_from_index(int algo) {
  if (algo < 0 || algo > 6) return Algo::kUnknown;
  return static_cast<Algo>(algo + 1);
}

Proto proto_from_registration(int registrations, const MemRegion* mr) {
  if (mr == nullptr) return Proto::kUnknown;
  if (registrations == 1) return Proto::kSimple;
  if (registrations == 3) return proto_from_index(mr->reg_index);
  return Proto::kUnknown;
}

policy::MessageMeta describe_message(CommBase& comm, const MemRegion* mr, std::size_t bytes,
                                     void* phandle, bool is_send) {
  policy::MessageMeta m;
  m.is_send = is_send;
  m.bytes = bytes;
  const NetContext* ctx = comm.ctx();
  const NetAttr attr = ctx != nullptr ? ctx->attr : NetAttr{};
  int func = single_bit(attr.op);
  m.collective = collective_from_func(func);
  // For point-to-point APIs NCCL leaves algo/proto from an earlier collective: ignore them.
  bool p2p = func >= 5;
  Proto from_attr = p2p ? Proto::kUnknown : proto_from_index(single_bit(attr.proto));
  Proto from_reg = proto_from_registration(comm.registrations(), mr);
  // Both sources must agree where both speak; either alone is enough.
  if (from_attr != Proto::kUnknown && from_reg != Proto::kUnknown)
    m.proto = from_attr == from_reg ? from_attr : Proto::kUnknown;
  else
    m.proto = from_attr != Proto::kUnknown ? from_attr : from_reg;
  if (!p2p) m.algo = algo_from_index(single_bit(attr.algo));
  bool answered = false;
  if (ctx != nullptr && ctx->prof != nullptr && phandle != nullptr)
    answered = profiler::query_message_meta(ctx->prof, phandle, &m);
  if (!answered)
    profiler::log_chain_unavailable_once(
        current_logger(),
        phandle == nullptr
            ? "NCCL passed no profiler handle (net API older than v10)"
            : "NCCL's profiler chain did not answer: another profiler plugin is loaded, "
              "NCCL_PROFILER_PLUGIN=none, or libnccl-profiler.so was found first");
  m.comm = comm.comm_match();
  return m;
}

}  // namespace squeeze::plugin
