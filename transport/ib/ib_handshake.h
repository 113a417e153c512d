// Connection set-up formats of the ib transport. Little-endian, fixed size.
//
// The NCCL handle (128 bytes) the listener writes and the connecting side reads:
//   0: u32 magic "SQZI" | 4: u16 version | 6: u16 0 | 8: sockaddr of the out-of-band TCP
//   listener (28 bytes max) | 36: u32 address length | 40: u64 nonce | 48..119: 0 |
//   120: the connecting side's in-progress state (a pointer), as the TCP transport does.
//
// Over that TCP connection, each side sends its queue-pair information (ConnInfo, 128 bytes):
//   0: u32 magic "SQZQ" | 4: u16 version | 6: u8 role (1 sender, 2 receiver) | 7: u8 nqps |
//   8: u64 nonce | 16: u16 lid | 18: u8 link layer (0/1 InfiniBand, 2 Ethernet) |
//   19: u8 path MTU (ibv_mtu 1..5) | 20: u8 port | 21: 3 bytes 0 | 24: gid[16] |
//   40: u64 FIFO address | 48: u32 FIFO rkey (sender only; 0 from the receiver) | 52: u32 0 |
//   56: u32 qpn[8] | 88: u32 psn[8] (entries past nqps are 0) | 120: u64 0
// The sender sends first; the receiver answers once its QPs are ready to receive; the
// sender moves its QPs to RTS and sends "ready" (16 bytes: u32 "SQZY" | u32 0 | u64 nonce).
// The TCP connection stays open for the life of the comms: its closing tells a side that its
// peer is gone even when no work request of its own is in flight.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include <infiniband/verbs.h>

#include "transport/ib/ib_options.h"
#include "transport/socket/socket.h"
#include "transport/transport.h"

namespace squeeze::transport::ib {

constexpr uint16_t kIbWireVersion = 1;
constexpr std::size_t kHandleStageOffset = kHandleBytes - sizeof(void*);
constexpr std::size_t kConnInfoBytes = 128;
constexpr std::size_t kReadyBytes = 16;

struct IbHandle {
  sock::SockAddr addr;
  uint64_t nonce = 0;
};
void write_handle(const IbHandle& h, void* out);  // clears all 128 bytes first
// "" or what is wrong with the handle.
std::string read_handle(const void* in, IbHandle* out);

enum class Role : uint8_t { kSender = 1, kReceiver = 2 };

struct ConnInfo {
  Role role = Role::kSender;
  uint8_t nqps = 1;
  uint64_t nonce = 0;
  uint16_t lid = 0;
  uint8_t link_layer = IBV_LINK_LAYER_INFINIBAND;
  uint8_t mtu = IBV_MTU_4096;
  uint8_t port = 1;
  std::array<uint8_t, 16> gid{};
  uint64_t fifo_addr = 0;
  uint32_t fifo_rkey = 0;
  std::array<uint32_t, kMaxQpsPerConn> qpn{};
  std::array<uint32_t, kMaxQpsPerConn> psn{};
};

void encode_conn_info(const ConnInfo& c, uint8_t* out);  // kConnInfoBytes
// Validates every field of a peer's ConnInfo; "" or the first problem, naming the field.
std::string parse_conn_info(const uint8_t* in, std::size_t n, ConnInfo* out);

// Whether bytes from a fresh TCP connection are queue-pair info for this listener (magic and
// nonce); anything else is a stray connection, dropped without an error.
bool conn_info_is_for(const uint8_t* in, uint64_t nonce);

void encode_ready(uint64_t nonce, uint8_t* out);  // kReadyBytes
std::string parse_ready(const uint8_t* in, uint64_t nonce);

}  // namespace squeeze::transport::ib
