#include "plugin/engine/codec_jobs.h"

#include <chrono>
#include <exception>
#include <thread>

#include "plugin/engine/net.h"
#include "plugin/engine/worker_pool.h"
#include "plugin/log.h"

namespace squeeze::plugin {

namespace {
using Clock = std::chrono::steady_clock;
uint64_t ns_since(Clock::time_point t) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count());
}
void finish(Request* r, JobState st, std::string error = {}) {
  r->job_error = std::move(error);
  r->job.store(st, std::memory_order_release);
}
}  // namespace

void run_encode_job(void* request) noexcept {
  auto* r = static_cast<Request*>(request);
  try {
    compress::EncodeRequest er;
    er.dtype = r->dtype;
    er.src = r->data;
    er.count = r->count;
    er.params = &r->params;
    er.threshold_state = (r->params.codec == compress::CodecId::kThreshold && r->stream != nullptr)
                             ? &r->stream->threshold
                             : nullptr;
    compress::EncodeReport report;
    er.report = &report;
    std::size_t need = compress::max_frame_bytes(er);
    if (r->frame.size() < need) r->frame.resize(need);
    // The clock starts after the frame buffer is sized: growing it (allocating and zeroing
    // pages) happens once per request slot, and timed with the codec it made the first
    // encodes, those the pays controller first judges by, read at half the codec's speed.
    const auto t0 = Clock::now();
    compress::Status s = compress::encode_frame(er, r->frame, &r->frame_bytes);
    r->encode_ns = ns_since(t0);
    if (!s.ok()) return finish(r, JobState::kFailed, s.message());
    if (r->stream != nullptr && r->stream->dedupe.saw(report.dedupe_rows, report.dedupe_unique)) {
      SQ_TRACE("row dedupe removed %llu of %llu rows of a %llu-element message: the stream's next %u messages skip it",
               static_cast<unsigned long long>(report.dedupe_rows - report.dedupe_unique),
               static_cast<unsigned long long>(report.dedupe_rows), static_cast<unsigned long long>(r->count),
               DedupeGate::kRest);
    }
    finish(r, JobState::kDone);
  } catch (const std::exception& e) {
    finish(r, JobState::kFailed, e.what());
  } catch (...) {
    finish(r, JobState::kFailed, "unknown error");
  }
}

void run_decode_job(void* request) noexcept {
  auto* r = static_cast<Request*>(request);
  try {
    Net& net = Net::instance();
    for (int i = 0; i < r->n; ++i) {
      const transport::Received& g = r->got[i];
      if (g.header.kind != transport::PayloadKind::kFrame) continue;
      auto t0 = Clock::now();
      compress::FrameInfo info{};
      compress::Status s = compress::peek_frame(g.staged, &info);
      std::size_t written = 0;
      if (s.ok() && info.original_bytes != g.header.original_bytes)
        s = compress::Status(compress::Status::Code::kCorrupt,
                             "frame decodes to " + std::to_string(info.original_bytes) + " bytes but the message header says " +
                                 std::to_string(g.header.original_bytes));
      if (s.ok()) s = compress::decode_frame(g.staged, {static_cast<uint8_t*>(r->dst[i]), r->cap[i]}, &written);
      if (!s.ok())
        return finish(r, JobState::kFailed,
                      "receive " + std::to_string(i) + " (tag " + std::to_string(g.header.tag) + ", " +
                          std::to_string(g.staged.size()) + "-byte frame): " + s.message());
      uint64_t ns = ns_since(t0);
      if (net.stats()) net.stats()->record_decode(info.codec, r->collective, g.staged.size(), written, ns);
      if (net.pays()) net.pays()->record_decode(info.codec, written, static_cast<double>(ns) * 1e-9);
    }
    finish(r, JobState::kDone);
  } catch (const std::exception& e) {
    finish(r, JobState::kFailed, e.what());
  } catch (...) {
    finish(r, JobState::kFailed, "unknown error");
  }
}

void wait_for_jobs(Request* begin, Request* end) {
  for (Request* r = begin; r != end; ++r)
    // Lend a hand: with no worker threads (a one-core process) nobody else runs the queue.
    while (r->job.load(std::memory_order_acquire) == JobState::kRunning)
      if (!WorkerPool::shared().try_run_one()) std::this_thread::yield();
}

}  // namespace squeeze::plugin
