// How the net engine asks the profiler chain what a message is.
//
// In isend/irecv (net v10/v11, which receive a `phandle` per message) the engine calls the
// callback NCCL passed to its init:
//     prof(&eh, 0 /*start*/, phandle, kNetPluginId, &query)
// NCCL turns that into a NetPlugin event whose parentObj is the ProxyStep event of the message
// and whose netPlugin.data is &query (src/plugin/profiler.cc:687-700 in NCCL 2.28.9). When our
// profiler is the one loaded, its startEvent walks ProxyStep -> ProxyOp -> Coll/P2p and fills
// the query; it returns no event, so there is nothing to stop. When another profiler (or none)
// is loaded, the query stays unanswered and the dtype is unknown.
#pragma once

#include <cstdint>

#include "plugin/nccl/common.h"
#include "plugin/policy/message_meta.h"
#include "plugin/profiler/chain_meta.h"

namespace squeeze::profiler {

// Our pluginId: type 0x5351 ("SQ") in bits 16-31, version 1. NCCL's own are IB=1<<16 and
// Socket=2<<16; other profilers ignore types they do not know.
inline constexpr int64_t kNetPluginId = (int64_t{0x5351} << 16) | 1;
inline constexpr uint32_t kNetQueryMagic = 0x4e515153u;  // "SQQN"

// The extData of our NetPlugin events (in-process only; never crosses a process).
struct NetQuery {
  uint32_t magic = kNetQueryMagic;
  uint32_t size = sizeof(NetQuery);
  bool answered = false;  // our profiler saw the query
  bool found_op = false;  // the step led to a ProxyOp event of ours
  ChainMeta meta;         // empty when the op had no readable Coll/P2p parent
  OpInfo op;
  int32_t step = -1;
};

enum class ChainResult : uint8_t {
  kUnavailable,  // no answer: another profiler, no profiler, or nothing to ask with
  kNoParent,     // answered, but the step or op had no usable parent: dtype unknown
  kForeign,      // answered: the op belongs to another process (PXN): dtype unknown
  kFound,        // answered with a Coll or P2p event's metadata
};
const char* chain_result_name(ChainResult r);

// Does start (and stop, if a profiler returned an event) safely: never calls prof with a NULL
// phandle (NCCL dereferences it), never crashes on NULL arguments. noexcept.
ChainResult query_chain(nccl_profiler_callback_t prof, void* phandle, NetQuery* q) noexcept;

// Fills what the chain knows into *out: dtype, count, coll_bytes (count x dtype size), seq,
// nranks, peer, algo, and the collective only when out->collective is still unknown (the
// engine's setNetAttr op is authoritative: it says AlltoAll where the chain only sees Send and
// Recv). Fields the chain does not know are left as they are. Returns true when the chain
// answered (even with "unknown"), false when it is unavailable.
bool query_message_meta(nccl_profiler_callback_t prof, void* phandle,
                        policy::MessageMeta* out) noexcept;

// Logs, once per process, the INFO line that says the chain is unavailable and what follows
// from it (dtype "unknown": only lossless codecs or a rule's assume_dtype apply).
void log_chain_unavailable_once(nccl_logger_t log, const char* why) noexcept;

}  // namespace squeeze::profiler
