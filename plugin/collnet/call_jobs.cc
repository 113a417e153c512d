#include "plugin/collnet/call_jobs.h"

#include <array>
#include <chrono>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "compress/quantize.h"
#include "plugin/collnet/call.h"
#include "plugin/collnet/coll_comm.h"
#include "plugin/collnet/reduce.h"
#include "plugin/engine/codec_jobs.h"
#include "plugin/policy/names.h"

namespace squeeze::collnet {

namespace {

using Clock = std::chrono::steady_clock;

uint64_t ns_since(Clock::time_point t) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count());
}

// Decodes a received frame into dst (exactly dst_bytes): the frame must be
// whole (check_frame), decode to exactly the piece, and a lossy frame must
// carry the call's element type (a lossless or stored frame restores bytes,
// whatever words it coded them as). Errors say what is wrong; the caller names
// the node and the call.
compress::Status decode_piece(const Call& c, const transport::Received& got, uint8_t* dst,
                              std::size_t dst_bytes) {
  using compress::Status;
  const auto t0 = Clock::now();
  compress::FrameInfo info{};
  Status s = plugin::check_frame(got, &info);
  if (!s.ok()) return s;
  if (info.original_bytes != dst_bytes)
    return Status(Status::Code::kCorrupt, "frame decodes to " +
                                              std::to_string(info.original_bytes) +
                                              " bytes, the piece is " + std::to_string(dst_bytes));
  if (compress::is_lossy(info.codec) && info.dtype != policy::codec_dtype(c.dtype))
    return Status(Status::Code::kCorrupt, std::string("lossy ") + compress::codec_name(info.codec) +
                                              " frame of " + compress::dtype_name(info.dtype) +
                                              " for a call of " + policy::dtype_name(c.dtype));
  std::size_t written = 0;
  s = compress::decode_frame(got.staged, {dst, dst_bytes}, &written);
  if (!s.ok()) return s;
  if (written != dst_bytes)
    return Status(Status::Code::kCorrupt, "frame wrote " + std::to_string(written) +
                                              " bytes of a " + std::to_string(dst_bytes) +
                                              "-byte piece");
  const uint64_t ns = ns_since(t0);
  const plugin::Engine& e = c.comm->engine();
  if (e.stats)
    e.stats->record_decode(info.codec, policy::Collective::kAllReduce, got.staged.size(), written,
                           ns, policy::Route::kCollNet);
  if (e.pays) e.pays->record_decode(info.codec, written, static_cast<double>(ns) * 1e-9);
  return Status::Ok();
}

// A raw piece landed in place: it must be exactly the piece.
compress::Status check_raw(const transport::Received& got, std::size_t bytes) {
  if (got.header.original_bytes == bytes && got.header.payload_bytes == bytes)
    return compress::Status::Ok();
  return compress::Status(compress::Status::Code::kCorrupt,
                          "raw message of " + std::to_string(got.header.original_bytes) +
                              " bytes for a " + std::to_string(bytes) + "-byte piece");
}

std::string where(const Call& c, int node, const char* what) {
  return std::string(what) + " from node " + std::to_string(node) + " (call " +
         std::to_string(c.seq) + ")";
}

compress::Status encode_into(const Call& c, const policy::Plan& plan, CollStream* stream,
                             const uint8_t* src, Buffer* frame, std::size_t* frame_bytes,
                             uint64_t* ns) {
  compress::EncodeRequest er;
  er.dtype = plan.dtype;
  er.src = src;
  er.count = plan.count;
  er.params = &plan.params;
  er.threshold_state = compress::codec_traits(plan.params.codec).stateful && stream != nullptr
                           ? &stream->threshold
                           : nullptr;
  (void)c;
  const std::size_t need = compress::max_frame_bytes(er);
  uint8_t* dst = frame->prepare(need);
  const auto t0 = Clock::now();
  compress::Status s = compress::encode_frame(er, {dst, need}, frame_bytes);
  *ns = ns_since(t0);
  return s;
}

// A relative bound on the collective network is relative to the value range of this node's
// input to the whole call (plugin/policy/plan.h): the codec takes it as its reference range.
// Read from the send buffer before this node's reduction writes recvData, so only where the
// two do not overlap; in place, each piece's own range serves (a tighter bound).
bool wants_call_range(const policy::Plan& p) {
  return p.compress && p.lossy && p.params.codec == compress::CodecId::kQuantize &&
         p.params.quantize.mode == compress::BoundMode::kRel;
}

double call_input_range(const Call& c, compress::Dtype dtype) {
  const std::size_t bytes = c.count * c.elem;
  const bool overlap = c.send < c.recv + bytes && c.recv < c.send + bytes;
  return overlap ? 0.0 : compress::quantize_value_range(dtype, c.send, c.count);
}

}  // namespace

