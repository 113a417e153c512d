// The interface every byte mover implements (tcp, ucx, verbs). A transport
// carries ordered, tagged messages between a send comm and a receive comm. It knows
// nothing of codecs: each message has a small header (tag, kind, sizes) that the layer above
// fills in, and the receiver lands raw messages in the posted buffer and anything else
// ("frames") in staging, so the layer above can decode them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "transport/status.h"

namespace squeeze::transport {

constexpr std::size_t kHandleBytes = 128;  // NCCL_NET_HANDLE_MAXSIZE
constexpr int kMaxRecvs = 8;               // grouped receives per irecv
constexpr int kMaxRequests = 32;           // per comm (NCCL_NET_MAX_REQUESTS)

// NCCL_PTR_* values, as NCCL passes them to regMr and reads them from ptrSupport.
constexpr int kPtrHost = 0x1;
constexpr int kPtrCuda = 0x2;
constexpr int kPtrDmaBuf = 0x4;

struct DeviceProps {
  std::string name;      // unique per device
  std::string pci_path;  // empty for virtual devices
  uint64_t guid = 0;
  int speed_mbps = 10000;
  int ptr_support = kPtrHost;  // kPtr* bits this device can send from / receive into
  bool force_flush = false;    // GPU receives need iflush (verbs with GPUDirect RDMA)
  int max_recvs = kMaxRecvs;
  int max_comms = 65536;
  float latency_us = 0;
  std::string address;  // for logs
};

enum class PayloadKind : uint8_t { kRaw = 0, kFrame = 1 };

// What travels in front of every message.
struct MessageHeader {
  int32_t tag = 0;
  PayloadKind kind = PayloadKind::kRaw;
  uint64_t payload_bytes = 0;   // bytes on the wire after the header
  uint64_t original_bytes = 0;  // bytes the receiver ends up with (== payload for raw)
};

// Memory NCCL registers with regMr / regMrDmaBuf.
struct MemoryDesc {
  void* data = nullptr;
  std::size_t size = 0;
  int ptr_type = kPtrHost;  // kPtrHost or kPtrCuda
  int dmabuf_fd = -1;       // >= 0: register through dma-buf (regMrDmaBuf)
  uint64_t dmabuf_offset = 0;
};

// What a transport keeps for a registered region (verbs: the MR and its keys). Transports
// that need none return nullptr from register_memory; items then carry a null registration.
class Registration {
 public:
  virtual ~Registration() = default;
};

struct SendItem {
  MessageHeader header;
  const void* data = nullptr;  // payload_bytes bytes
  // The registration of `data`: NCCL's for raw payloads, the engine's own (made with
  // register_memory) for frames in its staging. The engine always passes one where the
  // transport returned one; a null here means the transport must find or make its own.
  const Registration* reg = nullptr;
};

struct RecvItem {
  int32_t tag = 0;
  void* data = nullptr;  // destination for raw payloads
  std::size_t capacity = 0;
  const Registration* reg = nullptr;  // NCCL's registration of `data`, or null
};

// Result of one received message: where its payload is.
struct Received {
  MessageHeader header;
  std::span<const uint8_t> staged;  // the frame, when header.kind == kFrame
};

struct LinkSample {
  double bytes_per_s = 0;
  bool lower_bound =
      false;           // the sender was not keeping the link busy: the link can do at least this
  bool fresh = false;  // taken since the previous call (false: the same sample again)
  // The share of the time the application had messages to move (pauses between collectives
  // left out) that the link was busy: compressing can shorten only that share. < 0: unknown.
  double utilization = -1;
};

class SendComm {
 public:
  virtual ~SendComm() = default;
  // regMr on this comm. *reg stays null for transports that need no registration.
  virtual Status register_memory(const MemoryDesc& mem, std::unique_ptr<Registration>* reg) {
    (void)mem;
    reg->reset();
    return Status::Ok();
  }
  // Posts a message. Sets *slot >= 0, or -1 if the comm is full (try again later).
  virtual Status post(const SendItem& item, int* slot) = 0;
  // Makes progress and tells whether the message in `slot` has left (its buffer is reusable).
  virtual Status test(int slot, bool* done) = 0;
  // Returns a completed slot to the pool.
  virtual void release(int slot) = 0;
  // The link's most recent delivery rate as the transport measures it (TCP: the kernel's
  // rate sampler). False when the transport cannot tell.
  virtual bool link_rate(LinkSample* sample) {
    (void)sample;
    return false;
  }
};

class RecvComm {
 public:
  virtual ~RecvComm() = default;
  virtual Status register_memory(const MemoryDesc& mem, std::unique_ptr<Registration>* reg) {
    (void)mem;
    reg->reset();
    return Status::Ok();
  }
  // iflush: makes GPU-received data visible to the GPU (verbs with GPUDirect RDMA). Sets
  // *slot = kNothingToFlush when no flush is needed (the default), -1 when full (try again),
  // else a flush slot to pass to test_flush(); the slot is free again once test_flush() says
  // done or fails (flush slots are not receive slots: never release() them).
  static constexpr int kNothingToFlush = -2;
  virtual Status flush(std::span<const RecvItem> items, int* slot) {
    (void)items;
    *slot = kNothingToFlush;
    return Status::Ok();
  }
  virtual Status test_flush(int slot, bool* done) {
    (void)slot;
    *done = true;
    return Status::Ok();
  }
  // Posts n (<= kMaxRecvs) receives that complete together. *slot = -1 when full.
  virtual Status post(std::span<const RecvItem> items, int* slot) = 0;
  // Makes progress; when done, out[i] describes the message that matched items[i].
  virtual Status test(int slot, bool* done, std::span<Received> out) = 0;
  virtual void release(int slot) = 0;
};

class Listener {
 public:
  virtual ~Listener() = default;
  // Non-blocking: returns OK with *comm == nullptr until a peer has fully connected.
  virtual Status accept(std::unique_ptr<RecvComm>* comm) = 0;
};

class Transport {
 public:
  virtual ~Transport() = default;
  virtual const char* name() const = 0;
  virtual const std::vector<DeviceProps>& devices() const = 0;
  // Writes the connection handle (<= kHandleBytes) that the peer passes to connect().
  virtual Status listen(int dev, void* handle, std::unique_ptr<Listener>* listener) = 0;
  // Non-blocking: called again with the same handle until *comm != nullptr. The transport
  // may keep its in-progress state inside the handle bytes.
  virtual Status connect(int dev, void* handle, std::unique_ptr<SendComm>* comm) = 0;
};

}  // namespace squeeze::transport
