// A region NCCL registered with regMr / regMrDmaBuf on a comm (the memory handle NCCL passes
// back with each isend, irecv and iflush).
#pragma once

#include <cstddef>
#include <memory>

#include "plugin/engine/gpu/staging.h"
#include "transport/transport.h"

namespace squeeze::plugin {

struct MemRegion {
  void* data = nullptr;
  std::size_t size = 0;
  int type = 0;       // NCCL_PTR_*
  int reg_index = 0;  // order of registration on its comm: LL, LL128, SIMPLE for collectives
  std::unique_ptr<transport::Registration> reg;  // the transport's (verbs: the MR); may be null
  // GPU staging: the pinned host twin of this CUDA region (then `reg` registers the mirror,
  // never the GPU memory). Null for host memory and for GPUDirect regions.
  std::unique_ptr<GpuMirror> mirror{};
  ~MemRegion() { reg.reset(); }  // the registration goes before the memory it registers
};

}  // namespace squeeze::plugin
