// One direction of one connection, driven the way NCCL's proxy drives it: the registered
// SIMPLE buffer is a FIFO of `nslots` slots (NCCL_STEPS / sliceSteps), each message occupies
// one slot from the moment it is filled (send) or posted (receive) until the request
// completes (send) or its data was consumed (receive). Requests are posted in order and
// retried when the plugin answers with a NULL request; completion is tested oldest first.
// Each message gets a ProxyStep profiler event and a `phandle` for the plugin.
// `addr_slots` (0: nslots) is how many slots the buffer holds: message m lives at slot
// m % addr_slots, while at most nslots are in flight. all-to-all's --copies gpu gives every
// message a slot of its own, so the data can be placed and read outside the timed region.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "perf/collective/comm.h"

namespace squeeze::perf {

// What setNetAttr says before this pipe's first request (see Communicator::xfer_attrs).
struct XferAttrs {
  uint32_t op = kOpAllReduce;
  uint32_t algo = kAlgoRing;
  uint32_t proto = kProtoSimple;
  int npeers = 1;
};

class SendPipe {
 public:
  SendPipe(Communicator& comm, Conn& conn, std::size_t slot_bytes, int nslots, void* op_event,
           XferAttrs attrs, std::size_t addr_slots = 0);
  ~SendPipe();
  SendPipe(const SendPipe&) = delete;
  SendPipe& operator=(const SendPipe&) = delete;

  bool can_fill() const { return filled_ - completed_ < msgs_.size(); }
  uint8_t* fill_slot() const { return at(filled_); }
  std::size_t slot_bytes() const { return slot_bytes_; }
  void push(std::size_t bytes);  // the slot from fill_slot() now holds `bytes` to send
  bool progress();               // posts what is queued, tests the oldest; true if anything moved
  std::size_t completed() const { return completed_; }
  std::size_t pushed() const { return filled_; }

 private:
  uint8_t* at(std::size_t m) const {
    return base_ + (m % addr_slots_) * slot_bytes_;
  }  // message m's slot
  struct Msg {
    std::size_t bytes = 0;
    void* req = nullptr;
    ProxyEventHandle ph;
  };
  Communicator& comm_;
  Conn& conn_;
  uint8_t* base_;
  std::size_t slot_bytes_;
  void* op_event_;
  XferAttrs attrs_;
  std::vector<Msg> msgs_;
  std::size_t addr_slots_;
  std::size_t filled_ = 0, posted_ = 0, completed_ = 0;
};

class RecvPipe {
 public:
  RecvPipe(Communicator& comm, Conn& conn, std::size_t slot_bytes, int nslots, std::size_t total,
           void* op_event, XferAttrs attrs, std::size_t addr_slots = 0);
  ~RecvPipe();
  RecvPipe(const RecvPipe&) = delete;
  RecvPipe& operator=(const RecvPipe&) = delete;

  bool progress();  // posts receives into free slots, tests the oldest; true if anything moved
  bool ready(std::size_t m) const;
  const uint8_t* data(std::size_t m) const { return at(m); }
  std::size_t size(std::size_t m) const { return slots_[m % slots_.size()].size; }
  void release(std::size_t m);  // message m's data was consumed: its slot may be reused
  std::size_t received() const { return done_; }
  std::size_t total() const { return total_; }

 private:
  uint8_t* at(std::size_t m) const {
    return base_ + (m % addr_slots_) * slot_bytes_;
  }  // message m's slot
  struct Slot {
    bool busy = false;
    std::size_t msg = 0;
    std::size_t size = 0;
    void* req = nullptr;
    ProxyEventHandle ph;
  };
  Communicator& comm_;
  Conn& conn_;
  uint8_t* base_;
  std::size_t slot_bytes_;
  std::size_t total_;
  void* op_event_;
  XferAttrs attrs_;
  std::vector<Slot> slots_;
  std::size_t addr_slots_;
  std::size_t posted_ = 0, done_ = 0;
};

}  // namespace squeeze::perf
