//===- Status.h - Errors as values, without LLVM -------------------------===//
//
// The MLIR-free half of attn (reference op functions, runtime, executors)
// reports failures as values. `Status` is ok or an error message; `Result<T>`
// is a value or an error message. Neither throws: `value()` on an error prints
// the error's message to stderr and aborts, so a program that skips the check
// still says what went wrong.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CORE_STATUS_H
#define ATTN_CORE_STATUS_H

#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <variant>

namespace attn {

/// Ok, or an error with a human-readable message.
class [[nodiscard]] Status {
public:
  Status() = default;
  static Status ok() { return Status(); }
  static Status error(std::string message) {
    Status s;
    s.message_ = std::move(message);
    return s;
  }

  bool isOk() const { return !message_.has_value(); }
  explicit operator bool() const { return isOk(); }
  const std::string &message() const {
    assert(message_ && "message() on an ok Status");
    return *message_;
  }

private:
  std::optional<std::string> message_;
};

/// Builds an error Status from streamed parts:
///   return errorf("block_table[", r, "][", i, "] = ", b, " is outside ...");
template <typename... Parts>
Status errorf(const Parts &...parts) {
  std::ostringstream os;
  (os << ... << parts);
  return Status::error(os.str());
}

namespace detail {
/// Where `Result::value()` on an error ends: the message, then abort.
[[noreturn]] inline void valueOfError(const Status &error) {
  std::fprintf(stderr, "attn: value() called on an error: %s\n",
               error.message().c_str());
  std::fflush(stderr);
  std::abort();
}
} // namespace detail

/// A value of type T, or an error. Check `isOk()` (or `operator bool`) before
/// `value()`: `value()`, `*` and `->` on an error print
/// "attn: value() called on an error: <message>" to stderr and abort.
template <typename T>
class [[nodiscard]] Result {
public:
  Result(T value) : v_(std::move(value)) {}
  Result(Status error) : v_(std::move(error)) {
    assert(!std::get<Status>(v_).isOk() && "Result built from an ok Status");
  }

  bool isOk() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return isOk(); }

  T &value() & {
    checkValue();
    return *std::get_if<T>(&v_);
  }
  const T &value() const & {
    checkValue();
    return *std::get_if<T>(&v_);
  }
  T &&value() && {
    checkValue();
    return std::move(*std::get_if<T>(&v_));
  }
  T &operator*() & { return value(); }
  const T &operator*() const & { return value(); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }

  const Status &status() const {
    static const Status okStatus;
    return isOk() ? okStatus : std::get<Status>(v_);
  }
  const std::string &message() const { return std::get<Status>(v_).message(); }

private:
  void checkValue() const {
    if (const Status *error = std::get_if<Status>(&v_))
      detail::valueOfError(*error);
  }

  std::variant<T, Status> v_;
};

} // namespace attn

/// Returns early from the enclosing function when `expr` (a Status) failed.
#define ATTN_RETURN_IF_ERROR(expr)                                             \
  do {                                                                         \
    ::attn::Status attnStatus_ = (expr);                                       \
    if (!attnStatus_.isOk())                                                   \
      return attnStatus_;                                                      \
  } while (false)

#endif // ATTN_CORE_STATUS_H
