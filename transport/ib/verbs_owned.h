// RAII owners for verbs objects, destroyed through the same table that created them.
#pragma once

#include <utility>

#include "transport/ib/verbs_api.h"

namespace squeeze::transport::ib {

inline void verbs_destroy(const VerbsApi& a, ibv_context* p) { a.close_device(p); }
inline void verbs_destroy(const VerbsApi& a, ibv_pd* p) { a.dealloc_pd(p); }
inline void verbs_destroy(const VerbsApi& a, ibv_mr* p) { a.dereg_mr(p); }
inline void verbs_destroy(const VerbsApi& a, ibv_cq* p) { a.destroy_cq(p); }
inline void verbs_destroy(const VerbsApi& a, ibv_qp* p) { a.destroy_qp(p); }

// Owns one verbs object. The table must outlive it (the transport keeps its copy of the table
// in a shared object that every owner's holder keeps alive).
template <typename T>
class Owned {
 public:
  Owned() = default;
  Owned(const VerbsApi* api, T* p) : api_(api), p_(p) {}
  Owned(Owned&& o) noexcept : api_(o.api_), p_(std::exchange(o.p_, nullptr)) {}
  Owned& operator=(Owned&& o) noexcept {
    if (this != &o) {
      reset();
      api_ = o.api_;
      p_ = std::exchange(o.p_, nullptr);
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { reset(); }
  void reset() {
    if (p_ != nullptr) verbs_destroy(*api_, std::exchange(p_, nullptr));
  }
  T* get() const { return p_; }
  T* operator->() const { return p_; }
  explicit operator bool() const { return p_ != nullptr; }

 private:
  const VerbsApi* api_ = nullptr;
  T* p_ = nullptr;
};

}  // namespace squeeze::transport::ib
