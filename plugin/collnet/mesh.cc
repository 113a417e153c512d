#include "plugin/collnet/mesh.h"

#include <cstring>

namespace squeeze::collnet {

namespace {

constexpr uint32_t kHelloMagic = 0x4e435153u;  // "SQCN"

void put32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}
uint32_t get32(const uint8_t* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

const char* hop_name(int hop) { return hop == 0 ? "contributions" : "results"; }

}  // namespace

MeshConnector::MeshConnector(transport::Transport& t, int dev, transport::Listener& listener,
                             void* const* handles, int nodes, int node)
    : t_(t), dev_(dev), listener_(listener), nodes_(nodes), node_(node) {
  links_.resize(static_cast<std::size_t>(nodes));
  for (int p = 0; p < nodes; ++p) {
    if (p == node) continue;
    for (int hop = 0; hop < kHops; ++hop) {
      Out o;
      o.peer = p;
      o.hop = hop;
      std::memcpy(o.handle.data(), handles[p], o.handle.size());
      put32(o.hello.data(), kHelloMagic);
      put32(o.hello.data() + 4, static_cast<uint32_t>(node));
      put32(o.hello.data() + 8, static_cast<uint32_t>(hop));
      put32(o.hello.data() + 12, static_cast<uint32_t>(nodes));
      outs_.push_back(std::move(o));
    }
  }
}

transport::Status MeshConnector::progress_out(Out& o) {
  if (o.sent) return transport::Status::Ok();
  if (!o.comm) {
    std::unique_ptr<transport::SendComm> c;
    if (transport::Status s = t_.connect(dev_, o.handle.data(), &c); !s.ok())
      return transport::Status(s.code(), "collective network: connecting to node " +
                                             std::to_string(o.peer) + " (" + hop_name(o.hop) +
                                             "): " + s.message());
    if (!c) return transport::Status::Ok();
    o.comm = std::move(c);
  }
  if (o.slot < 0) {
    transport::SendItem item;
    item.header.tag = kHelloTag;
    item.header.payload_bytes = item.header.original_bytes = kHelloBytes;
    item.data = o.hello.data();
    if (transport::Status s = o.comm->post(item, &o.slot); !s.ok()) return s;
    if (o.slot < 0) return transport::Status::Ok();
  }
  bool done = false;
  if (transport::Status s = o.comm->test(o.slot, &done); !s.ok())
    return transport::Status(s.code(), "collective network: hello to node " +
                                           std::to_string(o.peer) + ": " + s.message());
  if (!done) return transport::Status::Ok();
  o.comm->release(o.slot);
  o.sent = true;
  links_[static_cast<std::size_t>(o.peer)].send[static_cast<std::size_t>(o.hop)] =
      std::move(o.comm);
  return transport::Status::Ok();
}

transport::Status MeshConnector::progress_in(In& in) {
  if (in.placed) return transport::Status::Ok();
  if (in.slot < 0) {
    transport::RecvItem item{kHelloTag, in.hello.data(), kHelloBytes, nullptr};
    if (transport::Status s = in.comm->post({&item, 1}, &in.slot); !s.ok()) return s;
    if (in.slot < 0) return transport::Status::Ok();
  }
  transport::Received got;
  bool done = false;
  if (transport::Status s = in.comm->test(in.slot, &done, {&got, 1}); !s.ok())
    return transport::Status(s.code(), "collective network: waiting for a hello: " + s.message());
  if (!done) return transport::Status::Ok();
  in.comm->release(in.slot);
  const uint8_t* h = in.hello.data();
  const uint32_t magic = get32(h), node = get32(h + 4), hop = get32(h + 8), nodes = get32(h + 12);
  std::string bad;
  if (got.header.kind != transport::PayloadKind::kRaw || got.header.original_bytes != kHelloBytes ||
      magic != kHelloMagic)
    bad = "not a Squeeze collective network hello";
  else if (nodes != static_cast<uint32_t>(nodes_))
    bad = "the peer's mesh has " + std::to_string(nodes) + " nodes, this one " +
          std::to_string(nodes_);
  else if (node >= static_cast<uint32_t>(nodes_) || node == static_cast<uint32_t>(node_) ||
           hop >= kHops)
    bad = "node " + std::to_string(node) + " hop " + std::to_string(hop) +
          " does not fit a mesh of " + std::to_string(nodes_) + " nodes seen from node " +
          std::to_string(node_);
  else if (links_[node].recv[hop])
    bad =
        "node " + std::to_string(node) + " connected twice for " + hop_name(static_cast<int>(hop));
  if (!bad.empty()) return transport::Status::Remote("collective network: bad hello: " + bad);
  links_[node].recv[hop] = std::move(in.comm);
  in.placed = true;
  ++placed_;
  return transport::Status::Ok();
}

transport::Status MeshConnector::progress(bool* done) {
  *done = false;
  const int expected = (nodes_ - 1) * kHops;
  while (static_cast<int>(ins_.size()) < expected) {
    std::unique_ptr<transport::RecvComm> c;
    if (transport::Status s = listener_.accept(&c); !s.ok())
      return transport::Status(s.code(), "collective network: accepting a node: " + s.message());
    if (!c) break;
    auto in = std::make_unique<In>();
    in->comm = std::move(c);
    ins_.push_back(std::move(in));
  }
  bool all_sent = true;
  for (Out& o : outs_) {
    if (transport::Status s = progress_out(o); !s.ok()) return s;
    all_sent = all_sent && o.sent;
  }
  for (auto& in : ins_)
    if (transport::Status s = progress_in(*in); !s.ok()) return s;
  *done = all_sent && placed_ == expected;
  return transport::Status::Ok();
}

std::string MeshConnector::missing() const {
  std::string out;
  auto add = [&out](const std::string& s) { out += (out.empty() ? "" : ", ") + s; };
  for (const Out& o : outs_)
    if (!o.sent)
      add(std::string("to node ") + std::to_string(o.peer) + " (" + hop_name(o.hop) + ")");
  for (int p = 0; p < nodes_; ++p) {
    if (p == node_) continue;
    for (int hop = 0; hop < kHops; ++hop)
      if (!links_[static_cast<std::size_t>(p)].recv[static_cast<std::size_t>(hop)])
        add(std::string("from node ") + std::to_string(p) + " (" + hop_name(hop) + ")");
  }
  return out;
}

}  // namespace squeeze::collnet
