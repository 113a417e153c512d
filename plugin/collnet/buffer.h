// A byte buffer that keeps its capacity from one call to the next and is not
// zeroed when it grows: the collective network's scratch (contributions, the
// reduced piece) and frames are fully written before anyone reads them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace squeeze::collnet {

class Buffer {
 public:
  // Room for `bytes`; contents unspecified; invalidates earlier pointers when
  // it grows.
  uint8_t* prepare(std::size_t bytes) {
    if (bytes > capacity_) {
      data_ = std::make_unique_for_overwrite<uint8_t[]>(bytes);
      capacity_ = bytes;
    }
    return data_.get();
  }
  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  std::size_t capacity() const { return capacity_; }

 private:
  std::unique_ptr<uint8_t[]> data_;
  std::size_t capacity_ = 0;
};

}  // namespace squeeze::collnet
