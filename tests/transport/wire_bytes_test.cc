// The bytes the transports put on the wire, pinned one by one: a peer built from another
// commit (or on a big-endian host) must read the same fields at the same offsets, so any
// change to an encoder shows up here, not as a hang between two versions. All little-endian.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "transport/ib/ib_handshake.h"
#include "transport/ib/ib_wire.h"
#include "transport/message_wire.h"
#include "transport/tcp/wire.h"
#include "transport/ucx/ucx_wire.h"

namespace squeeze::transport {
namespace {

using Bytes = std::vector<uint8_t>;

// Writes v little-endian at off: the expected layouts below are spelled out with it.
void le(Bytes& b, std::size_t off, uint64_t v, int n) {
  for (int i = 0; i < n; ++i)
    b[off + static_cast<std::size_t>(i)] = static_cast<uint8_t>(v >> (8 * i));
}

TEST(WireBytes, MessageHeader) {
  const MessageHeader h{-5, PayloadKind::kFrame, 0x0102030405060708ull, 0x1112131415161718ull};
  Bytes got(kWireHeaderBytes);
  encode_header(h, got.data());
  const Bytes want = {'S',  'Q',  'Z',  'M',  1,    1,    0,    0,  // magic, kind frame, version 1
                      0xfb, 0xff, 0xff, 0xff, 0,    0,    0,    0,  // tag -5, reserved
                      0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,   // payload bytes
                      0x18, 0x17, 0x16, 0x15, 0x14, 0x13, 0x12, 0x11};  // original bytes
  EXPECT_EQ(got, want);
}

TEST(WireBytes, TcpHello) {
  Bytes got(tcp::kHelloBytes);
  tcp::StreamHello s;
  s.conn_id = 0x2122232425262728ull;
  s.index = 3;
  s.count = 5;
  s.nthreads = 2;
  tcp::encode_hello(0x0102030405060708ull, s, got.data());
  const Bytes want = {'S',  'Q',  'Z',  'H',  1,    0,    0,    0,     // magic, version 1
                      0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,  // nonce
                      0x28, 0x27, 0x26, 0x25, 0x24, 0x23, 0x22, 0x21,  // connection id
                      3,    0,    5,    0,    2,    0,    0,    0};    // index, count, threads
  EXPECT_EQ(got, want);
  EXPECT_EQ(tcp::check_hello(want.data(), 0x0102030405060708ull), tcp::Hello::kOurs);
  EXPECT_EQ(tcp::check_hello(want.data(), 0x0102030405060709ull), tcp::Hello::kStray);
  Bytes other = want;
  other[4] = 2;  // another version, this listener's nonce: the peer is ours, its version is not
  EXPECT_EQ(tcp::check_hello(other.data(), 0x0102030405060708ull), tcp::Hello::kOtherVersion);
  EXPECT_EQ(tcp::hello_version(other.data()), 2u);
  other[0] = 'X';  // another magic: a stray, whatever else it says
  EXPECT_EQ(tcp::check_hello(other.data(), 0x0102030405060708ull), tcp::Hello::kStray);
  const tcp::StreamHello back = tcp::decode_stream_hello(want.data());
  EXPECT_EQ(back.conn_id, s.conn_id);
  EXPECT_EQ(back.index, 3);
  EXPECT_EQ(back.count, 5);
  EXPECT_EQ(back.nthreads, 2);
}

TEST(WireBytes, UcxHello) {
  const Bytes got = ucx::encode_hello(ucx::kAcceptMagic, 0x1122334455667788ull, 42, {0xaa, 0xbb});
  const Bytes want = {'S',  'Q',  'U',  'A',  1,    0,    0,    0,     // magic, version 1
                      0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,  // nonce
                      2,    0,    0,    0,    42,   0,    0,    0,     // address bytes, comm id
                      0xaa, 0xbb};                                     // worker address
  EXPECT_EQ(got, want);
}

TEST(WireBytes, IbMessageRecord) {
  ib::Record r;
  r.kind = ib::RecordKind::kFrame;
  r.item = 3;
  r.parts = 2;
  r.tag = 7;
  r.seq = 0x01020304;
  r.payload_bytes = 0x0100;
  r.original_bytes = 0x0a0b0c0d0e0f;
  Bytes got(ib::kRecordBytes);
  ib::encode_record(r, got.data());
  Bytes want(ib::kRecordBytes, 0);
  le(want, 0, 0x525a5153, 4);  // "SQZR"
  want[4] = 1;                 // frame
  want[5] = 3;                 // item
  want[6] = 2;                 // parts
  le(want, 8, 7, 4);
  le(want, 12, 0x01020304, 4);
  le(want, 16, 0x0100, 8);
  le(want, 24, 0x0a0b0c0d0e0f, 8);
  EXPECT_EQ(got, want);
}

TEST(WireBytes, IbClearToSend) {
  ib::Cts c;
  c.n = 1;
  c.rslot = 5;
  c.seq = 0x0102030405;
  c.header_addr = 0x7f0000002000ull;
  c.header_rkey = 0x4321;
  c.items[0] = {0x7f0000010000ull, 4096, 0x7f0000020000ull, 8192, 0x11, 0x22, -1};
  Bytes got(ib::kCtsBytes);
  ib::encode_cts(c, got.data());
  Bytes want(ib::kCtsBytes, 0);
  le(want, 0, 0x435a5153, 4);  // "SQZC"
  want[4] = 1;
  want[5] = 5;
  le(want, 8, 0x0102030405, 8);
  le(want, 16, 0x7f0000002000ull, 8);
  le(want, 24, 0x4321, 4);
  le(want, 32, 0x7f0000010000ull, 8);
  le(want, 40, 4096, 8);
  le(want, 48, 0x7f0000020000ull, 8);
  le(want, 56, 8192, 8);
  le(want, 64, 0x11, 4);
  le(want, 68, 0x22, 4);
  le(want, 72, 0xffffffff, 4);  // tag -1
  EXPECT_EQ(got, want);
}

TEST(WireBytes, IbQueuePairInfo) {
  ib::ConnInfo c;
  c.role = ib::Role::kSender;
  c.nqps = 2;
  c.nonce = 0x1234567890abcdefull;
  c.lid = 0x0107;
  c.link_layer = IBV_LINK_LAYER_ETHERNET;
  c.mtu = IBV_MTU_1024;
  c.port = 2;
  for (int i = 0; i < 16; ++i) c.gid[static_cast<std::size_t>(i)] = static_cast<uint8_t>(0xf0 + i);
  c.fifo_addr = 0x7f0000001000ull;
  c.fifo_rkey = 0x4242;
  c.qpn = {0x000111, 0x000222};
  c.psn = {0xabcdef, 5};
  Bytes got(ib::kConnInfoBytes);
  ib::encode_conn_info(c, got.data());
  Bytes want(ib::kConnInfoBytes, 0);
  le(want, 0, 0x515a5153, 4);  // "SQZQ"
  le(want, 4, 1, 2);           // version
  want[6] = 1;                 // sender
  want[7] = 2;
  le(want, 8, 0x1234567890abcdefull, 8);
  le(want, 16, 0x0107, 2);
  want[18] = IBV_LINK_LAYER_ETHERNET;
  want[19] = IBV_MTU_1024;
  want[20] = 2;
  for (int i = 0; i < 16; ++i)
    want[24 + static_cast<std::size_t>(i)] = static_cast<uint8_t>(0xf0 + i);
  le(want, 40, 0x7f0000001000ull, 8);
  le(want, 48, 0x4242, 4);
  le(want, 56, 0x000111, 4);
  le(want, 60, 0x000222, 4);
  le(want, 88, 0xabcdef, 4);
  le(want, 92, 5, 4);
  EXPECT_EQ(got, want);
}

TEST(WireBytes, IbHandle) {
  ib::IbHandle h;
  auto* a = reinterpret_cast<sockaddr_in*>(&h.addr.storage);
  a->sin_family = AF_INET;
  a->sin_port = htons(0x1234);
  a->sin_addr.s_addr = htonl(0x7f000001);
  h.addr.len = sizeof(sockaddr_in);
  h.nonce = 0x0102030405060708ull;
  Bytes got(kHandleBytes);
  ib::write_handle(h, got.data());
  Bytes want(kHandleBytes, 0);
  le(want, 0, 0x495a5153, 4);  // "SQZI"
  le(want, 4, 1, 2);           // version
  // The socket address travels as the struct is.
  std::memcpy(want.data() + 8, &h.addr.storage, sizeof(sockaddr_in));
  le(want, 36, sizeof(sockaddr_in), 4);
  le(want, 40, 0x0102030405060708ull, 8);
  EXPECT_EQ(got, want);
}

TEST(WireBytes, IbReady) {
  Bytes got(ib::kReadyBytes);
  ib::encode_ready(0x0102030405060708ull, got.data());
  const Bytes want = {'S',  'Q',  'Z',  'Y',  0,    0,    0,    0,
                      0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01};
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace squeeze::transport
