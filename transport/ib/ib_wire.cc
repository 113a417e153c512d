#include "transport/ib/ib_wire.h"

#include <algorithm>
#include <cstring>

#include "compress/byte_io.h"

namespace squeeze::transport::ib {

namespace {
using compress::load_le32;
using compress::load_le64;
using compress::store_le32;
using compress::store_le64;

constexpr uint32_t kCtsMagic = 0x435a5153;     // "SQZC"
constexpr uint32_t kRecordMagic = 0x525a5153;  // "SQZR"
constexpr std::size_t kCtsHead = 32;
constexpr std::size_t kCtsItem = 48;
static_assert(kCtsHead + kMaxRecvs * kCtsItem == kCtsBytes, "CTS layout");

bool all_zero(const uint8_t* p, std::size_t n) {
  return std::all_of(p, p + n, [](uint8_t b) { return b == 0; });
}
bool wraps(uint64_t addr, uint64_t len) { return len > UINT64_MAX - addr; }
}  // namespace

void encode_cts(const Cts& c, uint8_t* out) {
  std::memset(out, 0, kCtsBytes);
  store_le32(out, kCtsMagic);
  out[4] = static_cast<uint8_t>(c.n);
  out[5] = static_cast<uint8_t>(c.rslot);
  store_le64(out + 8, c.seq);
  store_le64(out + 16, c.header_addr);
  store_le32(out + 24, c.header_rkey);
  for (int i = 0; i < c.n && i < kMaxRecvs; ++i) {
    uint8_t* p = out + kCtsHead + kCtsItem * static_cast<std::size_t>(i);
    const CtsItem& it = c.items[i];
    store_le64(p, it.addr);
    store_le64(p + 8, it.capacity);
    store_le64(p + 16, it.staging_addr);
    store_le64(p + 24, it.staging_capacity);
    store_le32(p + 32, it.rkey);
    store_le32(p + 36, it.staging_rkey);
    store_le32(p + 40, static_cast<uint32_t>(it.tag));
  }
}

std::string parse_cts(const uint8_t* in, uint64_t seq, Cts* out) {
  if (load_le32(in) != kCtsMagic) return "clear-to-send: bad magic";
  Cts c;
  c.n = in[4];
  c.rslot = in[5];
  c.seq = load_le64(in + 8);
  c.header_addr = load_le64(in + 16);
  c.header_rkey = load_le32(in + 24);
  if (c.seq != seq)
    return "clear-to-send: sequence " + std::to_string(c.seq) + " where " + std::to_string(seq) +
           " was due";
  if (c.n < 1 || c.n > kMaxRecvs)
    return "clear-to-send: " + std::to_string(c.n) + " items, outside [1, 8]";
  if (c.rslot >= kMaxRequests)
    return "clear-to-send: receiver slot " + std::to_string(c.rslot) + " outside [0, 32)";
  if (!all_zero(in + 6, 2) || !all_zero(in + 28, 4))
    return "clear-to-send: reserved bytes are not zero";
  if (c.header_addr == 0 || wraps(c.header_addr, kMaxRecvs * kRecordBytes))
    return "clear-to-send: bad header-slot address";
  for (int i = 0; i < kMaxRecvs; ++i) {
    const uint8_t* p = in + kCtsHead + kCtsItem * static_cast<std::size_t>(i);
    if (i >= c.n) {
      if (!all_zero(p, kCtsItem))
        return "clear-to-send: item " + std::to_string(i) + " set beyond n";
      continue;
    }
    CtsItem& it = c.items[i];
    it.addr = load_le64(p);
    it.capacity = load_le64(p + 8);
    it.staging_addr = load_le64(p + 16);
    it.staging_capacity = load_le64(p + 24);
    it.rkey = load_le32(p + 32);
    it.staging_rkey = load_le32(p + 36);
    it.tag = static_cast<int32_t>(load_le32(p + 40));
    if (!all_zero(p + 44, 4))
      return "clear-to-send: item " + std::to_string(i) + " reserved bytes are not zero";
    if ((it.capacity > 0 && it.addr == 0) || wraps(it.addr, it.capacity))
      return "clear-to-send: item " + std::to_string(i) + " has a bad buffer range";
    if ((it.staging_capacity > 0 && it.staging_addr == 0) ||
        wraps(it.staging_addr, it.staging_capacity))
      return "clear-to-send: item " + std::to_string(i) + " has a bad staging range";
  }
  *out = c;
  return "";
}

void encode_record(const Record& r, uint8_t* out) {
  std::memset(out, 0, kRecordBytes);
  store_le32(out, kRecordMagic);
  out[4] = static_cast<uint8_t>(r.kind);
  out[5] = static_cast<uint8_t>(r.item);
  out[6] = static_cast<uint8_t>(r.parts);
  out[7] = static_cast<uint8_t>(r.reason);
  store_le32(out + 8, static_cast<uint32_t>(r.tag));
  store_le32(out + 12, r.seq);
  store_le64(out + 16, r.payload_bytes);
  store_le64(out + 24, r.original_bytes);
}

std::string parse_record(const uint8_t* in, const RecordExpect& want, MessageHeader* out) {
  if (load_le32(in) != kRecordMagic) return "message record: bad magic";
  const uint8_t kind = in[4];
  const int item = in[5], parts = in[6];
  const uint8_t reason = in[7];
  const auto tag = static_cast<int32_t>(load_le32(in + 8));
  const uint32_t seq = load_le32(in + 12);
  const uint64_t payload = load_le64(in + 16), original = load_le64(in + 24);
  if (item != want.item || parts != want.parts || seq != want.seq)
    return "message record for item " + std::to_string(item) + ", " + std::to_string(parts) +
           " parts, sequence " + std::to_string(seq) + " arrived where item " +
           std::to_string(want.item) + ", " + std::to_string(want.parts) + " parts, sequence " +
           std::to_string(want.seq) + " was due";
  const std::string what =
      "message (tag " + std::to_string(tag) + ", " + std::to_string(original) + " bytes";
  if (kind == static_cast<uint8_t>(RecordKind::kRejected)) {
    if (reason == static_cast<uint8_t>(RejectReason::kTooLarge))
      return "the sender rejected its " + what + ", " + std::to_string(payload) +
             " on the wire): larger than the posted receive of " + std::to_string(want.capacity) +
             " bytes (tag " + std::to_string(want.tag) + ")";
    if (reason == static_cast<uint8_t>(RejectReason::kNoSuchTag))
      return "the sender's " + what + ") matches no tag of the posted receive";
    return "message record: rejection with unknown reason " + std::to_string(reason);
  }
  if (reason != 0) return "message record: reason set on a message that was not rejected";
  if (kind > static_cast<uint8_t>(RecordKind::kFrame))
    return "message record: unknown kind " + std::to_string(kind);
  if (tag != want.tag)
    return "message record: tag " + std::to_string(tag) + " where the matched receive has tag " +
           std::to_string(want.tag);
  if (original > want.capacity)
    return what + ") exceeds the posted receive of " + std::to_string(want.capacity) + " bytes";
  if (kind == static_cast<uint8_t>(RecordKind::kRaw) && payload != original)
    return "message record: raw message with payload " + std::to_string(payload) + " != original " +
           std::to_string(original);
  if (kind == static_cast<uint8_t>(RecordKind::kFrame) && payload > want.staging_capacity)
    return "frame of " + std::to_string(payload) + " bytes exceeds the staging slot of " +
           std::to_string(want.staging_capacity);
  out->tag = tag;
  out->kind = kind == 0 ? PayloadKind::kRaw : PayloadKind::kFrame;
  out->payload_bytes = payload;
  out->original_bytes = original;
  return "";
}

uint32_t imm_data(int rslot, int item, int parts, uint64_t seq) {
  return (1u << 30) | ((static_cast<uint32_t>(seq) & kImmDataSeqMask) << 12) |
         (static_cast<uint32_t>(parts & 0xf) << 8) | (static_cast<uint32_t>(item & 0x7) << 5) |
         static_cast<uint32_t>(rslot & 0x1f);
}

uint32_t imm_cts(uint64_t seq) {
  return (2u << 30) | (static_cast<uint32_t>(seq) & kImmCtsSeqMask);
}

std::string decode_imm(uint32_t v, Imm* out) {
  Imm m;
  switch (v >> 30) {
    case 1:
      m.kind = ImmKind::kData;
      m.rslot = static_cast<int>(v & 0x1f);
      m.item = static_cast<int>((v >> 5) & 0x7);
      m.parts = static_cast<int>((v >> 8) & 0xf);
      m.seq_bits = (v >> 12) & kImmDataSeqMask;
      if (m.parts < 1 || m.parts > 8)
        return "immediate: " + std::to_string(m.parts) + " parts, outside [1, 8]";
      break;
    case 2:
      m.kind = ImmKind::kCts;
      m.seq_bits = v & kImmCtsSeqMask;
      break;
    default: return "immediate: unknown kind " + std::to_string(v >> 30);
  }
  *out = m;
  return "";
}

}  // namespace squeeze::transport::ib
