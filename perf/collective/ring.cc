#include "perf/collective/ring.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>
#include <string>

#include "perf/collective/data.h"
#include "perf/collective/pipe.h"

namespace squeeze::perf {
namespace {

int mod(long a, int n) { return static_cast<int>(((a % n) + n) % n); }

}  // namespace

RingSchedule::RingSchedule(std::size_t count, int nranks, compress::Dtype d, const RingParams& p,
                           RedOp op)
    : count_(count), n_(nranks), dtype_(d), op_(op), elem_(compress::dtype_size(d)) {
  slice_elems_ = p.step_bytes * static_cast<std::size_t>(p.slice_steps) / elem_;
  const std::size_t chunk_elems = p.step_bytes * static_cast<std::size_t>(p.chunk_steps) / elem_;
  const std::size_t align = std::max<std::size_t>(1, 16 / elem_);  // alignUp(.., 16/sizeof(T))
  const auto nslices =
      static_cast<uint32_t>(std::max(1, p.chunk_steps / p.slice_steps));  // SlicePerChunk
  if (n_ < 2 || count == 0) return;
  const std::size_t loop = chunk_elems * static_cast<std::size_t>(n_);
  for (std::size_t off = 0; off < count; off += loop) {
    const std::size_t len = std::min(loop, count - off);
    std::size_t chunk = chunk_elems;
    if (len < loop)
      chunk =
          ((len + static_cast<std::size_t>(n_) - 1) / static_cast<std::size_t>(n_) + align - 1) /
          align * align;
    for (uint32_t step = 0; step < static_cast<uint32_t>(2 * (n_ - 1)); ++step)
      for (uint32_t t = 0; t < nslices; ++t) xfers_.push_back({off, len, chunk, step, t, nslices});
  }
}

std::pair<std::size_t, std::size_t> RingSchedule::range(const Xfer& x, int seg) const {
  const std::size_t end = x.loop_off + x.loop_len;
  const std::size_t seg_b = std::min(end, x.loop_off + static_cast<std::size_t>(seg) * x.chunk);
  const std::size_t nelem = std::min(end, seg_b + x.chunk) - seg_b;
  // prims_simple.h genericOp: every step is SlicePerChunk messages (empty ones included) of
  // max(divUp(nelem, 16*SlicePerChunk)*16, sliceSize/32) elements, the last one clipped.
  const std::size_t per =
      std::max((nelem + 16 * x.nslices - 1) / (16 * x.nslices) * 16, slice_elems_ / 32);
  const std::size_t b = std::min(nelem, static_cast<std::size_t>(x.slice) * per);
  return {seg_b + b, seg_b + std::min(nelem, b + per)};
}

void RingSchedule::reference(const std::vector<const uint8_t*>& inputs, uint8_t* out) const {
  if (n_ < 2) {
    if (count_ != 0) std::memcpy(out, inputs[0], count_ * elem_);
    return;
  }
  for (const Xfer& x : xfers_) {
    if (x.step != 0 || x.slice != 0) continue;  // once per loop
    for (int j = 0; j < n_; ++j) {
      const std::size_t b =
          std::min(x.loop_off + x.loop_len, x.loop_off + static_cast<std::size_t>(j) * x.chunk);
      const std::size_t e = std::min(x.loop_off + x.loop_len, b + x.chunk);
      if (e == b) continue;
      uint8_t* o = out + b * elem_;
      std::memcpy(o, inputs[static_cast<std::size_t>(mod(j + 1, n_))] + b * elem_, (e - b) * elem_);
      for (int k = 2; k <= n_; ++k)
        reduce(o, o, inputs[static_cast<std::size_t>(mod(j + k, n_))] + b * elem_, e - b, dtype_,
               op_);
    }
  }
}

void ring_allreduce(Communicator& comm, const RingSchedule& s, const RingParams& p,
                    const uint8_t* in, uint8_t* out, const char* nccl_dtype) {
  const int n = comm.nranks(), r = comm.rank();
  const std::size_t es = compress::dtype_size(s.dtype());
  if (n < 2) {
    if (s.count() != 0) std::memcpy(out, in, s.count() * es);
    return;
  }
  const int next = mod(r + 1, n), prev = mod(r - 1, n);
  const auto& xs = s.xfers();
  const std::size_t total = xs.size();
  const int nslots = kSteps / p.slice_steps;
  const auto last_step = static_cast<uint32_t>(2 * n - 3);

  // What NCCL's launch and proxy report to the profiler: the API call, the collective (stopped
  // right after the proxy is kicked, before the proxy thread starts the ops), one ProxyOp per
  // connection, and a ProxyStep per message (in the pipes).
  ProfChain& ch = comm.chain();
  void* api = ch.coll_api("AllReduce", s.count(), nccl_dtype);
  void* coll = ch.coll(api, comm.next_seq(kOpAllReduce), "AllReduce", in, out, s.count(),
                       nccl_dtype, "RING", "SIMPLE");
  ch.stop(api);
  ch.stop(coll);
  const int chunk = static_cast<int>(s.slice_bytes());
  void* op_send = ch.proxy_op(coll, next, static_cast<int>(total), chunk, true);
  void* op_recv = ch.proxy_op(coll, prev, static_cast<int>(total), chunk, false);
  struct OpStop {
    ProfChain& ch;
    void *a, *b;
    ~OpStop() {
      ch.stop(a);
      ch.stop(b);
    }
  } op_stop{ch, op_send, op_recv};

  const XferAttrs attrs{kOpAllReduce, kAlgoRing, kProtoSimple, 1};
  SendPipe sp(comm, comm.send_conn(next), s.slice_bytes(), nslots, op_send, attrs);
  RecvPipe rp(comm, comm.recv_conn(prev), s.slice_bytes(), nslots, total, op_recv, attrs);

  std::vector<std::size_t> finals;  // receives of the last step: copied out, not forwarded
  for (std::size_t k = 0; k < total; ++k)
    if (xs[k].step == last_step) finals.push_back(k);
  auto expect = [&](std::size_t k, std::size_t bytes) {
    if (rp.size(k) != bytes)
      throw std::runtime_error("rank " + std::to_string(r) + ": all-reduce message " +
                               std::to_string(k) + " from rank " + std::to_string(prev) + " has " +
                               std::to_string(rp.size(k)) + " bytes, expected " +
                               std::to_string(bytes));
  };

  std::size_t k_send = 0, fi = 0;
  auto last_move = std::chrono::steady_clock::now();
  while (sp.completed() < total || fi < finals.size()) {
    bool moved = rp.progress();
    while (fi < finals.size() && rp.ready(finals[fi])) {  // recv: the final sums of a segment
      const std::size_t j = finals[fi++];
      auto [b, e] = s.range(xs[j], mod(r - 2 - static_cast<long>(xs[j].step), n));
      expect(j, (e - b) * es);
      if (e > b) std::memcpy(out + b * es, rp.data(j), (e - b) * es);
      rp.release(j);
      moved = true;
    }
    while (k_send < total && sp.can_fill()) {
      const auto& x = xs[k_send];
      auto [b, e] = s.range(x, mod(r - 1 - static_cast<long>(x.step), n));
      const std::size_t bytes = (e - b) * es;
      uint8_t* dst = sp.fill_slot();
      if (x.step == 0) {  // send
        if (bytes) std::memcpy(dst, in + b * es, bytes);
      } else {
        const std::size_t j = k_send - x.nslices;  // the same slice one step earlier
        if (!rp.ready(j)) break;
        expect(j, bytes);
        if (x.step + 1 < static_cast<uint32_t>(n)) {  // recvReduceSend
          reduce(dst, rp.data(j), in + b * es, e - b, s.dtype(), s.op());
        } else if (x.step + 1 == static_cast<uint32_t>(n)) {  // recvReduceCopySend
          reduce(out + b * es, rp.data(j), in + b * es, e - b, s.dtype(), s.op());
          if (bytes) std::memcpy(dst, out + b * es, bytes);
        } else if (bytes) {  // recvCopySend
          std::memcpy(out + b * es, rp.data(j), bytes);
          std::memcpy(dst, rp.data(j), bytes);
        }
        rp.release(j);
      }
      sp.push(bytes);
      ++k_send;
      moved = true;
    }
    moved |= sp.progress();
    const auto now = std::chrono::steady_clock::now();
    if (moved) {
      last_move = now;
    } else {
      if (now - last_move > std::chrono::duration<double>(comm.timeout_s()))
        throw std::runtime_error(
            "rank " + std::to_string(r) + ": all-reduce made no progress for " +
            std::to_string(static_cast<int>(comm.timeout_s())) + " s (sent " +
            std::to_string(sp.completed()) + "/" + std::to_string(total) + ", received " +
            std::to_string(rp.received()) + "/" + std::to_string(total) + ")");
      sched_yield();
    }
  }
}

}  // namespace squeeze::perf
