#include "plugin/collnet/call_identity.h"

#include <algorithm>
#include <map>
#include <mutex>

#include "plugin/log.h"
#include "plugin/policy/names.h"
#include "plugin/profiler/comm_registry.h"

namespace squeeze::collnet {

namespace {

constexpr int kGroupChannels = 8;  // COLLNET_GROUP_NSUBS: channels one call carries

// Collective network comms per communicator in this process: with more than one
// (one per net device), each sees only its channels' calls, and they would take
// each other's collectives from the profiler's queue.
std::mutex g_mu;
std::map<uint64_t, int>& comms_per_hash() {
  static auto* m = new std::map<uint64_t, int>();
  return *m;
}

}  // namespace

CallIdentity::CallIdentity(uint64_t comm_hash, int nodes) : comm_hash_(comm_hash), nodes_(nodes) {
  if (comm_hash_ == 0) {
    lose(
        "the collective network's init had no commId (CollNet table before "
        "v11)");
    return;
  }
  std::lock_guard<std::mutex> lock(g_mu);
  ++comms_per_hash()[comm_hash_];
}

CallIdentity::~CallIdentity() {
  if (comm_hash_ == 0) return;
  std::lock_guard<std::mutex> lock(g_mu);
  auto it = comms_per_hash().find(comm_hash_);
  if (it != comms_per_hash().end() && --it->second == 0) comms_per_hash().erase(it);
}

void CallIdentity::lose(std::string why) {
  if (!lost_)
    SQ_INFO(kSubsysNet,
            "collective network: calls' places in their tensors unknown from here (a rule with "
            "error feedback goes by its fallback): %s",
            why.c_str());
  lost_ = true;
  why_ = std::move(why);
}

CallIdentity::Result CallIdentity::next(uint64_t count, policy::DataType dtype) {
  Result r;
  if (lost_) return r;
  {
    std::lock_guard<std::mutex> lock(g_mu);
    if (comms_per_hash()[comm_hash_] > 1) {
      lose(
          "the communicator has several collective network comms (one per net "
          "device), each seeing part of a "
          "collective");
      return r;
    }
  }
  if (!have_ || done_ == calls_) {
    profiler::CollNetColl c;
    if (!profiler::CommRegistry::instance().take_collnet_coll(comm_hash_, have_seq_, seq_, &c)) {
      if (have_seq_) {  // the profiler did record earlier ones: this call's
                        // collective is missing
        lose(
            "no CollNet all-reduce recorded by the profiler for a call after "
            "all-reduce " +
            std::to_string(seq_));
        return r;
      }
      // No Coll event yet: another profiler (or none) is loaded, or the
      // profiler is off.
      have_ = false;
      why_ =
          "the built-in profiler recorded no CollNet all-reduce for this "
          "communicator";
      return r;
    }
    profiler::CommInfo info;
    if (profiler::lookup_comm(comm_hash_, &info) && info.nranks != nodes_) {
      lose("the communicator has " + std::to_string(info.nranks) + " ranks on " +
           std::to_string(nodes_) + " nodes: a node's proxy runs only its own channels' calls");
      return r;
    }
    have_ = true;
    have_seq_ = true;
    seq_ = c.seq;
    coll_count_ = c.count;
    dtype_ = c.dtype;
    algo_ = c.algo;
    channels_ = c.nchannels;
    done_ = 0;
    if (dtype_ != dtype) {
      lose(std::string("call of ") + policy::dtype_name(dtype) +
           " where the profiler's all-reduce " + std::to_string(seq_) + " is " +
           policy::dtype_name(dtype_));
      return r;
    }
    if (channels_ < 1) {
      lose("the profiler's all-reduce " + std::to_string(seq_) + " has no channels");
      return r;
    }
    groups_ = (channels_ + kGroupChannels - 1) / kGroupChannels;
    const auto first = static_cast<uint64_t>(std::min(channels_, kGroupChannels));
    if (count == 0 || count % first != 0) {
      lose("a call of " + std::to_string(count) + " elements cannot be " + std::to_string(first) +
           " equal channel chunks");
      return r;
    }
    chunk_ = count / first;
    const uint64_t loop = static_cast<uint64_t>(channels_) * chunk_;
    calls_ = ((coll_count_ + loop - 1) / loop) * static_cast<uint64_t>(groups_);
    if (calls_ == 0) calls_ = static_cast<uint64_t>(groups_);
  }
  const uint64_t step = done_ / static_cast<uint64_t>(groups_);
  const int group = static_cast<int>(done_ % static_cast<uint64_t>(groups_));
  const auto subs =
      static_cast<uint64_t>(std::min(kGroupChannels, channels_ - group * kGroupChannels));
  if (dtype != dtype_ || count != subs * chunk_) {
    lose("call " + std::to_string(done_) + " of all-reduce " + std::to_string(seq_) + " has " +
         std::to_string(count) + " elements of " + policy::dtype_name(dtype) + ", expected " +
         std::to_string(subs * chunk_) + " of " + policy::dtype_name(dtype_));
    return r;
  }
  r.known = true;
  r.stream_count = coll_count_;
  r.position = step * static_cast<uint64_t>(channels_) * chunk_ +
               static_cast<uint64_t>(group) * kGroupChannels * chunk_;
  r.algo = algo_;
  ++done_;
  return r;
}

}  // namespace squeeze::collnet
