// isend / irecv / test: the hot path. Nothing here blocks; a full comm returns a NULL
// request so NCCL retries later.
#include <array>
#include <climits>

#include "plugin/engine/net.h"
#include "plugin/engine/result.h"
#include "plugin/log.h"

namespace squeeze::plugin {

// test() reports sizes as int; NCCL never moves 2 GiB in one request, but stay defined.
static int clamp_int(uint64_t v) { return v > INT_MAX ? INT_MAX : static_cast<int>(v); }

nccl_result_t Net::isend(void* send_comm, void* data, std::size_t size, int tag, void* mhandle, void* phandle,
                         void** request) {
  (void)mhandle;
  (void)phandle;
  *request = nullptr;
  auto* c = static_cast<SendComm*>(send_comm);
  if (c == nullptr || c->kind != CommKind::kSend) {
    SQ_WARN("isend: not a Squeeze send comm");
    return kNcclInvalidArgument;
  }
  transport::SendItem item;
  item.header.tag = tag;
  item.header.kind = transport::PayloadKind::kRaw;
  item.header.payload_bytes = size;
  item.header.original_bytes = size;
  item.data = data;
  int slot = -1;
  SQ_CHECK_STATUS(c->t->post(item, &slot));
  if (slot < 0) return kNcclSuccess;
  Request& r = c->requests[slot];
  r.comm = c;
  r.slot = slot;
  r.n = 1;
  r.send_size = size;
  r.op = c->ctx->op;
  r.algo = c->ctx->algo;
  r.proto = c->ctx->proto;
  *request = &r;
  return kNcclSuccess;
}

nccl_result_t Net::irecv(void* recv_comm, int n, void** data, const std::size_t* sizes, const int* tags,
                         void** mhandles, void** phandles, void** request) {
  (void)mhandles;
  (void)phandles;
  *request = nullptr;
  auto* c = static_cast<RecvComm*>(recv_comm);
  if (c == nullptr || c->kind != CommKind::kRecv) {
    SQ_WARN("irecv: not a Squeeze receive comm");
    return kNcclInvalidArgument;
  }
  if (n < 1 || n > transport::kMaxRecvs) {
    SQ_WARN("irecv: n=%d outside [1, %d]", n, transport::kMaxRecvs);
    return kNcclInvalidArgument;
  }
  std::array<transport::RecvItem, transport::kMaxRecvs> items;
  for (int i = 0; i < n; ++i) items[i] = {tags[i], data[i], sizes[i]};
  int slot = -1;
  SQ_CHECK_STATUS(c->t->post({items.data(), static_cast<std::size_t>(n)}, &slot));
  if (slot < 0) return kNcclSuccess;
  Request& r = c->requests[slot];
  r.comm = c;
  r.slot = slot;
  r.n = n;
  r.op = c->ctx->op;
  r.algo = c->ctx->algo;
  r.proto = c->ctx->proto;
  *request = &r;
  return kNcclSuccess;
}

nccl_result_t Net::iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles, void** request) {
  (void)recv_comm;
  (void)n;
  (void)data;
  (void)sizes;
  (void)mhandles;
  *request = nullptr;  // host memory: nothing to flush
  return kNcclSuccess;
}

nccl_result_t Net::test(void* request, int* done, int* sizes) {
  *done = 0;
  auto* r = static_cast<Request*>(request);
  if (r == nullptr || r->comm == nullptr) {
    SQ_WARN("test: invalid request %p", request);
    return kNcclInvalidArgument;
  }
  bool finished = false;
  if (r->comm->kind == CommKind::kSend) {
    auto* c = static_cast<SendComm*>(r->comm);
    SQ_CHECK_STATUS(c->t->test(r->slot, &finished));
    if (!finished) return kNcclSuccess;
    if (sizes != nullptr) sizes[0] = clamp_int(r->send_size);
    c->t->release(r->slot);
  } else {
    auto* c = static_cast<RecvComm*>(r->comm);
    std::array<transport::Received, transport::kMaxRecvs> got{};
    SQ_CHECK_STATUS(c->t->test(r->slot, &finished, got));
    if (!finished) return kNcclSuccess;
    for (int i = 0; i < r->n; ++i) {
      if (got[i].header.kind != transport::PayloadKind::kRaw) {
        SQ_WARN("test: received a compressed frame, but this build has no codecs in the data path");
        c->t->release(r->slot);
        return kNcclInternalError;
      }
      if (sizes != nullptr) sizes[i] = clamp_int(got[i].header.original_bytes);
    }
    c->t->release(r->slot);
  }
  r->comm = nullptr;
  *done = 1;
  return kNcclSuccess;
}

}  // namespace squeeze::plugin
