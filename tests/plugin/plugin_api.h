// Test harness: dlopens the built plugin and presents any exported net version (v8..v12)
// through one v12-shaped interface, so every test runs against every version. This is how
// NCCL's proxy sees us; nothing here calls the engine directly.
#pragma once

#include <dlfcn.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "plugin/nccl/net_abi.h"

namespace squeeze::testing {

struct NetProps {
  std::string name;
  bool has_pci = false;
  uint64_t guid = 0;
  int ptr_support = 0, speed = 0, max_comms = 0, max_recvs = 0;
  int vdevs = -1;                         // -1 where the version has no vProps
  std::size_t max_p2p = 0, max_coll = 0;  // 0 where the version has none
  int rail_id = -2, plane_id = -2;        // -2 where the version has none (v8..v11)
};

class PluginApi {
 public:
  // version: 8, 9, 10, 11 or 12. Loads the plugin tests/plugin_path.h finds.
  explicit PluginApi(int version);
  ~PluginApi();
  PluginApi(const PluginApi&) = delete;
  PluginApi& operator=(const PluginApi&) = delete;

  int version() const { return version_; }
  const char* name() const;
  int init();
  int finalize();
  int devices(int* n);
  int props(int dev, NetProps* out);
  int listen(int dev, void* handle, void** l);
  int connect(int dev, void* handle, void** s);
  int accept(void* l, void** r);
  int reg_mr(void* comm, void* data, std::size_t size, void** mh, int type = 1);  // NCCL_PTR_*
  int dereg_mr(void* comm, void* mh);
  int isend(void* s, void* data, std::size_t size, int tag, void* mh, void** req);
  int irecv(void* r, int n, void** data, std::size_t* sizes, int* tags, void** mhs, void** req);
  int test(void* req, int* done, int* sizes);
  int close_send(void* s);
  int close_recv(void* r);
  int close_listen(void* l);
  int set_net_attr(uint32_t op, uint32_t algo, uint32_t proto);  // v11, v12; else no-op

 private:
  int version_;
  void* lib_ = nullptr;
  void* ctx_ = nullptr;
  nccl_net_v8* v8_ = nullptr;
  nccl_net_v9* v9_ = nullptr;
  nccl_net_v10* v10_ = nullptr;
  nccl_net_v11* v11_ = nullptr;
  nccl_net_v12* v12_ = nullptr;
};

// Connects a send comm and accepts the matching receive comm in one process, polling both
// sides as NCCL's proxy would. Returns 0 on success.
int connect_pair(PluginApi& api, int dev, void** send_comm, void** recv_comm, void** listen_comm);

// Polls test() until done or until timeout_s passes. Returns the plugin's result, or -1 on
// timeout.
int wait_request(PluginApi& api, void* req, int* sizes, double timeout_s);

// The device to use in tests: the one named "lo" (tests set SQUEEZE_SOCKET_IFNAME=lo).
int loopback_device(PluginApi& api);

}  // namespace squeeze::testing
