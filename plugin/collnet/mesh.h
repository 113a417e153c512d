// The collective network's full mesh between its nodes: for every other node,
// one connection per hop in each direction. Contributions and results travel on
// separate connections so that each carries its messages in call order,
// whatever order the owners finish their pieces in. Every connection starts
// with a hello (the sender's node, the hop, the node count); accepted
// connections are placed by it, and a hello that does not fit the mesh is an
// error.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "transport/transport.h"

namespace squeeze::collnet {

inline constexpr int kHops = 2;  // 0: contributions (reduce-scatter), 1: results (all-gather)
inline constexpr int32_t kHelloTag = -2;  // never a call's tag (those are >= 0)

struct PeerLinks {
  std::array<std::unique_ptr<transport::SendComm>, kHops> send;
  std::array<std::unique_ptr<transport::RecvComm>, kHops> recv;
};

class MeshConnector {
 public:
  // handles[i] is node i's listen handle (kHandleBytes); the own one is not
  // used. `listener` is this node's (it outlives the connector).
  MeshConnector(transport::Transport& t, int dev, transport::Listener& listener,
                void* const* handles, int nodes, int node);
  // Never blocks. *done once every connection is up and every hello went both
  // ways.
  transport::Status progress(bool* done);
  // The connections not up yet, for the error when the mesh does not complete
  // in time.
  std::string missing() const;
  // Once done: the links, indexed by node (the own entry is empty).
  std::vector<PeerLinks> take() { return std::move(links_); }

 private:
  struct Hello {
    uint32_t magic = 0, node = 0, hop = 0, nodes = 0;
  };
  static constexpr std::size_t kHelloBytes = 16;
  struct Out {
    int peer = 0, hop = 0;
    std::array<uint8_t, transport::kHandleBytes> handle{};  // the transport may write into it
    std::unique_ptr<transport::SendComm> comm;
    std::array<uint8_t, kHelloBytes> hello{};
    int slot = -1;
    bool sent = false;
  };
  struct In {
    std::unique_ptr<transport::RecvComm> comm;
    std::array<uint8_t, kHelloBytes> hello{};
    int slot = -1;
    bool placed = false;
  };
  transport::Status progress_out(Out& o);
  transport::Status progress_in(In& in);

  transport::Transport& t_;
  int dev_;
  transport::Listener& listener_;
  int nodes_, node_;
  std::vector<Out> outs_;
  std::vector<std::unique_ptr<In>> ins_;  // stable addresses: receives are posted into them
  std::vector<PeerLinks> links_;
  int placed_ = 0;
};

}  // namespace squeeze::collnet
