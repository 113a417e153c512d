#include "perf/collective/alltoall.h"

#include <sched.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "perf/collective/pipe.h"

namespace squeeze::perf {

std::size_t alltoall_fifo_bytes(const AlltoAllParams& p, std::size_t block) {
  if (!p.gpu_copies) return static_cast<std::size_t>(kSteps) * p.chunk_bytes;
  return std::max<std::size_t>(1, (block + p.chunk_bytes - 1) / p.chunk_bytes) * p.chunk_bytes;
}

void alltoall_stage(Communicator& comm, const uint8_t* in, std::size_t block) {
  const int n = comm.nranks(), r = comm.rank();
  if (block == 0) return;
  for (int i = 1; i < n; ++i) {
    const int q = (r + i) % n;
    std::memcpy(comm.send_conn(q).simple, in + static_cast<std::size_t>(q) * block, block);
  }
}

void alltoall_collect(Communicator& comm, const uint8_t* in, uint8_t* out, std::size_t block) {
  const int n = comm.nranks(), r = comm.rank();
  if (block == 0) return;
  for (int i = 1; i < n; ++i) {
    const int q = (r + n - i) % n;
    uint8_t* fifo = comm.recv_conn(q).simple;
    std::memcpy(out + static_cast<std::size_t>(q) * block, fifo, block);
    std::memset(fifo, 0, block);
  }
  const auto ur = static_cast<std::size_t>(r);
  std::memcpy(out + ur * block, in + ur * block, block);
}

void alltoall(Communicator& comm, const AlltoAllParams& p, const uint8_t* in, uint8_t* out,
              std::size_t count, compress::Dtype d, const char* nccl_dtype) {
  const int n = comm.nranks(), r = comm.rank();
  const std::size_t block = count * compress::dtype_size(d);
  const auto ur = static_cast<std::size_t>(r);
  // The rank's own block: NCCL copies it on the GPU while the proxy moves the network
  // blocks, so here it is copied piecewise whenever the network loop has nothing to do, and
  // whatever is left once the network blocks are done.
  std::size_t self_done = p.gpu_copies ? block : 0;  // gpu_copies: alltoall_collect copies it
  auto copy_self = [&](std::size_t limit) {
    const std::size_t len = std::min(limit, block - self_done);
    if (len != 0) std::memcpy(out + ur * block + self_done, in + ur * block + self_done, len);
    self_done += len;
    return len != 0;
  };
  if (n < 2 || block == 0) {
    copy_self(block);
    return;
  }
  const std::size_t nmsg = (block + p.chunk_bytes - 1) / p.chunk_bytes;
  const std::size_t addr_slots = p.gpu_copies ? nmsg : 0;  // 0: the FIFO's kSteps slots

  ProfChain& ch = comm.chain();
  void* api = ch.coll_api("AlltoAll", count, nccl_dtype);
  struct Peer {
    int rank = -1;
    void* send_task = nullptr;
    void* recv_task = nullptr;
    void* send_op = nullptr;
    void* recv_op = nullptr;
    std::unique_ptr<SendPipe> sp;
    std::unique_ptr<RecvPipe> rp;
    std::size_t filled = 0, consumed = 0;
  };
  std::vector<Peer> peers;
  for (int i = 1; i < n; ++i) {  // NCCL's p2p schedule order: send to r+i, receive from r-i
    const int q = (r + i) % n;
    const auto uq = static_cast<std::size_t>(q);
    Peer pe;
    pe.rank = q;
    pe.send_task = ch.p2p(api, "Send", const_cast<uint8_t*>(in + uq * block), count, nccl_dtype, q);
    pe.recv_task = ch.p2p(api, "Recv", out + uq * block, count, nccl_dtype, q);
    peers.push_back(std::move(pe));
  }
  ch.stop(api);
  for (Peer& pe : peers) {  // tasks stop before the proxy thread starts their ops
    ch.stop(pe.send_task);
    ch.stop(pe.recv_task);
  }
  struct OpStop {
    ProfChain& ch;
    std::vector<Peer>& peers;
    ~OpStop() {
      for (Peer& pe : peers) {
        pe.sp.reset();
        pe.rp.reset();
        ch.stop(pe.send_op);
        ch.stop(pe.recv_op);
      }
    }
  } op_stop{ch, peers};
  const XferAttrs attrs{kOpAlltoAll, kAttrUndef, kAttrUndef, n - 1};
  const int chunk = static_cast<int>(p.chunk_bytes);
  for (Peer& pe : peers) {
    pe.send_op = ch.proxy_op(pe.send_task, pe.rank, static_cast<int>(nmsg), chunk, true);
    pe.recv_op = ch.proxy_op(pe.recv_task, pe.rank, static_cast<int>(nmsg), chunk, false);
    pe.sp = std::make_unique<SendPipe>(comm, comm.send_conn(pe.rank), p.chunk_bytes, kSteps,
                                       pe.send_op, attrs, addr_slots);
    pe.rp = std::make_unique<RecvPipe>(comm, comm.recv_conn(pe.rank), p.chunk_bytes, kSteps, nmsg,
                                       pe.recv_op, attrs, addr_slots);
  }

  auto last_move = std::chrono::steady_clock::now();
  for (;;) {
    bool moved = false, busy = false;
    for (Peer& pe : peers) {
      const std::size_t off = static_cast<std::size_t>(pe.rank) * block;
      while (pe.filled < nmsg && pe.sp->can_fill()) {
        const std::size_t b = pe.filled * p.chunk_bytes, len = std::min(p.chunk_bytes, block - b);
        if (!p.gpu_copies) std::memcpy(pe.sp->fill_slot(), in + off + b, len);
        pe.sp->push(len);
        ++pe.filled;
        moved = true;
      }
      moved |= pe.sp->progress();
      moved |= pe.rp->progress();
      while (pe.consumed < nmsg && pe.rp->ready(pe.consumed)) {
        const std::size_t b = pe.consumed * p.chunk_bytes, len = std::min(p.chunk_bytes, block - b);
        if (pe.rp->size(pe.consumed) != len)
          throw std::runtime_error(
              "rank " + std::to_string(r) + ": all-to-all message " + std::to_string(pe.consumed) +
              " from rank " + std::to_string(pe.rank) + " has " +
              std::to_string(pe.rp->size(pe.consumed)) + " bytes, expected " + std::to_string(len));
        if (!p.gpu_copies) std::memcpy(out + off + b, pe.rp->data(pe.consumed), len);
        pe.rp->release(pe.consumed++);
        moved = true;
      }
      busy |= pe.consumed < nmsg || pe.sp->completed() < nmsg;
    }
    if (!busy) break;
    const auto now = std::chrono::steady_clock::now();
    if (moved) {
      last_move = now;
    } else if (copy_self(p.chunk_bytes)) {
      last_move = now;
    } else {
      if (now - last_move > std::chrono::duration<double>(comm.timeout_s()))
        throw std::runtime_error("rank " + std::to_string(r) +
                                 ": all-to-all made no progress for " +
                                 std::to_string(static_cast<int>(comm.timeout_s())) + " s");
      sched_yield();  // idle, as NCCL's proxy thread yields when no op progressed
    }
  }
  copy_self(block);
}

}  // namespace squeeze::perf
