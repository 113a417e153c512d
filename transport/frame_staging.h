// Where a receiver lands an incoming frame before the layer above decodes it: a buffer that
// keeps its capacity from one frame to the next and, unlike std::vector::resize, does not
// zero the bytes it is about to receive over (every frame is fully written by the receive
// before anyone reads it; zeroing it cost a memset per message).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>

namespace squeeze::transport {

class FrameStaging {
 public:
  // Room for a frame of `bytes`, contents unspecified until received into; invalidates
  // earlier pointers when it has to grow.
  uint8_t* prepare(std::size_t bytes) {
    if (bytes > capacity_) {
      buf_ = std::make_unique_for_overwrite<uint8_t[]>(bytes);
      capacity_ = bytes;
    }
    size_ = bytes;
    return buf_.get();
  }
  void clear() { size_ = 0; }  // keeps the capacity for the next frame
  std::span<const uint8_t> frame() const { return {buf_.get(), size_}; }

 private:
  std::unique_ptr<uint8_t[]> buf_;
  std::size_t capacity_ = 0;
  std::size_t size_ = 0;
};

}  // namespace squeeze::transport
