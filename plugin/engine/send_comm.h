// A sending comm: NCCL's isend and the sending half of test(). Each message is described and
// planned (plugin/policy/plan.h), then posted raw (zero copy) or encoded into its request's
// staging frame, on a worker thread for large messages, inline for small ones. Messages reach
// the transport strictly in isend order, so the receiver's FIFO matching holds whatever the
// codecs' timing. GPU memory on a staged device goes through gpu/send.cc (a copy or a GPU
// encode into the pinned mirror).
#pragma once

#include <array>
#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <vector>

#include "plugin/engine/comm_base.h"
#include "plugin/engine/send_request.h"
#include "plugin/engine/stream_state.h"
#include "plugin/nccl/common.h"
#include "plugin/policy/plan.h"
#include "transport/transport.h"

namespace squeeze::plugin {

class SendComm final : public CommBase, private policy::PlanHooks {
 public:
  // NCCL_NET_MAX_REQUESTS per comm, times maxRecvs on the send side.
  static constexpr int kRequests = transport::kMaxRequests * transport::kMaxRecvs;

  SendComm(NetContext* ctx, const Engine* engine, int dev, bool staged,
           std::unique_ptr<transport::SendComm> t);
  ~SendComm() override;  // waits for its codec and GPU work

  nccl_result_t isend(void* data, std::size_t size, int tag, void* mhandle, void* phandle,
                      void** request);
  nccl_result_t test(SendRequest* r, int* done, int* sizes);

  // For GPU staging: a request's index is its GPU slot.
  int index_of(const SendRequest* r) const { return static_cast<int>(r - requests_.data()); }

 private:
  void progress();
  // Starts the encodes (or GPU work) of queued requests, in isend order.
  void start_encodes();
  // Posts the queued requests whose bytes are ready, in isend order; an error is kept in
  // error_ for the next test().
  void post_ready();
  transport::Status register_frame(SendRequest* r);
  void sample_link();
  transport::Status register_memory(const transport::MemoryDesc& mem,
                                    std::unique_ptr<transport::Registration>* reg) override;
  // policy::PlanHooks
  uint64_t stream_message(const policy::StreamKey& key) override;
  bool dedupe_open(const policy::StreamKey& key) override;
  bool pays(compress::CodecId codec, uint64_t bytes) override;
  StreamState* stream(const policy::StreamKey& key);

  std::unique_ptr<transport::SendComm> t_;
  std::array<SendRequest, kRequests> requests_{};
  std::vector<int> free_;           // request indices
  std::deque<SendRequest*> queue_;  // accepted, not yet posted (isend order)
  int inflight_ = 0;                // posted, not yet reported done
  transport::Status error_;         // a failed post, reported by the next test()
  std::map<policy::StreamKey, std::unique_ptr<StreamState>> streams_;
  StreamState* planned_stream_ = nullptr;  // the stream plan_message() last counted a message in
  // Link measurement: bytes completed since the last sample.
  std::chrono::steady_clock::time_point busy_since_{};
  uint64_t busy_bytes_ = 0;
};

}  // namespace squeeze::plugin
