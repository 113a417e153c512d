#include "plugin/engine/codec_jobs.h"

#include <chrono>
#include <exception>
#include <string>

#include "plugin/engine/recv_request.h"
#include "plugin/engine/send_request.h"
#include "plugin/log.h"

namespace squeeze::plugin {

namespace {
using Clock = std::chrono::steady_clock;
uint64_t ns_since(Clock::time_point t) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count());
}
}  // namespace

compress::Status check_frame(const transport::Received& got, compress::FrameInfo* info) {
  using compress::Status;
  Status s = compress::peek_frame(got.staged, info);
  if (!s.ok()) return s;
  if (info->original_bytes != got.header.original_bytes)
    return Status(Status::Code::kCorrupt, "frame decodes to " +
                                              std::to_string(info->original_bytes) +
                                              " bytes but the message header says " +
                                              std::to_string(got.header.original_bytes));
  if (info->frame_bytes != got.staged.size())
    return Status(Status::Code::kCorrupt, "frame header says " + std::to_string(info->frame_bytes) +
                                              " bytes, " + std::to_string(got.staged.size()) +
                                              " arrived");
  return s;
}

void run_encode_job(void* request) noexcept {
  auto* r = static_cast<SendRequest*>(request);
  try {
    compress::EncodeRequest er;
    er.dtype = r->plan.dtype;
    er.src = r->data;
    er.count = r->plan.count;
    er.params = &r->plan.params;
    er.threshold_state =
        compress::codec_traits(r->plan.params.codec).stateful && r->stream != nullptr
            ? &r->stream->threshold
            : nullptr;
    compress::EncodeReport report;
    er.report = &report;
    const std::size_t need = compress::max_frame_bytes(er);
    if (r->frame.size() < need) r->frame.resize(need);
    // The clock starts after the frame buffer is sized: growing it (allocating and zeroing
    // pages) happens once per request slot, and timed with the codec it made the first
    // encodes, those the pays controller first judges by, read at half the codec's speed.
    const auto t0 = Clock::now();
    const compress::Status s = compress::encode_frame(er, r->frame, &r->frame_bytes);
    r->encode_ns = ns_since(t0);
    if (!s.ok()) return r->job.finish(JobState::kFailed, s.message());
    if (r->stream != nullptr && r->stream->dedupe.saw(report.dedupe_rows, report.dedupe_unique)) {
      SQ_TRACE(
          "row dedupe removed %llu of %llu rows of a %llu-element message: the stream's next %u "
          "messages skip it",
          static_cast<unsigned long long>(report.dedupe_rows - report.dedupe_unique),
          static_cast<unsigned long long>(report.dedupe_rows),
          static_cast<unsigned long long>(r->plan.count), DedupeGate::kRest);
    }
    r->job.finish(JobState::kDone);
  } catch (const std::exception& e) {
    r->job.finish(JobState::kFailed, e.what());
  } catch (...) {
    r->job.finish(JobState::kFailed, "unknown error");
  }
}

void run_decode_job(void* request) noexcept {
  auto* r = static_cast<RecvRequest*>(request);
  try {
    const Engine& engine = r->comm->engine();
    for (int i = 0; i < r->n; ++i) {
      const transport::Received& g = r->got[i];
      if (g.header.kind != transport::PayloadKind::kFrame) continue;
      const auto t0 = Clock::now();
      compress::FrameInfo info{};
      compress::Status s = check_frame(g, &info);
      std::size_t written = 0;
      if (s.ok())
        s = compress::decode_frame(g.staged, {static_cast<uint8_t*>(r->dst[i]), r->cap[i]},
                                   &written);
      if (!s.ok())
        return r->job.finish(JobState::kFailed, "receive " + std::to_string(i) + " (tag " +
                                                    std::to_string(g.header.tag) + ", " +
                                                    std::to_string(g.staged.size()) +
                                                    "-byte frame): " + s.message());
      const uint64_t ns = ns_since(t0);
      if (engine.stats)
        engine.stats->record_decode(info.codec, r->collective, g.staged.size(), written, ns);
      if (engine.pays)
        engine.pays->record_decode(info.codec, written, static_cast<double>(ns) * 1e-9);
    }
    r->job.finish(JobState::kDone);
  } catch (const std::exception& e) {
    r->job.finish(JobState::kFailed, e.what());
  } catch (...) {
    r->job.finish(JobState::kFailed, "unknown error");
  }
}

}  // namespace squeeze::plugin
