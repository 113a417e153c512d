#include "transport/ucx/ucx_wire.h"

#include <cstdio>

#include "compress/byte_io.h"

namespace squeeze::transport::ucx {

using compress::load_le32;
using compress::load_le64;
using compress::store_le32;
using compress::store_le64;

std::vector<uint8_t> encode_hello(uint32_t magic, uint64_t nonce, uint32_t comm_id,
                                  const std::vector<uint8_t>& address) {
  std::vector<uint8_t> out(kHelloFixedBytes + address.size());
  store_le32(out.data(), magic);
  store_le32(out.data() + 4, kWireVersion);
  store_le64(out.data() + 8, nonce);
  store_le32(out.data() + 16, static_cast<uint32_t>(address.size()));
  store_le32(out.data() + 20, comm_id);
  std::copy(address.begin(), address.end(), out.begin() + kHelloFixedBytes);
  return out;
}

std::string HelloReader::feed(const uint8_t* data, std::size_t n) {
  if (n > want()) return "hello is longer than announced";
  buf_.insert(buf_.end(), data, data + n);
  if (fixed_ok_ || buf_.size() < kHelloFixedBytes) return "";
  const uint8_t* p = buf_.data();
  if (load_le32(p) != magic_) {
    char hex[16];
    std::snprintf(hex, sizeof(hex), "%08x", load_le32(p));
    return std::string("not a Squeeze UCX hello (magic 0x") + hex + ")";
  }
  if (load_le64(p + 8) != nonce_) return "hello carries a nonce from another listener";
  genuine_ = true;
  if (load_le32(p + 4) != kWireVersion)
    return "peer speaks Squeeze UCX hello version " + std::to_string(load_le32(p + 4)) +
           "; this side speaks version " + std::to_string(kWireVersion);
  uint32_t len = load_le32(p + 16);
  const uint32_t comm = load_le32(p + 20);
  if (!with_address_ && len != 0)
    return "unexpected worker address of " + std::to_string(len) + " bytes";
  if (!with_address_ && comm != 0) return "unexpected comm id " + std::to_string(comm);
  if (with_address_ && comm == 0) return "comm id 0";
  if (with_address_ && (len == 0 || len > kMaxWorkerAddressBytes))
    return "worker address length " + std::to_string(len) + " outside (0, " +
           std::to_string(kMaxWorkerAddressBytes) + "]";
  fixed_ok_ = true;
  need_ = kHelloFixedBytes + len;
  buf_.reserve(need_);
  return "";
}

uint32_t HelloReader::comm_id() const { return done() ? load_le32(buf_.data() + 20) : 0; }

std::vector<uint8_t> HelloReader::address() const {
  if (!done()) return {};
  return {buf_.begin() + kHelloFixedBytes, buf_.end()};
}

}  // namespace squeeze::transport::ucx
