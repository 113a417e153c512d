// Which tensor an iallreduce call carries, and where in it: the stream identity
// that error feedback needs (a piece's residual must return to the same
// elements next time). NCCL's collective network API says neither, so it is
// learned from the built-in profiler, which records every all-reduce NCCL runs
// on a CollNet algorithm (count, dtype, channels, in order).
//
// NCCL 2.28.9 (plugin/nccl/COLLNET.md): the proxy runs a communicator's CollNet
// collectives one after the other on a net device, and cuts each into calls
// step by step: per step, one call per group of up to 8 channels, each call
// exactly (channels in the group) x chunkSize bytes, the last step's too (its
// tail beyond the tensor is stale buffer contents). So a collective of N
// elements over C channels with chunk c (learned from its first call) has
// ceil(N / (C·c)) steps of ceil(C / 8) calls, and call k of it starts at
// element (k / groups)·C·c + (k % groups)·8·c.
//
// That holds only where this node's proxy runs every channel: one rank per node
// (nranks == nodes) and one collective network comm for the communicator.
// Anywhere else, or without the profiler's events, or as soon as a call does
// not fit the model, the identity is unknown (and stays unknown: a cursor that
// lost its place must not guess).
#pragma once

#include <cstdint>
#include <string>

#include "plugin/policy/message_meta.h"

namespace squeeze::collnet {

class CallIdentity {
 public:
  // comm_hash: NCCL's commId from init (0: none, v8..v10), nodes: the mesh's
  // size.
  CallIdentity(uint64_t comm_hash, int nodes);
  ~CallIdentity();
  CallIdentity(const CallIdentity&) = delete;
  CallIdentity& operator=(const CallIdentity&) = delete;

  struct Result {
    bool known = false;
    uint64_t stream_count = 0;  // elements of the tensor
    uint64_t position = 0;      // element offset of the call's first element in it
    policy::Algo algo = policy::Algo::kCollNet;
  };
  // The identity of the next call, issued with `count` elements of `dtype`.
  Result next(uint64_t count, policy::DataType dtype);
  // Why the identity is unknown ("" while it is known or has not been asked).
  const std::string& why_unknown() const { return why_; }

 private:
  void lose(std::string why);

  uint64_t comm_hash_;
  int nodes_;
  bool lost_ = false;
  std::string why_;
  // The collective being cut into calls.
  bool have_ = false;
  uint64_t seq_ = 0;
  bool have_seq_ = false;
  uint64_t coll_count_ = 0;
  policy::DataType dtype_ = policy::DataType::kUnknown;
  policy::Algo algo_ = policy::Algo::kCollNet;
  int channels_ = 0;
  int groups_ = 0;
  uint64_t chunk_ = 0;  // elements per channel per step
  uint64_t calls_ = 0;  // calls of the collective
  uint64_t done_ = 0;   // calls seen
};

}  // namespace squeeze::collnet
