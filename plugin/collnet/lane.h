// One direction of one hop between two nodes: a transport comm and the messages
// queued on it. Messages are posted strictly in queue order (calls are queued
// in the order NCCL issued them, and the receiver matches by order and tag),
// each once its call says it is ready. Entries belong to their call; a lane
// only points at them while they are queued or in flight.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "transport/transport.h"

namespace squeeze::collnet {

struct SendEntry {
  transport::SendItem item;
  bool ready = false;  // the payload is in place: it may be posted
  bool posted = false;
  bool done = false;  // left this node; its payload may be reused
  int slot = -1;
};

struct RecvEntry {
  transport::RecvItem item;
  bool ready = false;  // the destination may be written: the receive may be posted
  bool posted = false;
  bool arrived = false;  // `got` describes it; the transport slot is held until release()
  int slot = -1;
  transport::Received got;
};

class SendLane {
 public:
  SendLane(std::unique_ptr<transport::SendComm> t, std::string name)
      : t_(std::move(t)), name_(std::move(name)) {}
  void enqueue(SendEntry* e) { queue_.push_back(e); }
  // Posts the ready entries at the head of the queue, in order, and completes
  // the posted ones that left (bytes_done += their wire bytes). An error names
  // the lane.
  transport::Status progress(uint64_t* bytes_done);
  bool idle() const { return queue_.empty() && posted_.empty(); }
  transport::SendComm& comm() { return *t_; }
  const std::string& name() const { return name_; }

 private:
  std::unique_ptr<transport::SendComm> t_;
  std::string name_;               // "to node 3, results"
  std::deque<SendEntry*> queue_;   // not posted yet
  std::deque<SendEntry*> posted_;  // in flight
};

class RecvLane {
 public:
  RecvLane(std::unique_ptr<transport::RecvComm> t, std::string name)
      : t_(std::move(t)), name_(std::move(name)) {}
  void enqueue(RecvEntry* e) { queue_.push_back(e); }
  // Posts the ready entries at the head of the queue, in order, and marks
  // arrived the posted ones whose message is in. An error names the lane.
  transport::Status progress();
  // Gives an arrived entry's transport slot (and staging) back.
  void release(RecvEntry* e);
  transport::RecvComm& comm() { return *t_; }
  const std::string& name() const { return name_; }

 private:
  std::unique_ptr<transport::RecvComm> t_;
  std::string name_;
  std::deque<RecvEntry*> queue_;   // not posted yet
  std::deque<RecvEntry*> posted_;  // posted, not arrived yet
};

}  // namespace squeeze::collnet
