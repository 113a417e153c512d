#include "plugin/engine/comm_base.h"

#include "plugin/profiler/comm_registry.h"

namespace squeeze::plugin {

CommBase::CommBase(CommKind kind, NetContext* ctx, const Engine* engine, int dev, bool staged)
    : kind_(kind), ctx_(ctx), engine_(engine), dev_(dev), staged_(staged) {}

CommBase::~CommBase() = default;

transport::Status CommBase::register_region(const transport::MemoryDesc& mem, MemRegion** out) {
  *out = nullptr;
  auto mr = std::make_unique<MemRegion>();
  mr->data = mem.data;
  mr->size = mem.size;
  mr->type = mem.ptr_type;
  transport::MemoryDesc what = mem;
  if (mem.ptr_type == transport::kPtrCuda && staged_) {
    if (transport::Status s = gpu_stage_region(this, mr.get()); !s.ok()) return s;
    what = transport::MemoryDesc{};
    what.data = mr->mirror->host;
    what.size = mr->size;
  }
  if (transport::Status s = register_memory(what, &mr->reg); !s.ok()) return s;
  mr->reg_index = next_reg_index_++;
  *out = mr.get();
  regions_.push_back(std::move(mr));
  return transport::Status::Ok();
}

bool CommBase::deregister_region(const MemRegion* mr) {
  for (auto it = regions_.begin(); it != regions_.end(); ++it) {
    if (it->get() == mr) {
      regions_.erase(it);
      return true;
    }
  }
  return false;
}

const policy::CommMatch* CommBase::comm_match() {
  if (!comm_match_ready_ && ctx_ != nullptr && ctx_->comm_id != 0 && engine_->policy != nullptr) {
    profiler::CommInfo info;
    if (profiler::lookup_comm(ctx_->comm_id, &info)) {  // else: try again later
      comm_match_ = std::make_unique<policy::CommMatch>(engine_->policy->resolve_comm(info.name));
      comm_match_ready_ = true;
    }
  }
  return comm_match_.get();
}

}  // namespace squeeze::plugin
