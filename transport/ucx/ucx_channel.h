// What each UCX comm owns on top of the shared session (ucx_session.h): on the sending side
// an endpoint to the peer's worker, RAII for the requests it posts, and the TCP socket the
// comm was set up over, kept open as a liveness check. Progress happens only when a comm's
// owner calls progress(): no threads of our own.
//
// Dead peers: the endpoint asks for UCP_ERR_HANDLING_MODE_PEER with an error callback, so
// UCX fails its requests instead of hanging; where UCX cannot give that (UCX 1.13's shared
// memory transports cannot), the endpoint falls back to no error handling. Either way the
// set-up socket reaches EOF the moment the peer process dies (and TCP keepalive catches a
// vanished host), which also covers the receiving side, whose tag receives belong to the
// worker rather than to an endpoint.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "transport/socket/socket.h"
#include "transport/status.h"
#include "transport/ucx/ucx_session.h"

namespace squeeze::transport::ucx {

// One posted ucp operation: either finished at once or a request whose completion callback
// fills a small record, polled by the comm's owner, then the request is freed. Dropping an
// unfinished receive cancels it first.
//
// Callbacks rather than ucp_request_check_status: the callback may run on any thread that
// progresses the shared worker, and the record hands its result over through an atomic; and
// receives learn their length only there (UCX 1.13 fills neither recv_info on immediate
// completion nor the info of ucp_tag_recv_request_test). If the Pending lets go of an
// unfinished request, the callback frees the record when UCX finally completes it.
class Pending {
 public:
  Pending() = default;
  Pending(const Pending&) = delete;
  Pending& operator=(const Pending&) = delete;
  ~Pending() { reset(); }

  // Sends [buffer, buffer + length) with `tag` on `ep`.
  void start_send(const Session* s, ucp_ep_h ep, const void* buffer, std::size_t length,
                  uint64_t tag);
  // Posts a receive of exactly `tag` into [buffer, buffer + length).
  void start_recv(const Session* s, void* buffer, std::size_t length, uint64_t tag);
  // UCS_INPROGRESS, UCS_OK or the error. For receives, *length gets the received bytes.
  ucs_status_t poll(std::size_t* length = nullptr);
  bool active() const { return active_; }
  void reset();

 private:
  enum : int { kWaiting, kDone, kOrphaned };
  struct Record {
    std::atomic<int> state{kWaiting};
    ucs_status_t status = UCS_INPROGRESS;
    std::size_t length = 0;
  };
  static void finish(Record* rec, ucs_status_t status, std::size_t length);
  static void on_send(void* request, ucs_status_t status, void* user_data);
  static void on_recv(void* request, ucs_status_t status, const ucp_tag_recv_info_t* info,
                      void* user_data);
  void take(ucs_status_ptr_t result, std::unique_ptr<Record> rec);
  const Session* session_ = nullptr;
  void* req_ = nullptr;
  Record* record_ = nullptr;
  bool is_recv_ = false;
  bool active_ = false;
  ucs_status_t status_ = UCS_OK;
  std::size_t length_ = 0;
};

class Channel {
 public:
  Channel(std::shared_ptr<Session> session, sock::Fd socket, std::string peer, uint32_t comm_id);
  ~Channel();
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;

  // Creates the endpoint to the peer's worker (sending side).
  Status connect(const std::vector<uint8_t>& peer_address);
  // Progresses the shared worker until it has nothing more to do (bounded).
  unsigned progress();
  // False once the peer is known to be gone: UCX failed the endpoint, or the set-up socket
  // reached EOF or an error (looked at no more often than every kLivenessPeriod).
  bool peer_alive();
  std::string failure_text() const;
  // Close without flushing (the comm is being torn down with operations outstanding).
  void set_force_close() { force_close_ = true; }
  void note_sent() { sent_ = true; }
  // The peer stalled mid-transfer: the worker must not be destroyed (ucx_session.h).
  void keep_worker_until_exit() { session_->keep_worker_until_exit(); }

  const Session& session() const { return *session_; }
  const Api& api() const { return session_->api(); }
  ucp_ep_h ep() const { return ep_; }
  const std::string& peer() const { return peer_; }
  // The receive comm's id, carried in every tag of its messages.
  uint32_t comm_id() const { return comm_id_; }

 private:
  static void on_error(void* arg, ucp_ep_h ep, ucs_status_t status);
  Status create_ep(const std::vector<uint8_t>& peer_address, ucp_err_handling_mode_t mode);
  // Progresses until `req` (a ucp request or status pointer) completes or `seconds` pass.
  bool wait(ucs_status_ptr_t req, double seconds);

  std::shared_ptr<Session> session_;
  sock::Fd socket_;
  std::string peer_;
  uint32_t comm_id_;
  ucp_ep_h ep_ = nullptr;
  std::unique_ptr<EpState> ep_state_ = std::make_unique<EpState>();
  std::chrono::steady_clock::time_point next_check_{};
  std::string socket_failure_;
  bool force_close_ = false;
  bool sent_ = false;
};

}  // namespace squeeze::transport::ucx
