// The codec work of one request, runnable inline or on a worker thread. Each job reads only
// its request, writes its results there, and publishes them through the request's Job.
#pragma once

#include <cstddef>
#include <cstdint>
#include <thread>

#include "compress/codec.h"
#include "plugin/engine/engine.h"
#include "plugin/engine/job.h"
#include "transport/transport.h"

namespace squeeze::plugin {

// Messages up to this size are encoded/decoded on the progress thread: handing them to a
// worker would cost more than the codec.
inline constexpr std::size_t kInlineCodecBytes = 64 * 1024;
// Bytes between two measurements of the link's delivery rate.
inline constexpr uint64_t kLinkSampleBytes = 256u << 10;
// Without the transport's own measure, a link sample spans at least this much wall time (TCP's
// span 5 ms of busy time), so that one sample is enough to judge by.
inline constexpr double kLinkWindowSeconds = 0.005;

// Encodes a SendRequest's message into its frame (frame_bytes, encode_ns).
void run_encode_job(void* send_request) noexcept;
// Decodes every frame of a completed RecvRequest into its posted buffer.
void run_decode_job(void* recv_request) noexcept;

// Checks a received frame's header against the message header that carried it, before
// anything is written: the codec's header must be valid, decode to the size the message
// header says, and be exactly the bytes that arrived. Every decode path calls it.
compress::Status check_frame(const transport::Received& got, compress::FrameInfo* info);

// Waits for the codec jobs still running on [begin, end) (they reference the comm's memory),
// running queued jobs itself: with no worker threads nobody else would.
template <typename Request>
void wait_for_jobs(const Engine& engine, Request* begin, Request* end) {
  for (Request* r = begin; r != end; ++r)
    while (r->job.load() == JobState::kRunning)
      if (!engine.workers().try_run_one()) std::this_thread::yield();
}

}  // namespace squeeze::plugin
