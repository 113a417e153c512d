// A bounded, thread-safe pool of profiler events with generation-checked handles.
//
// NCCL hands our event handles back to us as parents of later events, sometimes after the
// parent was stopped (Coll/P2p events are stopped right after the proxy is kicked, before the
// proxy thread starts their ProxyOps), sometimes from another process (PXN), sometimes NULL.
// So a handle is not a pointer: it encodes a slot index, the slot's generation and a
// per-process salt. Decoding checks all three, so a stale, foreign or corrupt handle is
// recognised and yields "unknown" instead of a crash.
//
// Lifetimes:
// - task events (Coll, P2p, CollApi, P2pApi) hold one reference for NCCL (dropped at stop)
//   and one per live ProxyOp child. At zero they are retired, not freed: the newest
//   kRetainedTasks retired tasks stay readable for children that start late.
// - op events (ProxyOp) hold one reference for NCCL and one per live ProxyStep. Each op
//   copies its parent's metadata at start, so answering a NetPlugin query reads only the op.
// - step events (ProxyStep) are not stored: a step handle is its op's handle plus the step's
//   slot (step % 8), so steps cost no memory.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "plugin/profiler/chain_meta.h"

namespace squeeze::profiler {

enum class TaskKind : uint8_t { kColl = 1, kP2p, kCollApi, kP2pApi };

class EventPool {
 public:
  static constexpr uint32_t kChunkSlots = 1024;
  static constexpr uint32_t kDefaultMaxSlots = 64 * 1024;
  static constexpr uint32_t kDefaultRetainedTasks = 4096;
  static constexpr int kStepSlots = 8;  // NCCL_STEPS: NCCL keeps one step handle per slot

  explicit EventPool(uint32_t max_slots = kDefaultMaxSlots,
                     uint32_t retained_tasks = kDefaultRetainedTasks);
  ~EventPool();
  EventPool(const EventPool&) = delete;
  EventPool& operator=(const EventPool&) = delete;

  // All return nullptr when the pool is full (counted in dropped()).
  void* create_task(TaskKind kind, const ChainMeta& meta);
  // parent may be anything NCCL passed; it is used only if it decodes to a live or retained
  // Coll/P2p task of this process.
  void* create_op(void* parent, const OpInfo& info);
  void* start_step(void* op, int step);

  // Reads a task (live or retained). False for anything else.
  bool read_task(void* handle, TaskKind* kind, ChainMeta* meta) const;
  struct StepView {
    ChainMeta meta;  // the op's copy of its parent's metadata (empty when it had none)
    OpInfo op;
    int32_t step = -1;
  };
  // Reads the op behind a step handle. False when the handle is not a valid step handle.
  bool read_step(void* step_handle, StepView* out) const;

  // Stops any handle this pool issued; anything else (NULL, stale, foreign) is ignored.
  void stop(void* handle);

  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  struct Usage {
    uint32_t allocated_slots, live_tasks, retained_tasks, live_ops;
  };
  Usage usage() const;

 private:
  struct Slot;
  enum class SlotKind : uint8_t { kFree = 0, kTask, kOp };

  uint64_t encode(uint32_t index, uint32_t gen, bool step, int step_slot) const;
  // Decodes and validates under mu_; returns the slot or nullptr.
  Slot* decode(void* handle, uint32_t* index, bool* step, int* step_slot) const;
  Slot* slot_at(uint32_t index) const;
  bool alloc(uint32_t* index);        // mu_ held
  void free_slot(uint32_t index);     // mu_ held
  void release_task(uint32_t index);  // mu_ held: drop one reference
  void release_op(uint32_t index);    // mu_ held: drop one reference

  const uint32_t max_slots_;
  const uint32_t retained_cap_;
  uint64_t salt_;
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Slot[]>> chunks_;
  std::vector<uint32_t> free_;
  std::vector<uint32_t> retired_;  // ring buffer of retained task slots, oldest at retired_head_
  uint32_t retired_head_ = 0;
  uint32_t retired_count_ = 0;
  uint32_t live_tasks_ = 0;
  uint32_t live_ops_ = 0;
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace squeeze::profiler
