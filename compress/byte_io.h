// Bounds-checked little-endian readers and writers over byte spans, for frame headers and
// codec bodies. Every get/put either succeeds completely or returns false and leaves the
// position and the bytes untouched, so a caller can check once and report the offset:
//
//   ByteReader r(body);
//   uint32_t n;
//   if (!r.get_u32(&n)) return truncated("n_escapes", r.offset());
//
// offset() is the position from the start of the span (use it in error messages).
// Values are always little-endian on the wire whatever the host is.
//
// This is the project's one little-endian helper. Besides compress, transport/ uses it for
// every field its wire formats carry (headers, hellos, handles, clear-to-send records):
// header-only, it is the one file of compress that transport may include.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace squeeze::compress {

class ByteReader {
 public:
  explicit ByteReader(std::span<const uint8_t> data) : data_(data) {}

  std::size_t offset() const { return pos_; }
  std::size_t remaining() const { return data_.size() - pos_; }
  bool at_end() const { return pos_ == data_.size(); }

  bool get_u8(uint8_t* v) { return get_le(v); }
  bool get_u16(uint16_t* v) { return get_le(v); }
  bool get_u32(uint32_t* v) { return get_le(v); }
  bool get_u64(uint64_t* v) { return get_le(v); }
  bool get_f32(float* v) {
    uint32_t u;
    if (!get_le(&u)) return false;
    std::memcpy(v, &u, sizeof u);
    return true;
  }
  bool get_f64(double* v) {
    uint64_t u;
    if (!get_le(&u)) return false;
    std::memcpy(v, &u, sizeof u);
    return true;
  }
  // Returns a view of the next n bytes and advances, or false if fewer remain.
  bool get_bytes(std::size_t n, std::span<const uint8_t>* out) {
    if (n > remaining()) return false;
    *out = data_.subspan(pos_, n);
    pos_ += n;
    return true;
  }
  bool skip(std::size_t n) {
    if (n > remaining()) return false;
    pos_ += n;
    return true;
  }

 private:
  template <typename T>
  bool get_le(T* v) {
    if (sizeof(T) > remaining()) return false;
    T x = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i)
      x = static_cast<T>(x | static_cast<T>(static_cast<T>(data_[pos_ + i]) << (8 * i)));
    *v = x;
    pos_ += sizeof(T);
    return true;
  }

  std::span<const uint8_t> data_;
  std::size_t pos_ = 0;
};

class ByteWriter {
 public:
  explicit ByteWriter(std::span<uint8_t> data) : data_(data) {}

  std::size_t offset() const { return pos_; }
  std::size_t remaining() const { return data_.size() - pos_; }

  bool put_u8(uint8_t v) { return put_le(v); }
  bool put_u16(uint16_t v) { return put_le(v); }
  bool put_u32(uint32_t v) { return put_le(v); }
  bool put_u64(uint64_t v) { return put_le(v); }
  bool put_f32(float v) {
    uint32_t u;
    std::memcpy(&u, &v, sizeof u);
    return put_le(u);
  }
  bool put_f64(double v) {
    uint64_t u;
    std::memcpy(&u, &v, sizeof u);
    return put_le(u);
  }
  bool put_bytes(std::span<const uint8_t> bytes) {
    if (bytes.size() > remaining()) return false;
    if (!bytes.empty()) std::memcpy(data_.data() + pos_, bytes.data(), bytes.size());
    pos_ += bytes.size();
    return true;
  }
  // Reserves n bytes to be filled later (e.g. a count known only at the end); returns the
  // writable view or an empty span with *ok = false when they do not fit.
  std::span<uint8_t> reserve(std::size_t n, bool* ok) {
    *ok = n <= remaining();
    if (!*ok) return {};
    std::span<uint8_t> out = data_.subspan(pos_, n);
    pos_ += n;
    return out;
  }

 private:
  template <typename T>
  bool put_le(T v) {
    if (sizeof(T) > remaining()) return false;
    for (std::size_t i = 0; i < sizeof(T); ++i)
      data_[pos_ + i] = static_cast<uint8_t>(v >> (8 * i));
    pos_ += sizeof(T);
    return true;
  }

  std::span<uint8_t> data_;
  std::size_t pos_ = 0;
};

// Fixed-offset helpers for headers that are patched after the fact, and for fixed-size wire
// records. The caller guarantees that [p, p + sizeof) lies inside the buffer.
inline void store_le16(uint8_t* p, uint16_t v) {
  p[0] = static_cast<uint8_t>(v);
  p[1] = static_cast<uint8_t>(v >> 8);
}
inline void store_le32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline void store_le64(uint8_t* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
inline uint16_t load_le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
inline uint32_t load_le32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}
inline uint64_t load_le64(const uint8_t* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

}  // namespace squeeze::compress
