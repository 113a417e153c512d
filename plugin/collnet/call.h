// One iallreduce NCCL is waiting for, on a mesh of n nodes where this node is
// `me`:
//  1. contributions: piece p of the input, coded by its own plan, goes to node
//  p (p != me);
//     every other node's version of piece `me` arrives into scratch;
//  2. the owner's step: the n versions of piece `me` (its own exact, the others
//  decoded) are
//     reduced in node order, the result is coded once, kept decoded in recvData
//     and sent as the same bytes to every other node;
//  3. results: node p's reduced piece p arrives and is decoded into recvData.
// Every node ends with the owners' bits, whatever the codecs
// (plugin/collnet/README.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "compress/threshold.h"
#include "plugin/collnet/buffer.h"
#include "plugin/collnet/call_identity.h"
#include "plugin/collnet/lane.h"
#include "plugin/collnet/pieces.h"
#include "plugin/engine/job.h"
#include "plugin/policy/plan.h"

namespace squeeze::collnet {

using plugin::Job;
using plugin::JobState;

class CollComm;
struct CollRegion;

// Per-stream codec state (threshold tau and error-feedback residual, the bound
// schedule's message index), one per policy::StreamKey: rule, tensor, piece
// position and hop.
struct CollStream {
  compress::ThresholdState threshold;
  uint64_t messages = 0;
  bool busy = false;  // a job of this stream is running (progress thread only)
};

struct Call;

// What this node exchanges with one other node p in one call.
struct PeerPart {
  Call* call = nullptr;
  int peer = -1;
  Piece piece;  // node p's piece
  // Piece p of the input, for node p.
  policy::Plan plan;
  CollStream* stream = nullptr;  // when plan.compress with a stateful codec
  Buffer frame;
  std::size_t frame_bytes = 0;
  uint64_t encode_ns = 0;
  std::string encode_error;  // the encode failed: the piece goes raw
  SendEntry contribution_out;
  RecvEntry contribution_in;  // node p's version of this node's piece
  SendEntry result_out;       // this node's reduced piece, for node p
  RecvEntry result_in;        // node p's reduced piece
  Job decode;                 // decoding result_in into recvData
  bool result_done = false;
};

struct Call {
  static constexpr uint32_t kMagic = 0x4c4c4143u;  // "CALL"
  uint32_t magic = kMagic;
  CollComm* comm = nullptr;  // null: free
  uint64_t seq = 0;
  // The call
  const uint8_t* send = nullptr;
  uint8_t* recv = nullptr;
  uint64_t count = 0;
  int nccl_dtype = 0;
  policy::DataType dtype = policy::DataType::kUnknown;
  std::size_t elem = 0;
  policy::ReduceOp op = policy::ReduceOp::kUnknown;
  const CollRegion* send_region = nullptr;
  const CollRegion* recv_region = nullptr;
  CallIdentity::Result id;
  // Parts, indexed by node (the own entry holds this node's piece only).
  std::unique_ptr<PeerPart[]> parts;
  // This node's piece: the versions of it that arrive (one slot per node; its
  // reduction goes straight into recvData).
  Buffer scratch;
  policy::Plan result_plan;
  CollStream* result_stream = nullptr;
  Buffer result_frame;
  std::size_t result_frame_bytes = 0;
  uint64_t result_encode_ns = 0;
  // Stages
  Job encode;  // the contributions
  Job reduce;  // decode the versions of this node's piece, reduce, code the
               // result
  bool encode_started = false, encode_handled = false;
  bool reduce_started = false, reduce_handled = false;
  bool results_posted = false;  // result_in entries made ready
};

}  // namespace squeeze::collnet
