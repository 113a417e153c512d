// The verbs calls the ib transport makes, as a table of function pointers, so that the
// plugin never links libibverbs: the real table is filled at run time from
// dlopen("libibverbs.so.1"), and tests fill one from an in-memory fake provider.
//
// ibv_post_send, ibv_post_recv and ibv_poll_cq are static inline in verbs.h (they dispatch
// through the context's ops); the real table's entries are small functions that call them.
#pragma once

#include <infiniband/verbs.h>

#include <string>

namespace squeeze::transport::ib {

struct VerbsApi {
  ibv_device** (*get_device_list)(int* num) = nullptr;
  void (*free_device_list)(ibv_device** list) = nullptr;
  ibv_context* (*open_device)(ibv_device* dev) = nullptr;
  int (*close_device)(ibv_context* ctx) = nullptr;
  int (*query_device)(ibv_context* ctx, ibv_device_attr* attr) = nullptr;
  int (*query_port)(ibv_context* ctx, uint8_t port, ibv_port_attr* attr) = nullptr;
  int (*query_gid)(ibv_context* ctx, uint8_t port, int index, ibv_gid* gid) = nullptr;
  ibv_pd* (*alloc_pd)(ibv_context* ctx) = nullptr;
  int (*dealloc_pd)(ibv_pd* pd) = nullptr;
  ibv_mr* (*reg_mr)(ibv_pd* pd, void* addr, std::size_t length, int access) = nullptr;
  // Optional (rdma-core >= 34): null when the library lacks it.
  ibv_mr* (*reg_dmabuf_mr)(ibv_pd* pd, uint64_t offset, std::size_t length, uint64_t iova, int fd,
                           int access) = nullptr;
  // Optional (IBVERBS_1.8, rdma-core >= 29): the registration that takes optional access
  // flags such as IBV_ACCESS_RELAXED_ORDERING; null when the library lacks it.
  ibv_mr* (*reg_mr_iova2)(ibv_pd* pd, void* addr, std::size_t length, uint64_t iova,
                          unsigned int access) = nullptr;
  int (*dereg_mr)(ibv_mr* mr) = nullptr;
  ibv_cq* (*create_cq)(ibv_context* ctx, int cqe, void* cq_context, ibv_comp_channel* channel,
                       int comp_vector) = nullptr;
  int (*destroy_cq)(ibv_cq* cq) = nullptr;
  ibv_qp* (*create_qp)(ibv_pd* pd, ibv_qp_init_attr* attr) = nullptr;
  int (*modify_qp)(ibv_qp* qp, ibv_qp_attr* attr, int mask) = nullptr;
  int (*destroy_qp)(ibv_qp* qp) = nullptr;
  int (*post_send)(ibv_qp* qp, ibv_send_wr* wr, ibv_send_wr** bad) = nullptr;
  int (*post_recv)(ibv_qp* qp, ibv_recv_wr* wr, ibv_recv_wr** bad) = nullptr;
  int (*poll_cq)(ibv_cq* cq, int n, ibv_wc* wc) = nullptr;

  // Names the first required entry that is null, or "" when the table is usable.
  std::string missing() const;
};

// The process-wide table over libibverbs.so.1 (loaded once, never unloaded), or null with
// *why saying what is missing ("libibverbs.so.1 not found: ...").
const VerbsApi* system_verbs(std::string* why);

// "IBV_WC_REM_ACCESS_ERR (remote access error)" for logs; needs no library.
std::string wc_status_name(ibv_wc_status s);

// A verbs call's failure as text: verbs calls return an errno value, or -1 with errno set.
std::string verbs_error(int rc);

}  // namespace squeeze::transport::ib
