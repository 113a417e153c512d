#include "transport/ib/ib_handshake.h"

#include <algorithm>
#include <cstring>

#include "compress/byte_io.h"

namespace squeeze::transport::ib {

namespace {
using compress::load_le16;
using compress::load_le32;
using compress::load_le64;
using compress::store_le16;
using compress::store_le32;
using compress::store_le64;

constexpr uint32_t kHandleMagic = 0x495a5153;  // "SQZI"
constexpr uint32_t kInfoMagic = 0x515a5153;    // "SQZQ"
constexpr uint32_t kReadyMagic = 0x595a5153;   // "SQZY"
constexpr std::size_t kAddrOffset = 8;
constexpr std::size_t kAddrMax = sizeof(sockaddr_in6);
constexpr std::size_t kNonceOffset = 40;
static_assert(kAddrOffset + kAddrMax + 4 == kNonceOffset, "handle layout");
static_assert(kNonceOffset + 8 <= kHandleStageOffset, "handle layout overlaps the stage pointer");

bool all_zero(const uint8_t* p, std::size_t n) {
  return std::all_of(p, p + n, [](uint8_t b) { return b == 0; });
}
}  // namespace

void write_handle(const IbHandle& h, void* out) {
  auto* p = static_cast<uint8_t*>(out);
  std::memset(p, 0, kHandleBytes);
  store_le32(p, kHandleMagic);
  store_le16(p + 4, kIbWireVersion);
  std::memcpy(p + kAddrOffset, &h.addr.storage, std::min<std::size_t>(h.addr.len, kAddrMax));
  store_le32(p + kAddrOffset + kAddrMax,
             static_cast<uint32_t>(std::min<std::size_t>(h.addr.len, kAddrMax)));
  store_le64(p + kNonceOffset, h.nonce);
}

std::string read_handle(const void* in, IbHandle* out) {
  const auto* p = static_cast<const uint8_t*>(in);
  if (load_le32(p) != kHandleMagic) return "the handle is not a Squeeze ib handle (bad magic)";
  if (load_le16(p + 4) != kIbWireVersion)
    return "handle version " + std::to_string(load_le16(p + 4)) + " is not supported";
  uint32_t len = load_le32(p + kAddrOffset + kAddrMax);
  if (len == 0 || len > kAddrMax) return "handle has a bad address length " + std::to_string(len);
  *out = IbHandle{};
  std::memcpy(&out->addr.storage, p + kAddrOffset, len);
  out->addr.len = len;
  if (out->addr.family() != AF_INET && out->addr.family() != AF_INET6)
    return "handle address family " + std::to_string(out->addr.family()) +
           " is neither IPv4 nor IPv6";
  out->nonce = load_le64(p + kNonceOffset);
  return "";
}

void encode_conn_info(const ConnInfo& c, uint8_t* out) {
  std::memset(out, 0, kConnInfoBytes);
  store_le32(out, kInfoMagic);
  store_le16(out + 4, kIbWireVersion);
  out[6] = static_cast<uint8_t>(c.role);
  out[7] = c.nqps;
  store_le64(out + 8, c.nonce);
  store_le16(out + 16, c.lid);
  out[18] = c.link_layer;
  out[19] = c.mtu;
  out[20] = c.port;
  std::memcpy(out + 24, c.gid.data(), 16);
  store_le64(out + 40, c.fifo_addr);
  store_le32(out + 48, c.fifo_rkey);
  for (int i = 0; i < kMaxQpsPerConn; ++i) {
    store_le32(out + 56 + 4 * i, c.qpn[i]);
    store_le32(out + 88 + 4 * i, c.psn[i]);
  }
}

std::string parse_conn_info(const uint8_t* in, std::size_t n, ConnInfo* out) {
  if (n != kConnInfoBytes)
    return "queue-pair info of " + std::to_string(n) + " bytes, expected " +
           std::to_string(kConnInfoBytes);
  if (load_le32(in) != kInfoMagic) return "queue-pair info: bad magic";
  if (load_le16(in + 4) != kIbWireVersion)
    return "queue-pair info: unsupported version " + std::to_string(load_le16(in + 4));
  ConnInfo c;
  if (in[6] != static_cast<uint8_t>(Role::kSender) &&
      in[6] != static_cast<uint8_t>(Role::kReceiver))
    return "queue-pair info: role " + std::to_string(in[6]) +
           " is neither sender (1) nor receiver (2)";
  c.role = static_cast<Role>(in[6]);
  c.nqps = in[7];
  if (c.nqps < 1 || c.nqps > kMaxQpsPerConn)
    return "queue-pair info: nqps " + std::to_string(c.nqps) + " outside [1, " +
           std::to_string(kMaxQpsPerConn) + "]";
  c.nonce = load_le64(in + 8);
  c.lid = load_le16(in + 16);
  c.link_layer = in[18];
  if (c.link_layer > IBV_LINK_LAYER_ETHERNET)
    return "queue-pair info: unknown link layer " + std::to_string(c.link_layer);
  c.mtu = in[19];
  if (c.mtu < IBV_MTU_256 || c.mtu > IBV_MTU_4096)
    return "queue-pair info: path MTU code " + std::to_string(c.mtu) + " outside [1, 5]";
  c.port = in[20];
  if (c.port == 0) return "queue-pair info: port 0";
  if (!all_zero(in + 21, 3) || !all_zero(in + 52, 4) || !all_zero(in + 120, 8))
    return "queue-pair info: reserved bytes are not zero";
  std::memcpy(c.gid.data(), in + 24, 16);
  if (c.link_layer == IBV_LINK_LAYER_ETHERNET) {
    if (all_zero(c.gid.data(), 16)) return "queue-pair info: RoCE peer with a zero GID";
  } else if (c.lid == 0) {
    return "queue-pair info: InfiniBand peer with LID 0";
  }
  c.fifo_addr = load_le64(in + 40);
  c.fifo_rkey = load_le32(in + 48);
  if (c.role == Role::kSender && c.fifo_addr == 0)
    return "queue-pair info: sender without a FIFO address";
  if (c.role == Role::kReceiver && (c.fifo_addr != 0 || c.fifo_rkey != 0))
    return "queue-pair info: receiver sent a FIFO address";
  for (int i = 0; i < kMaxQpsPerConn; ++i) {
    c.qpn[i] = load_le32(in + 56 + 4 * i);
    c.psn[i] = load_le32(in + 88 + 4 * i);
    if (i < c.nqps) {
      if (c.qpn[i] == 0 || c.qpn[i] >= (1u << 24))
        return "queue-pair info: qpn[" + std::to_string(i) + "] outside [1, 2^24)";
      if (c.psn[i] >= (1u << 24))
        return "queue-pair info: psn[" + std::to_string(i) + "] outside [0, 2^24)";
    } else if (c.qpn[i] != 0 || c.psn[i] != 0) {
      return "queue-pair info: qpn/psn[" + std::to_string(i) + "] set beyond nqps " +
             std::to_string(c.nqps);
    }
  }
  *out = c;
  return "";
}

bool conn_info_is_for(const uint8_t* in, uint64_t nonce) {
  return load_le32(in) == kInfoMagic && load_le64(in + 8) == nonce;
}

void encode_ready(uint64_t nonce, uint8_t* out) {
  std::memset(out, 0, kReadyBytes);
  store_le32(out, kReadyMagic);
  store_le64(out + 8, nonce);
}

std::string parse_ready(const uint8_t* in, uint64_t nonce) {
  if (load_le32(in) != kReadyMagic || load_le32(in + 4) != 0) return "ready message: bad magic";
  if (load_le64(in + 8) != nonce) return "ready message: nonce does not match this connection";
  return "";
}

}  // namespace squeeze::transport::ib
