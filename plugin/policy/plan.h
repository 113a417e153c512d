// The one decision for a message: given what the engine knows of it (MessageMeta), the
// policy, where its bytes are, the stream it belongs to and whether coding pays on the link,
// what to send: raw (and why) or a codec with its parameters and the error bound this message
// may add. The net path (ring, all-to-all, send/recv), the collective network and the perf
// tools' expectations all ask this function, so a rule means the same on every path.
//
// The rules no policy can change are in Policy::decide (LL/LL128 raw, lossy only on float data
// of a known or assumed dtype). This adds what depends on the path and the collective:
// - an all-reduce in NCCL's ring re-sends partial sums n-1 times, and under relaxed
//   consistency forwards final values n-1 more times, so each lossy hop gets an equal share
//   of the rule's bound and the result stays within it (allreduce_hop_share);
// - bitwise consistency (the default) keeps every rank's result identical: only the
//   reduce-scatter half (partial sums) may be lossy on the ring; the all-gather half goes
//   lossless or raw, so every rank ends with the owner's bits. With the rank count unknown
//   no hop is lossy;
// - Squeeze's collective network (Path::kCollNet, plugin/collnet) codes both halves of its
//   all-reduce and every rank still ends with the same bits (the owner of a piece encodes the
//   reduced piece once, keeps its decoded values and sends those frame bytes to everyone).
//   With n nodes and a rule's bound eb, per element: a sum's n-1 coded contributions get
//   eb/(2(n-1)) each and the coded result eb/2, so the result is within
//   (n-1)·eb/(2(n-1)) + eb/2 = eb of the sum of the exact inputs; a min or max takes one
//   input, so its contribution gets eb/2 and the result eb/2. For a relative bound ("rel"),
//   the range is that of the message NCCL hands the plugin, the call, as on the ring: each
//   coding is relative to the larger of its own input's range and the range of its node's
//   input to the whole call (QuantizeParams::reference_range, set by plugin/collnet from the
//   data), so the result is within eb times the largest of the nodes' call-input ranges and
//   the reduced piece's range; the frames are Rice-coded (CPU only, compress/FORMAT.md); rows
//   ("rel_row", row_length, dedupe_rows) do not apply, since NCCL cuts the tensor into calls
//   without regard to them: "rel_row" is taken as "rel". Codecs that drop values (threshold)
//   apply to sums only; a min or max gets the rule's fallback. Error feedback needs the
//   piece's place in its tensor (MessageMeta::collnet); where it is unknown, a rule that asks
//   for it gets its fallback too (Plan::feedback_off): a residual is never added to another
//   piece's elements, and dropping values without feeding them back is not what the rule
//   asked for (under NCCL 2.28.9 the place is never known, plugin/collnet/README.md);
// - data of unknown type is coded as words where the codec prefers it;
// - on host memory the CPU codecs run only where they pay on the measured link (the gate), and
//   so does lossless coding on the GPU;
// - a stream's error-bound schedule and row-dedupe gate.
#pragma once

#include <cstdint>

#include "compress/codec.h"
#include "plugin/policy/message_meta.h"
#include "plugin/policy/policy.h"
#include "plugin/policy/raw_cause.h"

namespace squeeze::policy {

// Where the message's bytes are and who codes them.
enum class Path : uint8_t {
  kHost,       // host memory, CPU codecs (the pays gate judges them)
  kGpuStaged,  // GPU memory staged through the host, GPU codecs (a frame that is not smaller
               // goes raw instead; the pays gate judges lossless coding here, not lossy)
  kDevice,     // GPU memory the CPU cannot read and nothing stages (GPUDirect): raw
  kCollNet,    // a piece of the collective network's all-reduce (MessageMeta::collnet says which
               // hop), in host memory, coded by the CPU codecs where the pays gate says so
};

// A stream: the messages of one rule with one element count (in practice one tensor). On the
// collective network, also the piece's element offset in it and the hop, so each piece of a
// tensor keeps its own codec state (threshold tau and error-feedback residual) per hop.
struct StreamKey {
  int32_t rule = -1;
  uint64_t count = 0;
  uint64_t position = 0;
  uint8_t hop = 0;  // CollNetHop
  auto operator<=>(const StreamKey&) const = default;
};

// What the engine tells plan_message() about the state it keeps.
class PlanHooks {
 public:
  // The index of a message that will be coded in its stream; counts the message.
  virtual uint64_t stream_message(const StreamKey& key) = 0;
  // Whether the stream's row-dedupe gate lets this message dedupe (asked only for host
  // messages whose rule asks for row dedupe; the GPU codec always dedupes).
  virtual bool dedupe_open(const StreamKey& key) = 0;
  // Whether coding `bytes` with `codec` pays on this link now (the engine's pays controller;
  // it may count the message). Asked for kHost and kCollNet messages, and for kGpuStaged ones
  // coded losslessly.
  virtual bool pays(compress::CodecId codec, uint64_t bytes) = 0;

 protected:
  ~PlanHooks() = default;
};

struct Plan {
  bool compress = false;
  int stats_slot = -1;  // Policy::stats_slot of the deciding rule
  int32_t rule = -1;    // -1: the default action
  Collective collective = Collective::kUnknown;
  RawCause raw_cause = RawCause::kPolicy;  // when !compress
  // When compress:
  compress::CodecParams params;  // the rule's, with the error bound scaled for this message
  compress::Dtype dtype = compress::Dtype::kBytes;
  uint64_t count = 0;  // elements of dtype
  StreamKey stream;
  bool lossy = false;
  double hop_share = 1.0;  // the share of the rule's bound this hop may add (all-reduce)
  // The rule asks for error feedback, which this message cannot have: its place in its tensor
  // is unknown (collective network), so no residual could be matched to its elements. The
  // message goes by the rule's fallback (lossless, or raw counted kNoFeedback) instead.
  bool feedback_off = false;
};

// Lossy hops an element of an n-rank ring all-reduce goes through: the n-1 reduce-scatter
// hops, and under relaxed consistency the n-1 all-gather hops too. 0 when n is unknown (< 2).
int allreduce_lossy_hops(int32_t nranks, Consistency c);
// The share of the rule's bound each lossy hop gets, 1 / allreduce_lossy_hops (1 when 0).
double allreduce_hop_share(int32_t nranks, Consistency c);
// Share of the rule's bound one coding of a collective-network hop gets (see above): sum:
// contribution 1/(2(n-1)), result 1/2; min/max: 1/2 each; 1 for n < 2 (nothing is sent).
double collnet_hop_share(CollNetHop hop, ReduceOp op, int32_t nodes);
// True when message `step` of a ring all-reduce proxy op carries a partial sum (the
// reduce-scatter half), as NCCL 2.28 posts them (see plan.cc).
bool ring_allreduce_partial_sum(int32_t step, int32_t nranks);

// The decision for a message of m.bytes bytes. `has_data`: the caller has its address (a
// null buffer is never coded). `hooks` may be null: no streams, and coding always pays.
Plan plan_message(const Policy& policy, const MessageMeta& m, Path path, bool has_data,
                  PlanHooks* hooks);

}  // namespace squeeze::policy
