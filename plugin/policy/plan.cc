#include "plugin/policy/plan.h"

namespace squeeze::policy {

int allreduce_lossy_hops(int32_t nranks, Consistency c) {
  if (nranks < 2) return 0;
  return c == Consistency::kBitwise ? nranks - 1 : 2 * (nranks - 1);
}

double allreduce_hop_share(int32_t nranks, Consistency c) {
  const int hops = allreduce_lossy_hops(nranks, c);
  return hops > 0 ? 1.0 / hops : 1.0;
}

double collnet_hop_share(CollNetHop hop, ReduceOp op, int32_t nodes) {
  if (nodes < 2 || hop == CollNetHop::kNone) return 1.0;
  if (hop == CollNetHop::kResult || op != ReduceOp::kSum) return 0.5;
  return 0.5 / (nodes - 1);  // each of the n-1 contributions a sum adds up
}

// NCCL 2.28.9: ring all-reduce sends 2(n-1) chunks per loop, each chunk ALLREDUCE_CHUNKSTEPS=4
// NCCL steps posted as isends of ALLREDUCE_SLICESTEPS=2 steps, and the profiler's step counts
// isends; the first n-1 chunks of each loop are partial sums, the last n-1 carry final values
// (all-gather).
bool ring_allreduce_partial_sum(int32_t step, int32_t nranks) {
  if (step < 0 || nranks < 2) return false;
  return (step * 2 / 4) % (2 * (nranks - 1)) < nranks - 1;
}

namespace {

Plan raw(Plan p, RawCause why) {
  p.compress = false;
  p.raw_cause = why;
  return p;
}

}  // namespace

Plan plan_message(const Policy& policy, const MessageMeta& m, Path path, bool has_data,
                  PlanHooks* hooks) {
  const Decision d = policy.decide(m);
  Plan p;
  p.stats_slot = policy.stats_slot(d);
  p.rule = d.rule;
  p.collective = m.collective;
  if (path == Path::kDevice) return raw(p, RawCause::kDeviceMemory);

  const compress::CodecParams* params = d.params;
  compress::Dtype dtype = d.codec_dtype;
  bool lossy = d.lossy;
  RawCause no_params_cause = raw_cause(d.raw_reason);
  // From the rule's lossy codec to its fallback (lossless or raw).
  auto fall_back = [&](RawCause why) {
    lossy = false;
    if (d.action->fallback == Fallback::kLossless) {
      params = &d.action->fallback_params;
      dtype = compress::Dtype::kBytes;
    } else {
      params = nullptr;
      no_params_cause = why;
    }
  };
  if (d.lossy && path == Path::kCollNet) {
    // Values a codec drops decode as 0: a sum can take that (and feed them back later), a min
    // or max cannot.
    if (compress::codec_traits(d.params->codec).sparsifying && m.collnet.op != ReduceOp::kSum) {
      fall_back(RawCause::kReduceOp);
    } else if (d.params->threshold.error_feedback && !m.collnet.position_known) {
      // Without its feedback a sparsifying rule loses what it drops for good.
      p.feedback_off = true;
      fall_back(RawCause::kNoFeedback);
    } else {
      p.hop_share = collnet_hop_share(m.collnet.hop, m.collnet.op, m.collnet.nodes);
    }
  } else if (d.lossy && m.collective == Collective::kAllReduce) {
    const Consistency c = d.action->consistency;
    p.hop_share = allreduce_hop_share(m.nranks, c);
    // Only partial sums may be lossy under bitwise consistency; final values travel exactly,
    // so every rank ends with the owner's bits. An unknown position, or an unknown rank
    // count (no budget per hop), is not lossy.
    const bool lossy_hop =
        c == Consistency::kBitwise
            ? m.algo == Algo::kRing && ring_allreduce_partial_sum(m.step, m.nranks)
            : allreduce_lossy_hops(m.nranks, c) > 0;
    if (!lossy_hop) fall_back(raw_cause(d.raw_reason));
  }
  if (params == nullptr) return raw(p, no_params_cause);

  const compress::CodecTraits& traits = compress::codec_traits(params->codec);
  if (dtype == compress::Dtype::kBytes && traits.bytes_as_words != 0 &&
      m.bytes % traits.bytes_as_words == 0)
    dtype = compress::Dtype::kFloat32;  // the only 4-byte word the codecs know
  const std::size_t elem = compress::dtype_size(dtype);
  if (elem == 0 || m.bytes % elem != 0 || !has_data || m.bytes == 0)
    return raw(p, RawCause::kDtype);
  // The CPU codecs run only where they pay on the measured link. So does lossless coding on
  // the GPU: on dense floats it saves a few per cent of the bytes for an encode, a copy and a
  // decode per message, which cost the default policy 10-30% against raw at 4 MiB on an H100
  // (issue 24). A lossy rule on the GPU is coded as the rule says.
  const bool gated =
      path == Path::kHost || path == Path::kCollNet || (path == Path::kGpuStaged && !lossy);
  if (gated && hooks != nullptr && !hooks->pays(params->codec, m.bytes))
    return raw(p, RawCause::kNotWorthIt);

  p.compress = true;
  p.lossy = lossy;
  p.params = *params;
  p.dtype = dtype;
  p.count = m.bytes / elem;
  p.stream = {d.rule, p.count};
  if (path == Path::kCollNet) {
    p.stream = {d.rule, m.collnet.stream_count, m.collnet.position,
                static_cast<uint8_t>(m.collnet.hop)};
    // NCCL cuts a tensor into calls without regard to rows.
    if (p.params.quantize.mode == compress::BoundMode::kRelRow)
      p.params.quantize.mode = compress::BoundMode::kRel;
    p.params.quantize.row_length = 0;
    p.params.quantize.dedupe_rows = false;
    // Only the CPU codes and decodes the collective network's frames, so only here may the
    // rule's rice_codes hold (it trades encode/decode speed for about 1.2x the ratio).
  } else {
    p.params.quantize.rice_codes = false;  // a GPU may code or decode these frames
  }
  const uint64_t index = hooks != nullptr ? hooks->stream_message(p.stream) : 0;
  p.params.quantize.error_bound *=
      d.eb_multiplier * p.hop_share * schedule_multiplier(d.action->schedule, index);
  if (traits.row_dedupe && p.params.quantize.dedupe_rows && path == Path::kHost && hooks != nullptr)
    p.params.quantize.dedupe_rows = hooks->dedupe_open(p.stream);
  return p;
}

}  // namespace squeeze::policy
