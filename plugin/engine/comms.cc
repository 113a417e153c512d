#include "plugin/engine/objects.h"

namespace squeeze::plugin {

SendComm::SendComm(NetContext* c) : CommBase(CommKind::kSend, c) {
  for (int i = kRequests - 1; i >= 0; --i) free.push_back(i);
}
SendComm::~SendComm() { wait_for_jobs(requests.data(), requests.data() + requests.size()); }

RecvComm::RecvComm(NetContext* c) : CommBase(CommKind::kRecv, c) {
  for (int i = static_cast<int>(requests.size()) - 1; i >= 0; --i) free.push_back(i);
}
RecvComm::~RecvComm() { wait_for_jobs(requests.data(), requests.data() + requests.size()); }

}  // namespace squeeze::plugin
