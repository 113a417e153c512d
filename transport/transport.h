// The interface every byte mover implements (tcp now; ucx and verbs later). A transport
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

struct DeviceProps {
  std::string name;      // unique per device
  std::string pci_path;  // empty for virtual devices
  uint64_t guid = 0;
  int speed_mbps = 10000;
  int ptr_support = 1;   // NCCL_PTR_HOST
  int max_recvs = kMaxRecvs;
  int max_comms = 65536;
  float latency_us = 0;
  std::string address;   // for logs
};

enum class PayloadKind : uint8_t { kRaw = 0, kFrame = 1 };

// What travels in front of every message.
struct MessageHeader {
  int32_t tag = 0;
  PayloadKind kind = PayloadKind::kRaw;
  uint64_t payload_bytes = 0;   // bytes on the wire after the header
  uint64_t original_bytes = 0;  // bytes the receiver ends up with (== payload for raw)
};

struct SendItem {
  MessageHeader header;
  const void* data = nullptr;  // payload_bytes bytes
};

struct RecvItem {
  int32_t tag = 0;
  void* data = nullptr;   // destination for raw payloads
  std::size_t capacity = 0;
};

// Result of one received message: where its payload is.
struct Received {
  MessageHeader header;
  std::span<const uint8_t> staged;  // the frame, when header.kind == kFrame
};

class SendComm {
 public:
  virtual ~SendComm() = default;
  // Posts a message. Sets *slot >= 0, or -1 if the comm is full (try again later).
  virtual Status post(const SendItem& item, int* slot) = 0;
  // Makes progress and tells whether the message in `slot` has left (its buffer is reusable).
  virtual Status test(int slot, bool* done) = 0;
  // Returns a completed slot to the pool.
  virtual void release(int slot) = 0;
  // The link's most recent delivery rate in bytes/s as the transport measures it (TCP: the
  // kernel's rate sampler). *lower_bound: the sender was not keeping the link busy, so the
  // link can do at least this. False when the transport cannot tell.
  virtual bool link_rate(double* bytes_per_s, bool* lower_bound) {
    (void)bytes_per_s;
    (void)lower_bound;
    return false;
  }
};

class RecvComm {
 public:
  virtual ~RecvComm() = default;
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
