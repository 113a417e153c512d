// Data-path records of the ib transport: bytes one side RDMA-writes into the other's memory,
// so each is validated before use. Little-endian, fixed size.
//
// Clear-to-send (CTS, 416 bytes), receiver -> sender FIFO slot seq % kMaxRequests, written
// with RDMA_WRITE_WITH_IMM (immediate: kind CTS | seq) so its completion says it is whole:
//   0: u32 magic "SQZC" | 4: u8 n | 5: u8 receiver request slot | 6: u16 0 | 8: u64 seq |
//   16: u64 header-slot address | 24: u32 header-slot rkey | 28: u32 0 |
//   32 + 48 i: item i: u64 buffer address | u64 capacity | u64 staging address |
//              u64 staging capacity | u32 buffer rkey | u32 staging rkey | i32 tag | u32 0
//   (items past n are 0).
// Message record (32 bytes), sender -> the receiver's header slot of the matched item,
// written after the payload on QP 0 with RDMA_WRITE_WITH_IMM:
//   0: u32 magic "SQZR" | 4: u8 kind (0 raw, 1 frame, 2 rejected) | 5: u8 item | 6: u8 parts |
//   7: u8 reason (rejected: 1 too large, 2 no such tag) | 8: i32 tag | 12: u32 seq (low bits) |
//   16: u64 payload bytes | 24: u64 original bytes
// Immediate data (32 bits, sent in network order):
//   data: [31:30] = 1 | [29:12] seq low 18 bits | [11:8] parts (QPs that carry the message,
//         each one's last write has this immediate) | [7:5] item | [4:0] receiver slot
//   CTS:  [31:30] = 2 | [29:0] seq low 30 bits
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "transport/transport.h"

namespace squeeze::transport::ib {

constexpr std::size_t kCtsBytes = 416;
constexpr std::size_t kRecordBytes = 32;
static_assert(kMaxRequests == 32, "the immediate holds a 5-bit receiver slot");
static_assert(kMaxRecvs == 8, "the immediate holds a 3-bit item index");

struct CtsItem {
  uint64_t addr = 0;
  uint64_t capacity = 0;
  uint64_t staging_addr = 0;
  uint64_t staging_capacity = 0;
  uint32_t rkey = 0;
  uint32_t staging_rkey = 0;
  int32_t tag = 0;
};

struct Cts {
  int n = 0;
  int rslot = 0;
  uint64_t seq = 0;
  uint64_t header_addr = 0;
  uint32_t header_rkey = 0;
  std::array<CtsItem, kMaxRecvs> items{};
};

void encode_cts(const Cts& c, uint8_t* out);  // kCtsBytes
// "" or the first problem. `seq` is the sequence number the sender expects in this slot.
std::string parse_cts(const uint8_t* in, uint64_t seq, Cts* out);

enum class RecordKind : uint8_t { kRaw = 0, kFrame = 1, kRejected = 2 };
enum class RejectReason : uint8_t { kNone = 0, kTooLarge = 1, kNoSuchTag = 2 };

struct Record {
  RecordKind kind = RecordKind::kRaw;
  int item = 0;
  int parts = 1;
  RejectReason reason = RejectReason::kNone;
  int32_t tag = 0;
  uint32_t seq = 0;
  uint64_t payload_bytes = 0;
  uint64_t original_bytes = 0;
};

void encode_record(const Record& r, uint8_t* out);  // kRecordBytes

// What the receiver expects of the record in one of its header slots.
struct RecordExpect {
  int item = 0;
  int parts = 1;
  uint32_t seq = 0;
  int32_t tag = 0;
  uint64_t capacity = 0;          // the posted buffer
  uint64_t staging_capacity = 0;  // the staging slot offered for frames
};
// Validates a record against what was posted. Returns "" with *out filled, or the problem; a
// record of kind rejected yields the sender's reason as the problem.
std::string parse_record(const uint8_t* in, const RecordExpect& want, MessageHeader* out);

enum class ImmKind { kData = 1, kCts = 2 };
struct Imm {
  ImmKind kind = ImmKind::kData;
  int rslot = 0;
  int item = 0;
  int parts = 1;
  uint32_t seq_bits = 0;  // the low bits of seq that the immediate carries
};
constexpr uint32_t kImmDataSeqMask = (1u << 18) - 1;
constexpr uint32_t kImmCtsSeqMask = (1u << 30) - 1;
uint32_t imm_data(int rslot, int item, int parts, uint64_t seq);
uint32_t imm_cts(uint64_t seq);
std::string decode_imm(uint32_t v, Imm* out);  // v in host order

}  // namespace squeeze::transport::ib
