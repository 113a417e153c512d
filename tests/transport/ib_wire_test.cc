// The ib transport's formats that carry a peer's bytes: the NCCL handle, the queue-pair
// information, the clear-to-send, the message record and the immediate. Every field is
// validated and a bad one is named.
#include <gtest/gtest.h>
#include <netinet/in.h>

#include <cstring>

#include "transport/ib/ib_handshake.h"
#include "transport/ib/ib_wire.h"

namespace squeeze::transport::ib {
namespace {

ConnInfo sample_info(Role role) {
  ConnInfo c;
  c.role = role;
  c.nqps = 2;
  c.nonce = 0x1234567890abcdefull;
  c.lid = 7;
  c.mtu = IBV_MTU_4096;
  c.port = 1;
  c.gid[0] = 0xfe;
  c.qpn = {0x11, 0x12};
  c.psn = {0xabcdef, 5};
  if (role == Role::kSender) {
    c.fifo_addr = 0x7f0000001000ull;
    c.fifo_rkey = 0x4242;
  }
  return c;
}

std::string parse_mutated(Role role, std::size_t off, uint8_t value) {
  uint8_t b[kConnInfoBytes];
  encode_conn_info(sample_info(role), b);
  b[off] = value;
  ConnInfo out;
  return parse_conn_info(b, sizeof(b), &out);
}

TEST(IbHandshake, ConnInfoRoundTrips) {
  for (Role role : {Role::kSender, Role::kReceiver}) {
    uint8_t b[kConnInfoBytes];
    ConnInfo in = sample_info(role), out;
    encode_conn_info(in, b);
    ASSERT_EQ(parse_conn_info(b, sizeof(b), &out), "");
    EXPECT_EQ(out.role, role);
    EXPECT_EQ(out.nqps, 2);
    EXPECT_EQ(out.nonce, in.nonce);
    EXPECT_EQ(out.lid, 7);
    EXPECT_EQ(out.qpn, in.qpn);
    EXPECT_EQ(out.psn, in.psn);
    EXPECT_EQ(out.fifo_addr, in.fifo_addr);
    EXPECT_EQ(out.fifo_rkey, in.fifo_rkey);
    EXPECT_TRUE(conn_info_is_for(b, in.nonce));
    EXPECT_FALSE(conn_info_is_for(b, in.nonce + 1));
  }
}

TEST(IbHandshake, EveryBadFieldIsNamed) {
  const Role s = Role::kSender;
  EXPECT_EQ(parse_mutated(s, 0, 0), "queue-pair info: bad magic");
  EXPECT_EQ(parse_mutated(s, 4, 9), "queue-pair info: unsupported version 9");
  EXPECT_EQ(parse_mutated(s, 6, 3),
            "queue-pair info: role 3 is neither sender (1) nor receiver (2)");
  EXPECT_EQ(parse_mutated(s, 7, 0), "queue-pair info: nqps 0 outside [1, 8]");
  EXPECT_EQ(parse_mutated(s, 7, 9), "queue-pair info: nqps 9 outside [1, 8]");
  EXPECT_EQ(parse_mutated(s, 18, 3), "queue-pair info: unknown link layer 3");
  EXPECT_EQ(parse_mutated(s, 19, 0), "queue-pair info: path MTU code 0 outside [1, 5]");
  EXPECT_EQ(parse_mutated(s, 19, 6), "queue-pair info: path MTU code 6 outside [1, 5]");
  EXPECT_EQ(parse_mutated(s, 20, 0), "queue-pair info: port 0");
  EXPECT_EQ(parse_mutated(s, 22, 1), "queue-pair info: reserved bytes are not zero");
  EXPECT_EQ(parse_mutated(s, 125, 1), "queue-pair info: reserved bytes are not zero");
  EXPECT_EQ(parse_mutated(s, 16, 0), "queue-pair info: InfiniBand peer with LID 0");
  EXPECT_EQ(parse_mutated(s, 56 + 3, 1), "queue-pair info: qpn[0] outside [1, 2^24)");
  EXPECT_EQ(parse_mutated(s, 88 + 3, 1), "queue-pair info: psn[0] outside [0, 2^24)");
  EXPECT_EQ(parse_mutated(s, 56 + 8, 1), "queue-pair info: qpn/psn[2] set beyond nqps 2");
  EXPECT_EQ(parse_mutated(Role::kReceiver, 48, 1), "queue-pair info: receiver sent a FIFO address");
  uint8_t b[kConnInfoBytes];
  ConnInfo c = sample_info(s), out;
  c.fifo_addr = 0;
  encode_conn_info(c, b);
  EXPECT_EQ(parse_conn_info(b, sizeof(b), &out), "queue-pair info: sender without a FIFO address");
  c = sample_info(s);
  c.link_layer = IBV_LINK_LAYER_ETHERNET;
  c.gid = {};
  encode_conn_info(c, b);
  EXPECT_EQ(parse_conn_info(b, sizeof(b), &out), "queue-pair info: RoCE peer with a zero GID");
  EXPECT_EQ(parse_conn_info(b, 100, &out), "queue-pair info of 100 bytes, expected 128");
}

TEST(IbHandshake, HandleAndReadyRoundTrip) {
  IbHandle h;
  auto* sin = reinterpret_cast<sockaddr_in*>(&h.addr.storage);
  sin->sin_family = AF_INET;
  sin->sin_port = htons(4711);
  sin->sin_addr.s_addr = htonl(0x7f000001);
  h.addr.len = sizeof(sockaddr_in);
  h.nonce = 99;
  uint8_t buf[kHandleBytes];
  write_handle(h, buf);
  IbHandle back;
  ASSERT_EQ(read_handle(buf, &back), "");
  EXPECT_EQ(back.addr.str(), "127.0.0.1:4711");
  EXPECT_EQ(back.nonce, 99u);
  buf[36] = 200;
  EXPECT_EQ(read_handle(buf, &back), "handle has a bad address length 200");
  buf[0] = 0;
  EXPECT_EQ(read_handle(buf, &back), "the handle is not a Squeeze ib handle (bad magic)");
  uint8_t r[kReadyBytes];
  encode_ready(5, r);
  EXPECT_EQ(parse_ready(r, 5), "");
  EXPECT_EQ(parse_ready(r, 6), "ready message: nonce does not match this connection");
}

Cts sample_cts() {
  Cts c;
  c.n = 2;
  c.rslot = 31;
  c.seq = 1000;
  c.header_addr = 0x5000;
  c.header_rkey = 3;
  c.items[0] = {0x10000, 4096, 0x20000, 69632, 11, 12, -4};
  c.items[1] = {0, 0, 0x30000, 65536, 0, 13, 6};
  return c;
}

TEST(IbWire, CtsRoundTripsAndBadFieldsAreNamed) {
  uint8_t b[kCtsBytes];
  Cts in = sample_cts(), out;
  encode_cts(in, b);
  ASSERT_EQ(parse_cts(b, 1000, &out), "");
  EXPECT_EQ(out.n, 2);
  EXPECT_EQ(out.rslot, 31);
  EXPECT_EQ(out.items[0].tag, -4);
  EXPECT_EQ(out.items[0].staging_capacity, 69632u);
  EXPECT_EQ(out.items[1].staging_rkey, 13u);
  EXPECT_EQ(parse_cts(b, 1001, &out), "clear-to-send: sequence 1000 where 1001 was due");
  auto mutate = [&](std::size_t off, uint8_t v) {
    encode_cts(in, b);
    b[off] = v;
    return parse_cts(b, 1000, &out);
  };
  EXPECT_EQ(mutate(0, 1), "clear-to-send: bad magic");
  EXPECT_EQ(mutate(4, 0), "clear-to-send: 0 items, outside [1, 8]");
  EXPECT_EQ(mutate(4, 9), "clear-to-send: 9 items, outside [1, 8]");
  EXPECT_EQ(mutate(5, 32), "clear-to-send: receiver slot 32 outside [0, 32)");
  EXPECT_EQ(mutate(6, 1), "clear-to-send: reserved bytes are not zero");
  EXPECT_EQ(mutate(32 + 2 * 48, 1), "clear-to-send: item 2 set beyond n");
  EXPECT_EQ(mutate(32 + 44, 1), "clear-to-send: item 0 reserved bytes are not zero");
  EXPECT_EQ(mutate(32 + 48 + 8, 1), "clear-to-send: item 1 has a bad buffer range")
      << "capacity without an address";
  Cts wrap = in;
  wrap.items[0].addr = ~uint64_t{0} - 100;  // address + capacity wraps
  encode_cts(wrap, b);
  EXPECT_EQ(parse_cts(b, 1000, &out), "clear-to-send: item 0 has a bad buffer range");
  wrap = in;
  wrap.items[0].staging_addr = ~uint64_t{0} - 100;
  encode_cts(wrap, b);
  EXPECT_EQ(parse_cts(b, 1000, &out), "clear-to-send: item 0 has a bad staging range");
}

TEST(IbWire, RecordsAreCheckedAgainstThePostedReceive) {
  uint8_t b[kRecordBytes];
  RecordExpect want{3, 2, 77, 5, 1000, 66536};
  MessageHeader h;
  encode_record({RecordKind::kRaw, 3, 2, RejectReason::kNone, 5, 77, 999, 999}, b);
  ASSERT_EQ(parse_record(b, want, &h), "");
  EXPECT_EQ(h.kind, PayloadKind::kRaw);
  EXPECT_EQ(h.original_bytes, 999u);
  encode_record({RecordKind::kFrame, 3, 2, RejectReason::kNone, 5, 77, 60000, 1000}, b);
  ASSERT_EQ(parse_record(b, want, &h), "");
  EXPECT_EQ(h.kind, PayloadKind::kFrame);
  auto check = [&](Record r) {
    encode_record(r, b);
    return parse_record(b, want, &h);
  };
  EXPECT_EQ(check({RecordKind::kRaw, 2, 2, RejectReason::kNone, 5, 77, 1, 1}),
            "message record for item 2, 2 parts, sequence 77 arrived where item 3, 2 parts, "
            "sequence 77 was due");
  EXPECT_EQ(check({RecordKind::kRaw, 3, 2, RejectReason::kNone, 6, 77, 1, 1}),
            "message record: tag 6 where the matched receive has tag 5");
  EXPECT_EQ(check({RecordKind::kRaw, 3, 2, RejectReason::kNone, 5, 77, 1, 2}),
            "message record: raw message with payload 1 != original 2");
  EXPECT_EQ(check({RecordKind::kRaw, 3, 2, RejectReason::kNone, 5, 77, 1001, 1001}),
            "message (tag 5, 1001 bytes) exceeds the posted receive of 1000 bytes");
  EXPECT_EQ(check({RecordKind::kFrame, 3, 2, RejectReason::kNone, 5, 77, 66537, 10}),
            "frame of 66537 bytes exceeds the staging slot of 66536");
  EXPECT_EQ(check({static_cast<RecordKind>(3), 3, 2, RejectReason::kNone, 5, 77, 1, 1}),
            "message record: unknown kind 3");
  EXPECT_EQ(check({RecordKind::kRaw, 3, 2, RejectReason::kTooLarge, 5, 77, 1, 1}),
            "message record: reason set on a message that was not rejected");
  EXPECT_NE(check({RecordKind::kRejected, 3, 2, RejectReason::kTooLarge, 5, 77, 2000, 2000})
                .find("rejected"),
            std::string::npos);
  EXPECT_NE(check({RecordKind::kRejected, 3, 2, RejectReason::kNoSuchTag, 9, 77, 1, 1})
                .find("matches no tag"),
            std::string::npos);
  EXPECT_EQ(check({RecordKind::kRejected, 3, 2, static_cast<RejectReason>(7), 9, 77, 1, 1}),
            "message record: rejection with unknown reason 7");
  b[0] = 0;
  EXPECT_EQ(parse_record(b, want, &h), "message record: bad magic");
}

TEST(IbWire, ImmediatesRoundTrip) {
  Imm m;
  ASSERT_EQ(decode_imm(imm_data(31, 7, 8, (1ull << 40) + 12345), &m), "");
  EXPECT_EQ(m.kind, ImmKind::kData);
  EXPECT_EQ(m.rslot, 31);
  EXPECT_EQ(m.item, 7);
  EXPECT_EQ(m.parts, 8);
  EXPECT_EQ(m.seq_bits, ((1ull << 40) + 12345) & kImmDataSeqMask);
  ASSERT_EQ(decode_imm(imm_cts(123456789), &m), "");
  EXPECT_EQ(m.kind, ImmKind::kCts);
  EXPECT_EQ(m.seq_bits, 123456789u & kImmCtsSeqMask);
  EXPECT_EQ(decode_imm(0, &m), "immediate: unknown kind 0");
  EXPECT_EQ(decode_imm(3u << 30, &m), "immediate: unknown kind 3");
  EXPECT_EQ(decode_imm(1u << 30, &m), "immediate: 0 parts, outside [1, 8]");
}

}  // namespace
}  // namespace squeeze::transport::ib
