#include "plugin/collnet/lane.h"

#include <span>

namespace squeeze::collnet {

namespace {

transport::Status named(const transport::Status& s, const std::string& lane) {
  return transport::Status(s.code(), "collective network, " + lane + ": " + s.message());
}

}  // namespace

transport::Status SendLane::progress(uint64_t* bytes_done) {
  while (!queue_.empty() && queue_.front()->ready) {
    SendEntry* e = queue_.front();
    int slot = -1;
    if (transport::Status s = t_->post(e->item, &slot); !s.ok()) return named(s, name_);
    if (slot < 0) break;  // the comm is full: later
    e->slot = slot;
    e->posted = true;
    posted_.push_back(e);
    queue_.pop_front();
  }
  while (!posted_.empty()) {
    SendEntry* e = posted_.front();
    bool done = false;
    if (transport::Status s = t_->test(e->slot, &done); !s.ok()) return named(s, name_);
    if (!done) break;
    t_->release(e->slot);
    e->done = true;
    if (bytes_done != nullptr) *bytes_done += e->item.header.payload_bytes;
    posted_.pop_front();
  }
  return transport::Status::Ok();
}

transport::Status RecvLane::progress() {
  while (!queue_.empty() && queue_.front()->ready) {
    RecvEntry* e = queue_.front();
    int slot = -1;
    if (transport::Status s = t_->post({&e->item, 1}, &slot); !s.ok()) return named(s, name_);
    if (slot < 0) break;
    e->slot = slot;
    e->posted = true;
    posted_.push_back(e);
    queue_.pop_front();
  }
  while (!posted_.empty()) {
    RecvEntry* e = posted_.front();
    bool done = false;
    if (transport::Status s = t_->test(e->slot, &done, {&e->got, 1}); !s.ok())
      return named(s, name_);
    if (!done) break;
    e->arrived = true;
    posted_.pop_front();
  }
  return transport::Status::Ok();
}

void RecvLane::release(RecvEntry* e) {
  if (e->slot >= 0) t_->release(e->slot);
  e->slot = -1;
}

}  // namespace squeeze::collnet
