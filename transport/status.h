// Error type shared by the transports. Messages say what failed and where (peer, fd, op).
#pragma once

#include <string>
#include <utility>

namespace squeeze::transport {

class Status {
 public:
  enum class Code { kOk = 0, kSystem, kRemote, kInternal, kInvalidUsage };
  Status() = default;
  Status(Code c, std::string m) : code_(c), msg_(std::move(m)) {}
  static Status Ok() { return {}; }
  static Status System(std::string m) { return {Code::kSystem, std::move(m)}; }
  static Status Remote(std::string m) { return {Code::kRemote, std::move(m)}; }
  static Status Internal(std::string m) { return {Code::kInternal, std::move(m)}; }
  static Status Usage(std::string m) { return {Code::kInvalidUsage, std::move(m)}; }
  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return msg_; }

 private:
  Code code_ = Code::kOk;
  std::string msg_;
};

}  // namespace squeeze::transport
