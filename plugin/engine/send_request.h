// One isend NCCL is waiting for: the message, the plan for it, and the staging frame its
// encode writes (kept across reuse of the request, with the transport's registration of it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "plugin/engine/comm_base.h"
#include "plugin/engine/job.h"
#include "plugin/engine/stream_state.h"
#include "plugin/policy/plan.h"
#include "transport/transport.h"

namespace squeeze::plugin {

struct SendRequest : RequestBase {
  // The message
  const void* data = nullptr;
  std::size_t size = 0;
  int tag = 0;
  const transport::Registration* reg = nullptr;  // NCCL's registration of `data`
  // What to send (plan.compress: a frame of plan.params over plan.count elements)
  policy::Plan plan;
  StreamState* stream = nullptr;  // when compressing
  Job job;                        // the encode (or the GPU staging of the message)
  // GPU staging: `data` is GPU memory staged through the pinned mirror at host_stage.
  bool gpu = false;
  uint8_t* host_stage = nullptr;
  // Posting
  int slot = -1;  // the transport's slot once posted
  bool posted = false;
  uint64_t wire_bytes = 0;  // payload and header, for the link measurement
  // The staging frame
  std::vector<uint8_t> frame;
  std::size_t frame_bytes = 0;
  uint64_t encode_ns = 0;
  // The transport's registration of `frame` (verbs: its MR), redone whenever the vector has
  // moved or grown, so a transport never guesses at staging memory by address.
  std::unique_ptr<transport::Registration> frame_reg;
  const uint8_t* frame_reg_data = nullptr;
  std::size_t frame_reg_size = 0;
};

}  // namespace squeeze::plugin
