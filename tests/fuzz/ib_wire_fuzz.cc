// Feeds arbitrary bytes to the parsers of what an ib peer RDMA-writes into this side's
// memory: the clear-to-send in the sender's FIFO, the message record in the receiver's
// header slot, and the 32-bit immediate. Accepted values must satisfy what the comms rely
// on (item counts, address ranges that do not wrap, sizes within the posted receive and
// staging slot), and a CTS must re-encode to the same bytes.
#include <cstdint>
#include <cstring>

#include "transport/ib/ib_wire.h"

using namespace squeeze::transport;
using namespace squeeze::transport::ib;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const uint8_t which = data[0] % 3;
  ++data;
  --size;
  if (which == 0) {
    uint8_t cts[kCtsBytes] = {};
    std::memcpy(cts, data, size < kCtsBytes ? size : kCtsBytes);
    uint64_t seq = 0;
    std::memcpy(&seq, cts + 8, 8);  // the sequence the sender expects: whatever came, half the time
    if (size > kCtsBytes && data[kCtsBytes] & 1) ++seq;
    Cts c;
    if (parse_cts(cts, seq, &c).empty()) {
      if (c.n < 1 || c.n > kMaxRecvs || c.rslot < 0 || c.rslot >= kMaxRequests || c.seq != seq)
        __builtin_trap();
      for (int i = 0; i < c.n; ++i) {
        const CtsItem& it = c.items[i];
        if (it.capacity > UINT64_MAX - it.addr ||
            it.staging_capacity > UINT64_MAX - it.staging_addr)
          __builtin_trap();
      }
      uint8_t back[kCtsBytes];
      encode_cts(c, back);
      if (std::memcmp(back, cts, kCtsBytes) != 0) __builtin_trap();
    }
  } else if (which == 1) {
    uint8_t rec[kRecordBytes] = {};
    std::memcpy(rec, data, size < kRecordBytes ? size : kRecordBytes);
    RecordExpect want;
    uint8_t tail[24] = {};
    if (size > kRecordBytes)
      std::memcpy(tail, data + kRecordBytes, size - kRecordBytes < 24 ? size - kRecordBytes : 24);
    want.item = tail[0] % kMaxRecvs;
    want.parts = 1 + tail[1] % 8;
    std::memcpy(&want.seq, tail + 2, 4);
    std::memcpy(&want.tag, tail + 6, 4);
    uint32_t cap = 0, staging = 0;
    std::memcpy(&cap, tail + 10, 4);
    std::memcpy(&staging, tail + 14, 4);
    want.capacity = cap;
    want.staging_capacity = staging;
    MessageHeader h;
    if (parse_record(rec, want, &h).empty()) {
      if (h.tag != want.tag || h.original_bytes > want.capacity) __builtin_trap();
      if (h.kind == PayloadKind::kRaw && h.payload_bytes != h.original_bytes) __builtin_trap();
      if (h.kind == PayloadKind::kFrame && h.payload_bytes > want.staging_capacity)
        __builtin_trap();
    }
  } else {
    uint32_t v = 0;
    std::memcpy(&v, data, size < 4 ? size : 4);
    Imm m;
    if (decode_imm(v, &m).empty() && m.kind == ImmKind::kData &&
        (m.rslot < 0 || m.rslot >= kMaxRequests || m.item < 0 || m.item >= kMaxRecvs ||
         m.parts < 1 || m.parts > 8))
      __builtin_trap();
  }
  return 0;
}
