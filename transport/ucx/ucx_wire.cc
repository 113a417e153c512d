#include "transport/ucx/ucx_wire.h"

#include <cstdio>

#include "transport/tcp/wire.h"

namespace squeeze::transport::ucx {

using tcp::get_u32;
using tcp::get_u64;
using tcp::put_u32;
using tcp::put_u64;

std::vector<uint8_t> encode_hello(uint32_t magic, uint64_t nonce, uint32_t comm_id,
                                  const std::vector<uint8_t>& address) {
  std::vector<uint8_t> out(kHelloFixedBytes + address.size());
  put_u32(out.data(), magic);
  put_u32(out.data() + 4, kWireVersion);
  put_u64(out.data() + 8, nonce);
  put_u32(out.data() + 16, static_cast<uint32_t>(address.size()));
  put_u32(out.data() + 20, comm_id);
  std::copy(address.begin(), address.end(), out.begin() + kHelloFixedBytes);
  return out;
}

std::string HelloReader::feed(const uint8_t* data, std::size_t n) {
  if (n > want()) return "hello is longer than announced";
  buf_.insert(buf_.end(), data, data + n);
  if (fixed_ok_ || buf_.size() < kHelloFixedBytes) return "";
  const uint8_t* p = buf_.data();
  if (get_u32(p) != magic_) {
    char hex[16];
    std::snprintf(hex, sizeof(hex), "%08x", get_u32(p));
    return std::string("not a Squeeze UCX hello (magic 0x") + hex + ")";
  }
  if (get_u32(p + 4) != kWireVersion) return "unsupported hello version " + std::to_string(get_u32(p + 4));
  if (get_u64(p + 8) != nonce_) return "hello carries a nonce from another listener";
  uint32_t len = get_u32(p + 16);
  const uint32_t comm = get_u32(p + 20);
  if (!with_address_ && len != 0) return "unexpected worker address of " + std::to_string(len) + " bytes";
  if (!with_address_ && comm != 0) return "unexpected comm id " + std::to_string(comm);
  if (with_address_ && comm == 0) return "comm id 0";
  if (with_address_ && (len == 0 || len > kMaxWorkerAddressBytes))
    return "worker address length " + std::to_string(len) + " outside (0, " + std::to_string(kMaxWorkerAddressBytes) +
           "]";
  fixed_ok_ = true;
  need_ = kHelloFixedBytes + len;
  buf_.reserve(need_);
  return "";
}

uint32_t HelloReader::comm_id() const { return done() ? get_u32(buf_.data() + 20) : 0; }

std::vector<uint8_t> HelloReader::address() const {
  if (!done()) return {};
  return {buf_.begin() + kHelloFixedBytes, buf_.end()};
}

}  // namespace squeeze::transport::ucx
