#include "plugin/profiler/event_pool.h"

#include <unistd.h>

#include <chrono>
#include <random>

namespace squeeze::profiler {
namespace {

// Handle layout (64 bits): index 0-19 | step slot 20-22 | step flag 23 | generation 24-47 |
// salt 48-62. The salt is never 0, so a handle is never NULL.
constexpr uint32_t kIndexBits = 20;
constexpr uint64_t kIndexMask = (uint64_t{1} << kIndexBits) - 1;
constexpr unsigned kStepShift = 20;
constexpr uint64_t kStepFlag = uint64_t{1} << 23;
constexpr unsigned kGenShift = 24;
constexpr uint32_t kGenMask = (1u << 24) - 1;
constexpr unsigned kSaltShift = 48;
constexpr uint64_t kSaltMask = 0x7fff;

}  // namespace

struct EventPool::Slot {
  uint32_t gen = 0;
  SlotKind kind = SlotKind::kFree;
  TaskKind task_kind = TaskKind::kColl;
  bool retired = false;
  bool nccl_ref = false;   // NCCL has not stopped this event yet
  uint8_t live_steps = 0;  // ops: bit i = a started, not yet stopped step in step slot i
  int32_t refs = 0;
  ChainMeta meta;
  // ops only
  OpInfo op;
  bool holds_parent = false;
  uint32_t parent = 0;
  int32_t steps[kStepSlots] = {-1, -1, -1, -1, -1, -1, -1, -1};
};

EventPool::EventPool(uint32_t max_slots, uint32_t retained_tasks)
    : max_slots_(std::min<uint32_t>(std::max<uint32_t>(max_slots, kChunkSlots), 1u << kIndexBits)),
      retained_cap_(retained_tasks == 0 ? 1 : retained_tasks) {
  std::random_device rd;
  uint64_t seed =
      (uint64_t{rd()} << 32) ^ rd() ^ static_cast<uint64_t>(getpid()) ^
      static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  salt_ = (seed ^ (seed >> 17) ^ (seed >> 41)) & kSaltMask;
  if (salt_ == 0) salt_ = 0x5351;
  retired_.assign(retained_cap_, 0);
}

EventPool::~EventPool() = default;

uint64_t EventPool::encode(uint32_t index, uint32_t gen, bool step, int step_slot) const {
  uint64_t h = (salt_ << kSaltShift) | (uint64_t{gen & kGenMask} << kGenShift) | index;
  if (step) h |= kStepFlag | (static_cast<uint64_t>(step_slot & (kStepSlots - 1)) << kStepShift);
  return h;
}

EventPool::Slot* EventPool::slot_at(uint32_t index) const {
  uint32_t chunk = index / kChunkSlots;
  if (chunk >= chunks_.size()) return nullptr;
  return &chunks_[chunk][index % kChunkSlots];
}

EventPool::Slot* EventPool::decode(void* handle, uint32_t* index, bool* step,
                                   int* step_slot) const {
  auto h = reinterpret_cast<uintptr_t>(handle);
  if (h == 0 || ((h >> kSaltShift) & kSaltMask) != salt_ || (h >> 63) != 0) return nullptr;
  *index = static_cast<uint32_t>(h & kIndexMask);
  *step = (h & kStepFlag) != 0;
  *step_slot = static_cast<int>((h >> kStepShift) & (kStepSlots - 1));
  if (!*step && *step_slot != 0) return nullptr;
  Slot* s = slot_at(*index);
  if (s == nullptr || s->kind == SlotKind::kFree) return nullptr;
  if (s->gen != static_cast<uint32_t>((h >> kGenShift) & kGenMask)) return nullptr;
  if (*step && s->kind != SlotKind::kOp) return nullptr;
  return s;
}

bool EventPool::alloc(uint32_t* index) {
  if (free_.empty()) {
    uint32_t have = static_cast<uint32_t>(chunks_.size()) * kChunkSlots;
    if (have + kChunkSlots <= max_slots_) {
      chunks_.push_back(std::make_unique<Slot[]>(kChunkSlots));
      for (uint32_t i = kChunkSlots; i > 0; --i) free_.push_back(have + i - 1);
    } else if (retired_count_ > 0) {
      // Full: recycle the oldest retained task.
      uint32_t victim = retired_[retired_head_];
      retired_head_ = (retired_head_ + 1) % retained_cap_;
      --retired_count_;
      free_slot(victim);
    } else {
      return false;
    }
  }
  *index = free_.back();
  free_.pop_back();
  return true;
}

void EventPool::free_slot(uint32_t index) {
  Slot* s = slot_at(index);
  uint32_t gen = (s->gen + 1) & kGenMask;
  *s = Slot{};
  s->gen = gen;
  free_.push_back(index);
}

void* EventPool::create_task(TaskKind kind, const ChainMeta& meta) {
  std::lock_guard<std::mutex> lock(mu_);
  uint32_t index = 0;
  if (!alloc(&index)) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  Slot* s = slot_at(index);
  s->kind = SlotKind::kTask;
  s->task_kind = kind;
  s->refs = 1;  // NCCL's, until stop
  s->nccl_ref = true;
  s->meta = meta;
  ++live_tasks_;
  return reinterpret_cast<void*>(static_cast<uintptr_t>(encode(index, s->gen, false, 0)));
}

void* EventPool::create_op(void* parent, const OpInfo& info) {
  std::lock_guard<std::mutex> lock(mu_);
  uint32_t index = 0;
  if (!alloc(&index)) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  Slot* s = slot_at(index);
  s->kind = SlotKind::kOp;
  s->refs = 1;
  s->nccl_ref = true;
  s->op = info;
  ++live_ops_;
  if (!info.foreign) {
    uint32_t pi = 0;
    bool step = false;
    int ss = 0;
    Slot* p = decode(parent, &pi, &step, &ss);
    if (p != nullptr && !step && p->kind == SlotKind::kTask &&
        (p->task_kind == TaskKind::kColl || p->task_kind == TaskKind::kP2p)) {
      s->meta = p->meta;
      if (!p->retired) {  // a live parent stays alive while this op runs
        ++p->refs;
        s->holds_parent = true;
        s->parent = pi;
      }
    }
  }
  return reinterpret_cast<void*>(static_cast<uintptr_t>(encode(index, s->gen, false, 0)));
}

void* EventPool::start_step(void* op, int step) {
  std::lock_guard<std::mutex> lock(mu_);
  uint32_t index = 0;
  bool is_step = false;
  int ss = 0;
  Slot* s = decode(op, &index, &is_step, &ss);
  if (s == nullptr || is_step || s->kind != SlotKind::kOp) return nullptr;
  int slot = step < 0 ? 0 : step % kStepSlots;
  s->steps[slot] = step;
  auto bit = static_cast<uint8_t>(1u << slot);
  if ((s->live_steps & bit) == 0) {  // one reference per live step slot
    s->live_steps = static_cast<uint8_t>(s->live_steps | bit);
    ++s->refs;
  }
  return reinterpret_cast<void*>(static_cast<uintptr_t>(encode(index, s->gen, true, slot)));
}

bool EventPool::read_task(void* handle, TaskKind* kind, ChainMeta* meta) const {
  std::lock_guard<std::mutex> lock(mu_);
  uint32_t index = 0;
  bool step = false;
  int ss = 0;
  const Slot* s = decode(handle, &index, &step, &ss);
  if (s == nullptr || step || s->kind != SlotKind::kTask) return false;
  *kind = s->task_kind;
  *meta = s->meta;
  return true;
}

bool EventPool::read_step(void* step_handle, StepView* out) const {
  std::lock_guard<std::mutex> lock(mu_);
  uint32_t index = 0;
  bool step = false;
  int ss = 0;
  const Slot* s = decode(step_handle, &index, &step, &ss);
  if (s == nullptr || !step) return false;
  out->meta = s->meta;
  out->op = s->op;
  out->step = s->steps[ss];
  return true;
}

void EventPool::release_task(uint32_t index) {
  Slot* s = slot_at(index);
  if (--s->refs > 0) return;
  --live_tasks_;
  s->retired = true;
  if (retired_count_ == retained_cap_) {  // forget the oldest retained task
    uint32_t victim = retired_[retired_head_];
    retired_head_ = (retired_head_ + 1) % retained_cap_;
    --retired_count_;
    free_slot(victim);
  }
  retired_[(retired_head_ + retired_count_) % retained_cap_] = index;
  ++retired_count_;
}

void EventPool::release_op(uint32_t index) {
  Slot* s = slot_at(index);
  if (--s->refs > 0) return;
  --live_ops_;
  bool holds = s->holds_parent;
  uint32_t parent = s->parent;
  free_slot(index);
  if (holds) release_task(parent);
}

void EventPool::stop(void* handle) {
  std::lock_guard<std::mutex> lock(mu_);
  uint32_t index = 0;
  bool step = false;
  int ss = 0;
  Slot* s = decode(handle, &index, &step, &ss);
  if (s == nullptr) return;
  if (step) {
    // A step stopped twice (or never started) must not free its op early.
    auto bit = static_cast<uint8_t>(1u << ss);
    if ((s->live_steps & bit) == 0) return;
    s->live_steps = static_cast<uint8_t>(s->live_steps & ~bit);
    release_op(index);
    return;
  }
  if (!s->nccl_ref) return;  // stopped twice
  s->nccl_ref = false;
  if (s->kind == SlotKind::kOp) {
    release_op(index);
  } else {
    release_task(index);
  }
}

EventPool::Usage EventPool::usage() const {
  std::lock_guard<std::mutex> lock(mu_);
  return {static_cast<uint32_t>(chunks_.size()) * kChunkSlots, live_tasks_, retired_count_,
          live_ops_};
}

}  // namespace squeeze::profiler
