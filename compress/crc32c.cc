// CRC32C: slice-by-8 tables built at compile time, plus an SSE4.2 path chosen at run time.
#include "compress/crc32c.h"

#include <array>
#include <cstring>

namespace squeeze::compress {
namespace {

constexpr uint32_t kPoly = 0x82F63B78u;

constexpr std::array<std::array<uint32_t, 256>, 8> make_tables() {
  std::array<std::array<uint32_t, 256>, 8> t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1u) ? (c >> 1) ^ kPoly : c >> 1;
    t[0][i] = c;
  }
  for (uint32_t i = 0; i < 256; ++i) {
    for (std::size_t s = 1; s < 8; ++s) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xffu];
  }
  return t;
}

constexpr auto kTables = make_tables();

uint32_t crc_portable_raw(uint32_t c, const uint8_t* p, std::size_t n) {
  while (n >= 8) {
    uint32_t lo = static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 |
                  static_cast<uint32_t>(p[2]) << 16 | static_cast<uint32_t>(p[3]) << 24;
    const uint32_t hi = static_cast<uint32_t>(p[4]) | static_cast<uint32_t>(p[5]) << 8 |
                        static_cast<uint32_t>(p[6]) << 16 | static_cast<uint32_t>(p[7]) << 24;
    lo ^= c;
    c = kTables[7][lo & 0xffu] ^ kTables[6][(lo >> 8) & 0xffu] ^ kTables[5][(lo >> 16) & 0xffu] ^
        kTables[4][lo >> 24] ^ kTables[3][hi & 0xffu] ^ kTables[2][(hi >> 8) & 0xffu] ^
        kTables[1][(hi >> 16) & 0xffu] ^ kTables[0][hi >> 24];
    p += 8;
    n -= 8;
  }
  while (n--) c = (c >> 8) ^ kTables[0][(c ^ *p++) & 0xffu];
  return c;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) uint32_t crc_hw_raw(uint32_t c, const uint8_t* p, std::size_t n) {
  uint64_t c64 = c;
  while (n >= 8) {
    uint64_t w;
    std::memcpy(&w, p, 8);  // x86 is little-endian, as the CRC's byte order wants
    c64 = __builtin_ia32_crc32di(c64, w);
    p += 8;
    n -= 8;
  }
  uint32_t c32 = static_cast<uint32_t>(c64);
  while (n--) c32 = __builtin_ia32_crc32qi(c32, *p++);
  return c32;
}

bool detect_hw() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse4.2");
}
#else
bool detect_hw() { return false; }
#endif

const bool kHaveHw = detect_hw();

}  // namespace

uint32_t crc32c_extend_portable(uint32_t crc, const void* data, std::size_t size) {
  return ~crc_portable_raw(~crc, static_cast<const uint8_t*>(data), size);
}

uint32_t crc32c_extend(uint32_t crc, const void* data, std::size_t size) {
#if defined(__x86_64__)
  if (kHaveHw) return ~crc_hw_raw(~crc, static_cast<const uint8_t*>(data), size);
#endif
  return crc32c_extend_portable(crc, data, size);
}

bool crc32c_hardware_accelerated() { return kHaveHw; }

}  // namespace squeeze::compress
