// Fuzzes the frame parser and every body decoder behind it: arbitrary bytes go to
// peek_frame and decode_frame, with the destination sized from the header (capped at
// 64 MiB) and surrounded by guard bytes that must survive. Input byte 0 picks a mode:
// odd = the rest is used as is; even = the header and body CRCs are recomputed first, so
// mutations reach the body decoders instead of stopping at the checksum.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "compress/byte_io.h"
#include "compress/codec.h"
#include "compress/crc32c.h"

using namespace squeeze::compress;

namespace {

constexpr std::size_t kGuard = 32;
constexpr uint8_t kPattern = 0x5A;
constexpr uint64_t kMaxDecode = 64u << 20;

void fix_checksums(std::vector<uint8_t>& f) {
  if (f.size() < kFrameHeaderBytes) return;
  if (f[7] & 1)
    store_le32(f.data() + 32, crc32c(f.data() + kFrameHeaderBytes, f.size() - kFrameHeaderBytes));
  store_le32(f.data() + 36, crc32c(f.data(), 36));
}

void decode_guarded(const std::vector<uint8_t>& frame, std::size_t cap) {
  std::vector<uint8_t> buf(cap + 2 * kGuard, kPattern);
  std::size_t written = 0;
  Status st = decode_frame(frame, std::span(buf.data() + kGuard, cap), &written);
  for (std::size_t i = 0; i < kGuard; ++i) {
    if (buf[i] != kPattern || buf[kGuard + cap + i] != kPattern)
      std::abort();  // wrote out of bounds
  }
  if (st.ok() && written > cap) std::abort();
  if (!st.ok() && (written != 0 || st.message().empty()))
    std::abort();  // errors must explain themselves
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  std::vector<uint8_t> frame(data + 1, data + size);
  if ((data[0] & 1) == 0) fix_checksums(frame);
  FrameInfo info{};
  if (!peek_frame(frame, &info).ok()) {
    decode_guarded(frame, 16);  // must fail the same way, writing nothing
    return 0;
  }
  if (info.frame_bytes != kFrameHeaderBytes + info.body_bytes) std::abort();
  if (info.original_bytes > kMaxDecode) return 0;
  decode_guarded(frame, static_cast<std::size_t>(info.original_bytes));
  if (info.original_bytes > 0)
    decode_guarded(frame, static_cast<std::size_t>(info.original_bytes) - 1);  // too small
  return 0;
}
