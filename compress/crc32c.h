// CRC32C (Castagnoli, reflected polynomial 0x82F63B78), as used by iSCSI, ext4 and
// RDMA. Uses the SSE4.2 crc32 instruction when the CPU has it (checked at run time) and a
// slice-by-8 table otherwise; both give identical results.
//
//   crc32c("123456789") == 0xE3069283
//   crc32c_extend(crc32c(a), b) == crc32c(a ++ b)
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace squeeze::compress {

// CRC of data, continuing from a previous crc32c()/crc32c_extend() result (0 to start).
uint32_t crc32c_extend(uint32_t crc, const void* data, std::size_t size);
inline uint32_t crc32c(const void* data, std::size_t size) { return crc32c_extend(0, data, size); }
inline uint32_t crc32c(std::span<const uint8_t> data) {
  return crc32c_extend(0, data.data(), data.size());
}

// The portable table implementation, exposed so tests can compare it with the hardware one.
uint32_t crc32c_extend_portable(uint32_t crc, const void* data, std::size_t size);
// True when crc32c_extend() uses the SSE4.2 instruction on this machine.
bool crc32c_hardware_accelerated();

}  // namespace squeeze::compress
