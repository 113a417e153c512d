// The codec work of one request, runnable inline or on a worker thread. Each job reads only
// its request, writes its results there, and publishes them with a release store of
// Request::job, which the progress thread reads with acquire.
#pragma once

#include <cstddef>

#include "plugin/engine/objects.h"

namespace squeeze::plugin {

// Messages up to this size are encoded/decoded on the progress thread: handing them to a
// worker would cost more than the codec.
inline constexpr std::size_t kInlineCodecBytes = 64 * 1024;
// Bytes between two measurements of the link's delivery rate.
inline constexpr uint64_t kLinkSampleBytes = 256u << 10;
// Without the transport's own measure, a link sample spans at least this much wall time (TCP's
// span 5 ms of busy time), so that one sample is enough to judge by.
inline constexpr double kLinkWindowSeconds = 0.005;

// Encodes r->data into r->frame (frame_bytes, encode_ns).
void run_encode_job(void* request) noexcept;
// Decodes every frame of a completed receive into its posted buffer.
void run_decode_job(void* request) noexcept;

}  // namespace squeeze::plugin
