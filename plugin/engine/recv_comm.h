// A receiving comm: NCCL's irecv, iflush and the receiving half of test(). Raw messages land
// in NCCL's buffer directly; a frame lands in the transport's staging and is decoded into
// NCCL's buffer (inline when small, else on a worker) before test() reports done. A frame that
// fails to decode is an error from test(), never silent garbage. GPU destinations on a staged
// device land in the pinned mirror and go through gpu/recv.cc (an H2D copy, or a GPU decode).
#pragma once

#include <array>
#include <deque>
#include <memory>
#include <vector>

#include "plugin/engine/comm_base.h"
#include "plugin/engine/recv_request.h"
#include "plugin/nccl/common.h"
#include "transport/transport.h"

namespace squeeze::plugin {

class RecvComm final : public CommBase {
 public:
  static constexpr int kRequests = transport::kMaxRequests;

  RecvComm(NetContext* ctx, const Engine* engine, int dev, bool staged,
           std::unique_ptr<transport::RecvComm> t);
  ~RecvComm() override;  // waits for its codec and GPU work

  nccl_result_t irecv(int n, void** data, const std::size_t* sizes, const int* tags,
                      void** mhandles, void** phandles, void** request);
  nccl_result_t iflush(int n, void** data, const int* sizes, void** mhandles, void** request);
  nccl_result_t test(RecvRequest* r, int* done, int* sizes);

  // For GPU staging: a request's index is its GPU slot.
  int index_of(const RecvRequest* r) const { return static_cast<int>(r - requests_.data()); }

 private:
  RecvRequest& claim(int slot, int n, bool flush);
  void release(RecvRequest* r);
  // Once a receive's bytes are in, starts decoding its frames. *state is the request's job
  // state; kIdle means its bytes are not all in yet.
  transport::Status start_decode(RecvRequest* r, JobState* state);
  nccl_result_t test_recv(RecvRequest* r, int* done, int* sizes);
  nccl_result_t test_flush(RecvRequest* r, int* done);
  transport::Status register_memory(const transport::MemoryDesc& mem,
                                    std::unique_ptr<transport::Registration>* reg) override;

  std::unique_ptr<transport::RecvComm> t_;
  std::array<RecvRequest, kRequests> requests_{};
  std::vector<int> free_;
  std::deque<RecvRequest*> posted_;  // receives not yet reported done, in posting order
};

}  // namespace squeeze::plugin
