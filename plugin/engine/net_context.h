// What one NCCL init() call gives the engine (v11 passes the context back to listen, connect,
// finalize and setNetAttr; older versions share a default one).
#pragma once

#include <cstdint>

#include "plugin/nccl/net_abi.h"

namespace squeeze::plugin {

// The collective attributes of setNetAttr (v11): bit masks, all ones when undefined. Each
// message is described with the attributes current when it was posted.
struct NetAttr {
  uint32_t op = UINT32_MAX, algo = UINT32_MAX, proto = UINT32_MAX;
};

struct NetContext {
  uint64_t comm_id = 0;
  nccl_profiler_callback_t prof = nullptr;
  NetAttr attr;
};

}  // namespace squeeze::plugin
