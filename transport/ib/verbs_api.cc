#include "transport/ib/verbs_api.h"

#include <dlfcn.h>

#include <cerrno>
#include <cstring>

#include "transport/socket/socket.h"

namespace squeeze::transport::ib {

namespace {

// The library's own entries, resolved by name. The data-path entries are inline in verbs.h.
struct Symbols {
  int (*query_port)(ibv_context*, uint8_t, ibv_port_attr*) = nullptr;
};
Symbols g_sym;

// Exported ibv_query_port fills the older, shorter port attributes (the fields we read are all
// in it); clear the rest first, as the inline wrapper in verbs.h does.
int real_query_port(ibv_context* ctx, uint8_t port, ibv_port_attr* attr) {
  std::memset(attr, 0, sizeof(*attr));
  return g_sym.query_port(ctx, port, attr);
}
int real_post_send(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) {
  return ibv_post_send(qp, wr, bad);
}
int real_post_recv(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  return ibv_post_recv(qp, wr, bad);
}
int real_poll_cq(ibv_cq* cq, int n, ibv_wc* wc) { return ibv_poll_cq(cq, n, wc); }

template <typename F>
bool resolve(void* lib, const char* name, F* out, std::string* missing) {
  void* p = dlsym(lib, name);
  if (p == nullptr) {
    if (missing != nullptr && missing->empty()) *missing = name;
    return false;
  }
  *out = reinterpret_cast<F>(p);
  return true;
}

struct Loaded {
  VerbsApi api;
  std::string why;  // empty when usable
};

Loaded load() {
  Loaded l;
  dlerror();
  void* lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib == nullptr) {
    const char* e = dlerror();
    l.why = std::string("libibverbs.so.1 not found: ") + (e != nullptr ? e : "dlopen failed");
    return l;
  }
  VerbsApi& a = l.api;
  std::string miss;
  resolve(lib, "ibv_get_device_list", &a.get_device_list, &miss);
  resolve(lib, "ibv_free_device_list", &a.free_device_list, &miss);
  resolve(lib, "ibv_open_device", &a.open_device, &miss);
  resolve(lib, "ibv_close_device", &a.close_device, &miss);
  resolve(lib, "ibv_query_device", &a.query_device, &miss);
  if (resolve(lib, "ibv_query_port", &g_sym.query_port, &miss)) a.query_port = real_query_port;
  resolve(lib, "ibv_query_gid", &a.query_gid, &miss);
  resolve(lib, "ibv_alloc_pd", &a.alloc_pd, &miss);
  resolve(lib, "ibv_dealloc_pd", &a.dealloc_pd, &miss);
  resolve(lib, "ibv_reg_mr", &a.reg_mr, &miss);
  resolve(lib, "ibv_reg_dmabuf_mr", &a.reg_dmabuf_mr, nullptr);  // optional
  resolve(lib, "ibv_reg_mr_iova2", &a.reg_mr_iova2, nullptr);    // optional
  resolve(lib, "ibv_dereg_mr", &a.dereg_mr, &miss);
  resolve(lib, "ibv_create_cq", &a.create_cq, &miss);
  resolve(lib, "ibv_destroy_cq", &a.destroy_cq, &miss);
  resolve(lib, "ibv_create_qp", &a.create_qp, &miss);
  resolve(lib, "ibv_modify_qp", &a.modify_qp, &miss);
  resolve(lib, "ibv_destroy_qp", &a.destroy_qp, &miss);
  a.post_send = real_post_send;
  a.post_recv = real_post_recv;
  a.poll_cq = real_poll_cq;
  if (!miss.empty()) l.why = "libibverbs.so.1 lacks " + miss;
  // The library stays loaded for the life of the process: verbs objects may outlive any
  // one transport, and unloading a provider under live contexts is unsafe.
  return l;
}

}  // namespace

std::string VerbsApi::missing() const {
  struct Entry {
    const char* name;
    bool present;
  };
  const Entry entries[] = {
      {"get_device_list", get_device_list != nullptr},
      {"free_device_list", free_device_list != nullptr},
      {"open_device", open_device != nullptr},
      {"close_device", close_device != nullptr},
      {"query_device", query_device != nullptr},
      {"query_port", query_port != nullptr},
      {"query_gid", query_gid != nullptr},
      {"alloc_pd", alloc_pd != nullptr},
      {"dealloc_pd", dealloc_pd != nullptr},
      {"reg_mr", reg_mr != nullptr},
      {"dereg_mr", dereg_mr != nullptr},
      {"create_cq", create_cq != nullptr},
      {"destroy_cq", destroy_cq != nullptr},
      {"create_qp", create_qp != nullptr},
      {"modify_qp", modify_qp != nullptr},
      {"destroy_qp", destroy_qp != nullptr},
      {"post_send", post_send != nullptr},
      {"post_recv", post_recv != nullptr},
      {"poll_cq", poll_cq != nullptr},
  };
  for (const Entry& e : entries)
    if (!e.present) return e.name;
  return "";
}

const VerbsApi* system_verbs(std::string* why) {
  static const Loaded loaded = load();
  if (!loaded.why.empty()) {
    *why = loaded.why;
    return nullptr;
  }
  return &loaded.api;
}

std::string wc_status_name(ibv_wc_status s) {
  switch (s) {
    case IBV_WC_SUCCESS: return "IBV_WC_SUCCESS (success)";
    case IBV_WC_LOC_LEN_ERR: return "IBV_WC_LOC_LEN_ERR (local length error)";
    case IBV_WC_LOC_QP_OP_ERR: return "IBV_WC_LOC_QP_OP_ERR (local QP operation error)";
    case IBV_WC_LOC_PROT_ERR: return "IBV_WC_LOC_PROT_ERR (local protection error)";
    case IBV_WC_WR_FLUSH_ERR:
      return "IBV_WC_WR_FLUSH_ERR (work request flushed: the QP is in error)";
    case IBV_WC_LOC_ACCESS_ERR: return "IBV_WC_LOC_ACCESS_ERR (local access error)";
    case IBV_WC_REM_INV_REQ_ERR: return "IBV_WC_REM_INV_REQ_ERR (remote invalid request)";
    case IBV_WC_REM_ACCESS_ERR: return "IBV_WC_REM_ACCESS_ERR (remote access error)";
    case IBV_WC_REM_OP_ERR: return "IBV_WC_REM_OP_ERR (remote operation error)";
    case IBV_WC_RETRY_EXC_ERR:
      return "IBV_WC_RETRY_EXC_ERR (transport retry counter exceeded: peer unreachable)";
    case IBV_WC_RNR_RETRY_EXC_ERR:
      return "IBV_WC_RNR_RETRY_EXC_ERR (receiver-not-ready retry counter exceeded)";
    case IBV_WC_REM_ABORT_ERR: return "IBV_WC_REM_ABORT_ERR (remote aborted)";
    case IBV_WC_FATAL_ERR: return "IBV_WC_FATAL_ERR (fatal error)";
    case IBV_WC_RESP_TIMEOUT_ERR: return "IBV_WC_RESP_TIMEOUT_ERR (response timeout)";
    case IBV_WC_GENERAL_ERR: return "IBV_WC_GENERAL_ERR (general error)";
    default: return "work completion status " + std::to_string(static_cast<int>(s));
  }
}

std::string verbs_error(int rc) {
  int e = rc > 0 ? rc : errno;
  if (e == 0) return "failed";
  return sock::errno_str(e);
}

}  // namespace squeeze::transport::ib