void run_encode_job(void* arg) noexcept {
  auto* c = static_cast<Call*>(arg);
  try {
    const int n = c->comm->nodes();
    double call_range = -1;  // read once, when a piece needs it
    for (int p = 0; p < n; ++p) {
      PeerPart& part = c->parts[static_cast<std::size_t>(p)];
      if (p == c->comm->me() || part.piece.count == 0 || !part.plan.compress) continue;
      if (wants_call_range(part.plan)) {
        if (call_range < 0) call_range = call_input_range(*c, part.plan.dtype);
        part.plan.params.quantize.reference_range = call_range;
      }
      const compress::Status s =
          encode_into(*c, part.plan, part.stream, c->send + part.piece.begin * c->elem, &part.frame,
                      &part.frame_bytes, &part.encode_ns);
      if (!s.ok()) part.encode_error = s.message();
    }
    c->encode.finish(JobState::kDone);
  } catch (const std::exception& e) {
    c->encode.finish(JobState::kFailed, e.what());
  } catch (...) {
    c->encode.finish(JobState::kFailed, "unknown error");
  }
}

void run_reduce_job(void* arg) noexcept {
  auto* c = static_cast<Call*>(arg);
  try {
    const int n = c->comm->nodes();
    const int me = c->comm->me();
    const Piece mine = c->parts[static_cast<std::size_t>(me)].piece;
    const std::size_t bytes = mine.count * c->elem;
    uint8_t* out = c->recv + mine.begin * c->elem;
    std::vector<const void*> inputs(static_cast<std::size_t>(n));
    for (int q = 0; q < n; ++q) {
      uint8_t* slot = c->scratch.data() + static_cast<std::size_t>(q) * bytes;
      inputs[static_cast<std::size_t>(q)] = q == me ? c->send + mine.begin * c->elem : slot;
      if (q == me) continue;
      const transport::Received& got = c->parts[static_cast<std::size_t>(q)].contribution_in.got;
      const compress::Status s = got.header.kind == transport::PayloadKind::kFrame
                                     ? decode_piece(*c, got, slot, bytes)
                                     : check_raw(got, bytes);
      if (!s.ok())
        return c->reduce.finish(JobState::kFailed,
                                where(*c, q, "contribution") + ": " + s.message());
    }
    // The exact reduction goes straight into recvData (this node's piece of it): raw and
    // lossless results are sent from there, and a lossy one is coded from there and then
    // overwritten by its own decoding. (In place, the own input is read element for element
    // before it is written; the other pieces of the send buffer are not touched.)
    if (!reduce_in_order(c->dtype, c->op, inputs, out, mine.count))
      return c->reduce.finish(JobState::kFailed, std::string("no reduction ") +
                                                     policy::reduce_op_name(c->op) + " for " +
                                                     policy::dtype_name(c->dtype));
    if (wants_call_range(c->result_plan))
      c->result_plan.params.quantize.reference_range = call_input_range(*c, c->result_plan.dtype);
    if (c->result_plan.compress) {
      const compress::Status s =
          encode_into(*c, c->result_plan, c->result_stream, out, &c->result_frame,
                      &c->result_frame_bytes, &c->result_encode_ns);
      if (!s.ok()) {
        c->result_plan.compress = false;  // the progress thread logs it and sends the result raw
        c->result_plan.raw_cause = policy::RawCause::kFailed;
      } else if (c->result_plan.lossy) {
        // The owner keeps exactly what every other node will decode from these bytes.
        std::size_t written = 0;
        const compress::Status d = compress::decode_frame(
            {c->result_frame.data(), c->result_frame_bytes}, {out, bytes}, &written);
        if (!d.ok() || written != bytes)
          return c->reduce.finish(JobState::kFailed,
                                  "decoding this node's own result frame: " + d.message());
      }
    }
    c->reduce.finish(JobState::kDone);
  } catch (const std::exception& e) {
    c->reduce.finish(JobState::kFailed, e.what());
  } catch (...) {
    c->reduce.finish(JobState::kFailed, "unknown error");
  }
}

void run_result_decode_job(void* arg) noexcept {
  auto* part = static_cast<PeerPart*>(arg);
  const Call& c = *part->call;
  try {
    const std::size_t bytes = part->piece.count * c.elem;
    const compress::Status s =
        decode_piece(c, part->result_in.got, c.recv + part->piece.begin * c.elem, bytes);
    if (!s.ok())
      return part->decode.finish(JobState::kFailed,
                                 where(c, part->peer, "result") + ": " + s.message());
    part->decode.finish(JobState::kDone);
  } catch (const std::exception& e) {
    part->decode.finish(JobState::kFailed, e.what());
  } catch (...) {
    part->decode.finish(JobState::kFailed, "unknown error");
  }
}

}  // namespace squeeze::collnet
