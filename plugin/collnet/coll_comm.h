// One collective network comm: this node's end of the mesh
// (plugin/collnet/mesh.h), the memory NCCL registered on it, and the iallreduce
// calls in flight (plugin/collnet/call.h). Calls progress in the order NCCL
// issued them (every node issues them in the same order): each lane carries one
// message per call, and stateful codec work (threshold tau, error feedback)
// runs one call at a time per stream, in call order. Everything but reg_mr and
// dereg_mr runs on NCCL's proxy progress thread; codec work runs on the
// engine's workers.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "plugin/collnet/call.h"
#include "plugin/collnet/call_identity.h"
#include "plugin/collnet/lane.h"
#include "plugin/collnet/mesh.h"
#include "plugin/engine/engine.h"
#include "plugin/nccl/common.h"
#include "plugin/policy/plan.h"
#include "transport/transport.h"

namespace squeeze::collnet {

// A region NCCL registered with regMr: the transport's registration of it on
// every link.
struct CollRegion {
  void* data = nullptr;
  std::size_t size = 0;
  int type = 0;
  std::vector<std::unique_ptr<transport::Registration>> send_regs;  // by link: peer * kHops + hop
  std::vector<std::unique_ptr<transport::Registration>> recv_regs;
  bool contains(const void* p, std::size_t bytes) const;
};

class CollComm final : private policy::PlanHooks {
 public:
  static constexpr uint32_t kMagic = 0x4d4f4343u;  // "CCOM"
  static constexpr int kMaxCalls = 64;  // in flight; NCCL keeps at most 8 per group of 8 channels

  CollComm(const plugin::Engine& engine, int dev, int nodes, int me, uint64_t comm_hash,
           std::vector<PeerLinks> links);
  ~CollComm();  // waits for its codec jobs
  CollComm(const CollComm&) = delete;
  CollComm& operator=(const CollComm&) = delete;

  bool valid() const { return magic_ == kMagic; }
  int nodes() const { return nodes_; }
  int me() const { return me_; }

  // regMr/regMrDmaBuf (NCCL's service thread). Host memory only.
  nccl_result_t reg_mr(const transport::MemoryDesc& mem, void** mhandle);
  nccl_result_t dereg_mr(void* mhandle);
  // iallreduce: *request stays null when kMaxCalls are in flight (NCCL
  // retries).
  nccl_result_t iallreduce(const void* send, void* recv, uint64_t count, int nccl_dtype,
                           int nccl_op, void* send_mh, void* recv_mh, void** request);
  // test: *size receives the bytes reduced (count x element size).
  nccl_result_t test(Call* call, int* done, int* size);

  // For the codec jobs.
  const plugin::Engine& engine() const { return engine_; }

 private:
  // policy::PlanHooks
  uint64_t stream_message(const policy::StreamKey& key) override;
  bool dedupe_open(const policy::StreamKey& key) override;
  bool pays(compress::CodecId codec, uint64_t bytes) override;

  std::size_t link(int peer, int hop) const { return static_cast<std::size_t>(peer * kHops + hop); }
  const CollRegion* find_region(const void* mhandle) const;
  const transport::Registration* reg_of(const CollRegion* r, int peer, int hop, bool send) const;
  Call* free_call();
  policy::MessageMeta describe(const Call& c, const Piece& piece, policy::CollNetHop hop);
  policy::Plan plan(const Call& c, const Piece& piece, policy::CollNetHop hop, CollStream** stream);
  void progress();
  bool progress_lanes();
  // Moves one call as far as it can go; false when it failed (error_ set).
  bool advance(Call& c, bool* encode_blocked, bool* reduce_blocked);
  void start_encode(Call& c);
  void start_reduce(Call& c);
  void post_contributions(Call& c);
  void post_results(Call& c);
  bool finish_result(Call& c, PeerPart& part);  // false: failed
  bool complete(const Call& c) const;
  void release(Call& c);
  void fail(const std::string& why, nccl_result_t code = kNcclRemoteError);
  void sample_link(uint64_t bytes_done);
  void wait_for_jobs() const;
  void wait_for_jobs(const Call& c) const;

  uint32_t magic_ = kMagic;
  const plugin::Engine& engine_;
  int dev_;
  int nodes_, me_;
  uint64_t comm_hash_;
  std::vector<std::unique_ptr<SendLane>> send_;  // by link
  std::vector<std::unique_ptr<RecvLane>> recv_;
  mutable std::mutex regions_mu_;  // regMr runs on NCCL's service thread
  std::vector<std::unique_ptr<CollRegion>> regions_;
  std::unique_ptr<Call[]> calls_;
  std::deque<Call*> active_;  // in issue order
  uint64_t next_seq_ = 0;
  std::map<policy::StreamKey, std::unique_ptr<CollStream>> streams_;
  CollStream* last_stream_ = nullptr;  // the stream plan_message() last counted a message in
  CallIdentity identity_;
  bool feedback_off_logged_ = false;
  bool comm_info_ready_ = false;
  int32_t comm_nranks_ = 0;
  std::unique_ptr<policy::CommMatch> comm_match_;
  std::string error_;  // sticky: once a link or a frame failed, every test() says so
  nccl_result_t error_code_ = kNcclSuccess;
  // Link measurement without the transport's own (bytes over wall time).
  uint64_t link_bytes_ = 0;
  double link_since_ = 0;
};

}  // namespace squeeze::collnet
