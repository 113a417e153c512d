#include "transport/ucx/ucx_channel.h"

#include <sys/socket.h>

#include <cerrno>

namespace squeeze::transport::ucx {

namespace {
// Bounds on the waits when a comm goes away: the flush is local work, or the peer answering,
// and the forced close is local, so both take microseconds unless the peer is gone or stuck,
// when the bound keeps closeSend/closeRecv from hanging.
constexpr double kFlushSeconds = 1.0;
constexpr double kCloseSeconds = 1.0;
constexpr int kMaxProgressRounds = 64;
// How often peer_alive() looks at the set-up socket (one recv(MSG_PEEK) system call).
constexpr std::chrono::milliseconds kLivenessPeriod{10};
}  // namespace

void Pending::finish(Record* rec, ucs_status_t status, std::size_t length) {
  rec->status = status;
  rec->length = length;
  if (rec->state.exchange(kDone, std::memory_order_acq_rel) == kOrphaned) delete rec;
}

void Pending::on_send(void*, ucs_status_t status, void* user_data) {
  finish(static_cast<Record*>(user_data), status, 0);
}

void Pending::on_recv(void*, ucs_status_t status, const ucp_tag_recv_info_t* info,
                      void* user_data) {
  finish(static_cast<Record*>(user_data), status,
         status == UCS_OK && info != nullptr ? info->length : 0);
}

void Pending::take(ucs_status_ptr_t result, std::unique_ptr<Record> rec) {
  active_ = true;
  if (UCS_PTR_IS_PTR(result)) {  // the callback owns nothing yet: the record stays ours
    req_ = result;
    record_ = rec.release();
    status_ = UCS_INPROGRESS;
  } else {  // finished (or failed) at once: no callback comes
    status_ = UCS_PTR_STATUS(result);
  }
}

void Pending::start_send(const Session* s, ucp_ep_h ep, const void* buffer, std::size_t length,
                         uint64_t tag) {
  reset();
  session_ = s;
  is_recv_ = false;
  auto rec = std::make_unique<Record>();
  ucp_request_param_t p{};
  p.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_MEMORY_TYPE;
  p.cb.send = &Pending::on_send;
  p.user_data = rec.get();
  p.memory_type = UCS_MEMORY_TYPE_HOST;  // ptr_support is host only: skip UCX's detection
  take(s->api().tag_send_nbx(ep, buffer, length, tag, &p), std::move(rec));
}

void Pending::start_recv(const Session* s, void* buffer, std::size_t length, uint64_t tag) {
  reset();
  session_ = s;
  is_recv_ = true;
  auto rec = std::make_unique<Record>();
  ucp_request_param_t p{};
  p.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_MEMORY_TYPE |
      UCP_OP_ATTR_FLAG_NO_IMM_CMPL;  // always a request, so the callback reports the length
  p.cb.recv = &Pending::on_recv;
  p.user_data = rec.get();
  p.memory_type = UCS_MEMORY_TYPE_HOST;
  ucs_status_ptr_t r = s->api().tag_recv_nbx(s->worker(), buffer, length, tag, ~uint64_t{0}, &p);
  take(r == nullptr ? UCS_STATUS_PTR(UCS_ERR_NO_MESSAGE) : r,
       std::move(rec));  // NULL: not with NO_IMM_CMPL
}

ucs_status_t Pending::poll(std::size_t* length) {
  if (req_ != nullptr && record_->state.load(std::memory_order_acquire) == kDone) {
    status_ = record_->status;
    length_ = record_->length;
    session_->api().request_free(req_);
    req_ = nullptr;
    delete record_;
    record_ = nullptr;
  }
  if (length != nullptr) *length = length_;
  return status_;
}

void Pending::reset() {
  if (req_ != nullptr && session_->usable()) {
    // A receive still waiting for its message comes off the worker at once; anything else
    // (a send, a receive whose data is landing) finishes later, and its callback then frees
    // the record.
    if (is_recv_ && record_->state.load(std::memory_order_acquire) == kWaiting)
      session_->api().request_cancel(session_->worker(), req_);
    if (record_->state.exchange(kOrphaned, std::memory_order_acq_rel) == kDone) delete record_;
    session_->api().request_free(req_);
  }
  req_ = nullptr;
  record_ = nullptr;  // in a forked child: the parent's, left alone
  active_ = false;
  status_ = UCS_OK;
  length_ = 0;
}

Channel::Channel(std::shared_ptr<Session> session, sock::Fd socket, std::string peer,
                 uint32_t comm_id)
    : session_(std::move(session)),
      socket_(std::move(socket)),
      peer_(std::move(peer)),
      comm_id_(comm_id) {}

Status Channel::create_ep(const std::vector<uint8_t>& peer_address, ucp_err_handling_mode_t mode) {
  ucp_ep_params_t ep{};
  ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
  ep.address = reinterpret_cast<const ucp_address_t*>(peer_address.data());
  ep.err_mode = mode;
  if (mode == UCP_ERR_HANDLING_MODE_PEER) {
    ep.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
    ep.err_handler.cb = &Channel::on_error;
    ep.err_handler.arg = ep_state_.get();
  }
  ucs_status_t st = api().ep_create(session_->worker(), &ep, &ep_);
  if (st == UCS_OK) return Status::Ok();
  ep_ = nullptr;
  return Status::Remote("ucp_ep_create to " + peer_ + ": " + session_->lib().status_str(st));
}

Status Channel::connect(const std::vector<uint8_t>& peer_address) {
  const Library& lib = session_->lib();
  if (lib.peer_errors_unsupported()) return create_ep(peer_address, UCP_ERR_HANDLING_MODE_NONE);
  Status peer = create_ep(peer_address, UCP_ERR_HANDLING_MODE_PEER);
  if (peer.ok()) return peer;
  // Either no selected transport can report peer failures, or the peer is gone. Only when the
  // peer answers without error handling is it the former, and later endpoints skip the try.
  if (Status none = create_ep(peer_address, UCP_ERR_HANDLING_MODE_NONE); !none.ok()) return peer;
  lib.note_peer_errors_unsupported();
  return Status::Ok();
}

void Channel::on_error(void* arg, ucp_ep_h, ucs_status_t status) {
  auto* state = static_cast<EpState*>(arg);
  ucs_status_t ok = UCS_OK;
  state->failure.compare_exchange_strong(ok, status);
}

bool Channel::peer_alive() {
  if (ep_state_->failure.load() != UCS_OK || !socket_failure_.empty()) return false;
  if (!socket_.valid()) return true;
  auto now = std::chrono::steady_clock::now();
  if (now < next_check_) return true;
  next_check_ = now + kLivenessPeriod;
  uint8_t b;
  ssize_t n = ::recv(socket_.get(), &b, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0)
    socket_failure_ = "closed its set-up socket (the process exited or was killed)";
  else if (n > 0)
    socket_failure_ = "sent unexpected bytes on its set-up socket";
  else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
    socket_failure_ = "set-up socket failed: " + sock::errno_str(errno);
  return socket_failure_.empty();
}

std::string Channel::failure_text() const {
  ucs_status_t f = ep_state_->failure.load();
  if (f != UCS_OK)
    return "UCX reports the connection with " + peer_ + " failed (" +
           session_->lib().status_str(f) + ")";
  return "the peer " + peer_ + " " + socket_failure_;
}

unsigned Channel::progress() {
  unsigned total = 0;
  for (int i = 0; i < kMaxProgressRounds; ++i) {
    unsigned n = api().worker_progress(session_->worker());
    if (n == 0) break;
    total += n;
  }
  return total;
}

bool Channel::wait(ucs_status_ptr_t req, double seconds) {
  if (!UCS_PTR_IS_PTR(req)) return true;  // finished at once, or failed at once
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  bool done = api().request_check_status(req) != UCS_INPROGRESS;
  while (!done && std::chrono::steady_clock::now() < deadline) {
    api().worker_progress(session_->worker());
    done = api().request_check_status(req) != UCS_INPROGRESS;
  }
  api().request_free(req);
  return done;
}

Channel::~Channel() {
  if (ep_ == nullptr || !session_->usable()) return;
  // What a send reported done may still sit in UCX's queues (eager data): flush it to the
  // transport first, unless the peer is gone. Then close without a handshake: the peer may
  // be busy or closing too, and learns of the close from its set-up socket.
  ucp_request_param_t param{};
  if (sent_ && !force_close_ && ep_state_->failure.load() == UCS_OK && socket_failure_.empty())
    wait(api().ep_flush_nbx(ep_, &param), kFlushSeconds);
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = UCP_EP_CLOSE_FLAG_FORCE;
  wait(api().ep_close_nbx(ep_, &param), kCloseSeconds);
  session_->retire(std::move(ep_state_));  // UCX may still call on_error until the worker goes
}

}  // namespace squeeze::transport::ucx
