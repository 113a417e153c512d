#include "perf/collective/pipe.h"

#include <stdexcept>
#include <string>

#include "perf/common/nccl_result.h"

namespace squeeze::perf {
namespace {

std::string where(const Communicator& c, const char* dir, int peer, std::size_t m) {
  return "rank " + std::to_string(c.rank()) + ": " + dir + " rank " + std::to_string(peer) +
         ", message " + std::to_string(m);
}

void check(int rc, const std::string& what) {
  if (rc != kNcclSuccess)
    throw std::runtime_error(what + ": plugin returned " + nccl_result_name(rc));
}

}  // namespace

SendPipe::SendPipe(Communicator& comm, Conn& conn, std::size_t slot_bytes, int nslots,
                   void* op_event, XferAttrs attrs, std::size_t addr_slots)
    : comm_(comm),
      conn_(conn),
      base_(conn.simple),
      slot_bytes_(slot_bytes),
      op_event_(op_event),
      attrs_(attrs),
      msgs_(static_cast<std::size_t>(nslots)),
      addr_slots_(addr_slots != 0 ? addr_slots : msgs_.size()) {}

SendPipe::~SendPipe() {
  for (Msg& m : msgs_) comm_.chain().stop(m.ph.step_event);  // steps left by an error
}

void SendPipe::push(std::size_t bytes) {
  if (!can_fill() || bytes > slot_bytes_)
    throw std::logic_error("SendPipe::push: no free slot or message too large");
  Msg& m = msgs_[filled_ % msgs_.size()];
  m.bytes = bytes;
  m.req = nullptr;
  m.ph.chain = comm_.chain().active() ? &comm_.chain() : nullptr;
  m.ph.step_event = comm_.chain().proxy_step(op_event_, static_cast<int>(filled_));
  ++filled_;
}

bool SendPipe::progress() {
  bool moved = false;
  nccl_net_v11* net = comm_.net();
  while (posted_ < filled_) {
    Msg& m = msgs_[posted_ % msgs_.size()];
    if (posted_ == 0) comm_.xfer_attrs(true, attrs_.op, attrs_.algo, attrs_.proto, attrs_.npeers);
    void* data = at(posted_);
    check(net->isend(conn_.comm, data, m.bytes, comm_.rank(), conn_.simple_mh, &m.ph, &m.req),
          where(comm_, "isend to", conn_.peer, posted_));
    if (m.req == nullptr) break;  // the plugin is full: retry on the next pass
    ++posted_;
    moved = true;
  }
  while (completed_ < posted_) {
    Msg& m = msgs_[completed_ % msgs_.size()];
    int done = 0, size = 0;
    check(net->test(m.req, &done, &size), where(comm_, "test of send to", conn_.peer, completed_));
    if (!done) break;
    comm_.chain().stop(m.ph.step_event);
    m.ph.step_event = nullptr;
    m.req = nullptr;
    ++completed_;
    moved = true;
  }
  return moved;
}

RecvPipe::RecvPipe(Communicator& comm, Conn& conn, std::size_t slot_bytes, int nslots,
                   std::size_t total, void* op_event, XferAttrs attrs, std::size_t addr_slots)
    : comm_(comm),
      conn_(conn),
      base_(conn.simple),
      slot_bytes_(slot_bytes),
      total_(total),
      op_event_(op_event),
      attrs_(attrs),
      slots_(static_cast<std::size_t>(nslots)),
      addr_slots_(addr_slots != 0 ? addr_slots : slots_.size()) {}

RecvPipe::~RecvPipe() {
  for (Slot& s : slots_) comm_.chain().stop(s.ph.step_event);
}

bool RecvPipe::ready(std::size_t m) const {
  const Slot& s = slots_[m % slots_.size()];
  return m < done_ && s.busy && s.msg == m;
}

void RecvPipe::release(std::size_t m) {
  Slot& s = slots_[m % slots_.size()];
  if (!ready(m)) throw std::logic_error("RecvPipe::release of a message that is not ready");
  s.busy = false;
}

bool RecvPipe::progress() {
  bool moved = false;
  nccl_net_v11* net = comm_.net();
  while (posted_ < total_) {
    Slot& s = slots_[posted_ % slots_.size()];
    if (s.busy) break;
    if (s.req == nullptr) {  // first attempt for this message
      if (posted_ == 0)
        comm_.xfer_attrs(false, attrs_.op, attrs_.algo, attrs_.proto, attrs_.npeers);
      s.ph.chain = comm_.chain().active() ? &comm_.chain() : nullptr;
      if (s.ph.step_event == nullptr)
        s.ph.step_event = comm_.chain().proxy_step(op_event_, static_cast<int>(posted_));
    }
    void* data = at(posted_);
    std::size_t cap = slot_bytes_;
    int tag = conn_.peer;
    void* mh = conn_.simple_mh;
    void* ph = &s.ph;
    check(net->irecv(conn_.comm, 1, &data, &cap, &tag, &mh, &ph, &s.req),
          where(comm_, "irecv from", conn_.peer, posted_));
    if (s.req == nullptr) break;
    s.busy = true;
    s.msg = posted_++;
    moved = true;
  }
  while (done_ < posted_) {
    Slot& s = slots_[done_ % slots_.size()];
    int done = 0, size = 0;
    check(net->test(s.req, &done, &size), where(comm_, "test of receive from", conn_.peer, done_));
    if (!done) break;
    if (size < 0 || static_cast<std::size_t>(size) > slot_bytes_)
      throw std::runtime_error(where(comm_, "receive from", conn_.peer, done_) +
                               ": test reported " + std::to_string(size) + " bytes for a " +
                               std::to_string(slot_bytes_) + "-byte buffer");
    s.size = static_cast<std::size_t>(size);
    s.req = nullptr;
    comm_.chain().stop(s.ph.step_event);
    s.ph.step_event = nullptr;
    ++done_;
    moved = true;
  }
  return moved;
}

}  // namespace squeeze::perf
