// service/reception.cpp — see reception.h.
#include "service/reception.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <optional>

#include "service/render.h"
#include "support/error.h"

namespace archdb::service {

namespace {

// A reply is written, then what the client still sends is read and dropped for a moment before the close, so
// the reply is not lost to a reset.
constexpr auto kCloseLinger = std::chrono::milliseconds(200);
constexpr size_t kCloseDrainMax = 1u << 20;
// Bodies waited for across all connections: past this, a connection goes to a worker once its head is in.
constexpr size_t kBufferBudget = 64u << 20;

constexpr const char* kBareLf = "a line ends without CR LF";
constexpr const char* kBareLfInChunks = "the chunked body's framing: a line ends without CR LF";

bool starts_with_ci(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A Content-Length value the reception may wait for: digits only, within `max`.
std::optional<size_t> plain_length(std::string_view v, size_t max) {
  v = trim(v);
  if (v.empty() || v.size() > 12) return std::nullopt;
  size_t n = 0;
  for (char c : v) {
    if (c < '0' || c > '9') return std::nullopt;
    n = n * 10 + static_cast<size_t>(c - '0');
  }
  if (n > max) return std::nullopt;
  return n;
}

}  // namespace

// A chunked body after a complete head (scan.head): its framing must end every line in CR LF, or what follows
// it on the connection is not known to be the next request (cpp-httplib reads a bare LF as a line end, and the
// stray bytes after it were answered as a second request). The request is complete (`wanted` its end) once the
// whole body is here, incomplete until then; framing with a bare LF is kMalformed. A body whose data passes the
// limit, a line past kHeaderLineMax, trailers past max_head, or a chunk size this scan cannot read is left to the
// worker (complete, `wanted` the head), which refuses it with 413, 431 or 400 as it reads. Each verdict but
// incomplete depends only on bytes already seen, so more bytes never change it.
static void scan_chunked_body(std::string_view bytes, const Limits& limits, RequestScan& scan) {
  const size_t head = scan.head;
  auto to_worker = [&] {
    scan.kind = RequestScan::kComplete;
    scan.wanted = head;
  };
  auto malformed = [&] {
    scan.kind = RequestScan::kMalformed;
    scan.why = kBareLfInChunks;
  };
  // The line at `at`: 1 with `line` set (without its CR LF), 0 not all here yet, -1 a bare LF; a line longer
  // than `max` (with its line end) is 2, whether it has ended or not.
  auto line_at = [&](size_t at, size_t max, std::string_view& line) -> int {
    size_t end = bytes.find('\n', at);
    size_t length = (end == std::string_view::npos ? bytes.size() : end + 1) - at;
    if (length > max) return 2;
    if (end == std::string_view::npos) return 0;
    if (end == at || bytes[end - 1] != '\r') return -1;
    line = bytes.substr(at, end - 1 - at);
    return 1;
  };
  scan.kind = RequestScan::kIncomplete;
  size_t p = head, total = 0;
  for (;;) {
    std::string_view line;
    int got = line_at(p, kHeaderLineMax, line);
    if (got == 2) return to_worker();
    if (got < 0) return malformed();
    if (got == 0) return;
    p += line.size() + 2;
    std::string_view digits = line.substr(0, line.find(';'));
    while (!digits.empty() && (digits.back() == ' ' || digits.back() == '\t')) digits.remove_suffix(1);
    if (digits.empty() || digits.size() > 15 || digits.find_first_not_of("0123456789abcdefABCDEF") != std::string_view::npos)
      return to_worker();
    size_t size = std::stoull(std::string(digits), nullptr, 16);
    if (size == 0) break;
    total += size;
    if (total > limits.max_body) return to_worker();
    if (bytes.size() < p + size + 2) return;
    if (bytes[p + size] != '\r' || bytes[p + size + 1] != '\n') return malformed();
    p += size + 2;
  }
  const size_t trailers = p;
  for (;;) {  // trailer fields, then the empty line
    std::string_view line;
    int got = line_at(p, limits.max_head + 2 - std::min(limits.max_head + 2, p - trailers), line);
    if (got == 2) return to_worker();
    if (got < 0) return malformed();
    if (got == 0) return;
    p += line.size() + 2;
    if (line.empty()) break;
  }
  scan.kind = RequestScan::kComplete;
  scan.wanted = p;
}

RequestScan scan_request(std::string_view bytes, const Limits& limits) {
  RequestScan scan;
  size_t line_end = bytes.find('\n');
  if (line_end == std::string_view::npos) {
    if (bytes.size() > kRequestLineMax) scan.kind = RequestScan::kUriTooLong;
    return scan;
  }
  if (line_end == 0 || bytes[line_end - 1] != '\r') {
    scan.kind = RequestScan::kMalformed;
    scan.why = kBareLf;
    return scan;
  }
  if (line_end + 1 > kRequestLineMax) {
    scan.kind = RequestScan::kUriTooLong;
    return scan;
  }
  const size_t headers_start = line_end + 1;
  size_t pos = headers_start;
  size_t body = 0;
  bool waits_for_continue = false, has_length = false;
  int hosts = 0, origins = 0;
  int chunked = 0;  // Transfer-Encoding headers that say exactly "chunked" (any other is the worker's 501)
  for (;;) {
    size_t end = bytes.find('\n', pos);
    size_t line_size = (end == std::string_view::npos ? bytes.size() : end + 1) - pos;
    size_t section = (end == std::string_view::npos ? bytes.size() : end + 1) - headers_start;
    if (line_size > kHeaderLineMax || section > limits.max_head + 2) {
      scan.kind = RequestScan::kHeadTooLarge;
      return scan;
    }
    if (end == std::string_view::npos) return scan;  // incomplete
    if (end == pos || bytes[end - 1] != '\r') {
      scan.kind = RequestScan::kMalformed;
      scan.why = kBareLf;
      return scan;
    }
    std::string_view line = bytes.substr(pos, end - 1 - pos);
    pos = end + 1;
    if (line.empty()) break;
    if (starts_with_ci(line, "content-length:")) {
      has_length = true;
      if (auto n = plain_length(line.substr(15), limits.max_body)) body = *n;
    } else if (starts_with_ci(line, "transfer-encoding:")) {
      std::string_view coding = trim(line.substr(18));
      chunked += coding.size() == 7 && starts_with_ci(coding, "chunked") ? 1 : 2;
    } else if (starts_with_ci(line, "host:") || starts_with_ci(line, "origin:")) {
      // Whom a request is for, and from: said twice or empty, which one counts is ambiguous.
      bool host = starts_with_ci(line, "host:");
      if ((host ? hosts : origins)++) {
        scan.kind = RequestScan::kMalformed;
        scan.why = host ? "Host given more than once" : "Origin given more than once";
        return scan;
      }
      if (trim(line.substr(host ? 5 : 7)).empty()) {
        scan.kind = RequestScan::kMalformed;
        scan.why = host ? "an empty Host header" : "an empty Origin header";
        return scan;
      }
    } else if (starts_with_ci(line, "expect:")) {
      waits_for_continue = true;  // the body comes after "100 Continue", which the worker sends
    }
  }
  scan.kind = RequestScan::kComplete;
  scan.head = pos;
  scan.wanted = pos + (waits_for_continue ? 0 : body);
  if (chunked == 1 && !has_length && !waits_for_continue) {
    scan.chunked = true;
    scan_chunked_body(bytes, limits, scan);
  }
  return scan;
}

std::string malformed_message(const RequestScan& scan) {
  return std::string("malformed HTTP request (") + (*scan.why ? scan.why : kBareLf) + ")";
}

std::string request_timeout_message(const Limits& limits) {
  return "the request did not arrive within " + std::to_string(limits.request_timeout_s) + " s (or paused longer than " +
         std::to_string(limits.read_timeout_s) + " s)";
}

std::string head_too_large_message(const Limits& limits) {
  return "request header fields too large: the limits are " + std::to_string(kHeaderLineMax) + " bytes a line and " +
         std::to_string(limits.max_head) + " bytes in all";
}

std::string error_response(int status, const std::string& message) {
  std::string body = error_body(status, message);
  return "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason_phrase(status)) +
         "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n" + body;
}

struct Reception::Held {
  Connection c;
  ConnClock::time_point since;      // admitted: an idle connection's timeout counts from here
  ConnClock::time_point last_byte;  // a request may pause at most read_timeout_s
  bool peer_closed = false;         // the client half-closed (or is gone)
  bool closing = false;             // answered: dropping what still arrives until close_at
  ConnClock::time_point close_at{};
  size_t dropped = 0;
};

Reception::Reception(const Limits& limits, Dispatch dispatch) : limits_(limits), dispatch_(std::move(dispatch)) {
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) throw internal_error(std::string("eventfd: ") + std::strerror(errno));
  thread_ = std::thread([this] { run(); });
}

Reception::~Reception() {
  drain();
  ::close(wake_fd_);
}

void Reception::admit(Connection connection) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!finished_) {
      incoming_.push_back(std::move(connection));
      connection.sock = -1;
    }
  }
  if (connection.sock >= 0) {
    ::close(connection.sock);
    return;
  }
  uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

void Reception::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  draining_ = true;
  uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
  drained_cv_.wait(lock, [this] { return finished_; });
  lock.unlock();
  if (thread_.joinable()) thread_.join();
}

void Reception::reply_and_close(Held& h, int status, const std::string& message) {
  std::string reply = error_response(status, message);
  // Small, into an idle socket: one non-blocking send (a client that does not read loses the reply).
  (void)::send(h.c.sock, reply.data(), reply.size(), MSG_DONTWAIT | MSG_NOSIGNAL);
  ::shutdown(h.c.sock, SHUT_WR);
  h.c.buffered.clear();
  h.closing = true;
  h.close_at = ConnClock::now() + kCloseLinger;
}

// Dispatches complete requests, answers what is refused or late, closes what is idle too long (at once when
// draining). Removes every connection it is done with.
void Reception::evaluate(std::vector<Held>& held, bool draining) {
  const auto now = ConnClock::now();
  const auto read_timeout = std::chrono::seconds(limits_.read_timeout_s);
  const auto request_timeout = std::chrono::seconds(limits_.request_timeout_s);
  size_t buffered = 0;
  for (const Held& h : held) buffered += h.c.buffered.size();
  for (size_t i = 0; i < held.size();) {
    Held& h = held[i];
    bool done = false;
    if (h.closing) {
      done = h.peer_closed || now >= h.close_at || h.dropped > kCloseDrainMax;
    } else if (!h.c.buffered.empty()) {
      RequestScan scan = scan_request(h.c.buffered, limits_);
      switch (scan.kind) {
        case RequestScan::kComplete:
          if (h.c.buffered.size() >= scan.wanted || h.peer_closed || buffered > kBufferBudget) {
            buffered -= std::min(buffered, h.c.buffered.size());
            dispatch_(std::move(h.c));
            h.c.sock = -1;
            done = true;
          }
          break;
        case RequestScan::kMalformed:
          reply_and_close(h, 400, malformed_message(scan));
          break;
        case RequestScan::kUriTooLong:
          reply_and_close(h, 414, "request URI too long (the limit is 8192 bytes)");
          break;
        case RequestScan::kHeadTooLarge:
          reply_and_close(h, 431, head_too_large_message(limits_));
          break;
        case RequestScan::kIncomplete:
          // A chunked body still arriving goes to a worker, as a Content-Length one does, once the bodies
          // waited for pass the budget.
          if (scan.chunked && buffered > kBufferBudget) {
            buffered -= std::min(buffered, h.c.buffered.size());
            dispatch_(std::move(h.c));
            h.c.sock = -1;
            done = true;
          }
          break;
      }
      if (!done && !h.closing) {
        if (h.peer_closed) done = true;  // gone with half a request: nobody to answer
        else if (now >= std::min(h.c.started + request_timeout, h.last_byte + read_timeout))
          reply_and_close(h, 408, request_timeout_message(limits_));
      }
    } else {
      auto idle = h.c.served == 0 ? read_timeout : std::chrono::seconds(limits_.keep_alive_s);
      done = draining || h.peer_closed || now >= h.since + idle;
    }
    if (done) {
      if (h.c.sock >= 0) ::close(h.c.sock);
      if (i + 1 != held.size()) held[i] = std::move(held.back());
      held.pop_back();
    } else {
      ++i;
    }
  }
}

void Reception::run() {
  std::vector<Held> held;
  std::vector<pollfd> fds;
  char buf[64 * 1024];
  const size_t hold_max = kRequestLineMax + limits_.max_head + limits_.max_body + (64u << 10);
  for (;;) {
    bool draining;
    std::vector<Connection> arrived;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      arrived.swap(incoming_);
      draining = draining_;
    }
    auto now = ConnClock::now();
    for (Connection& c : arrived) {
      Held h;
      if (c.buffered.empty() || c.started == ConnClock::time_point{}) c.started = now;
      h.c = std::move(c);
      h.since = h.last_byte = now;
      held.push_back(std::move(h));
      if (held.size() > limits_.max_connections)
        reply_and_close(held.back(), 503, "too many connections (the limit is " + std::to_string(limits_.max_connections) + ")");
    }
    evaluate(held, draining);
    if (draining && held.empty()) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (incoming_.empty()) {
        finished_ = true;  // from here on, admit() closes what it is given
        drained_cv_.notify_all();
        return;
      }
      continue;
    }

    // Sleep until a socket is readable, a connection is admitted, or the next deadline.
    now = ConnClock::now();
    auto next = now + std::chrono::seconds(1);
    const auto read_timeout = std::chrono::seconds(limits_.read_timeout_s);
    fds.assign(1, pollfd{wake_fd_, POLLIN, 0});
    for (const Held& h : held) {
      if (h.closing) next = std::min(next, h.close_at);
      else if (h.c.buffered.empty())
        next = std::min(next, h.since + (h.c.served == 0 ? read_timeout : std::chrono::seconds(limits_.keep_alive_s)));
      else
        next = std::min({next, h.c.started + std::chrono::seconds(limits_.request_timeout_s), h.last_byte + read_timeout});
      fds.push_back(pollfd{h.c.sock, static_cast<short>(h.peer_closed ? 0 : POLLIN), 0});
    }
    auto wait_ms = std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count() + 1;
    int rc = ::poll(fds.data(), fds.size(), static_cast<int>(std::clamp<long long>(wait_ms, 0, 1000)));
    if (rc < 0 && errno != EINTR) {
      std::fprintf(stderr, "archdb serve: poll: %s\n", std::strerror(errno));
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (rc <= 0) continue;
    if (fds[0].revents) {
      uint64_t n;
      (void)!::read(wake_fd_, &n, sizeof n);
    }
    now = ConnClock::now();
    for (size_t i = 1; i < fds.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Held& h = held[i - 1];
      // A few reads at most per wake-up: one fast client cannot starve the others.
      for (int round = 0; round < 4; ++round) {
        if (!h.closing && h.c.buffered.size() >= hold_max) break;
        ssize_t n = ::recv(h.c.sock, buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0) {
          if (h.closing) {
            h.dropped += static_cast<size_t>(n);
          } else {
            if (h.c.buffered.empty()) h.c.started = now;
            h.c.buffered.append(buf, static_cast<size_t>(n));
            h.last_byte = now;
          }
          if (static_cast<size_t>(n) < sizeof buf) break;
          continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        h.peer_closed = true;  // end of stream, or an error: nothing more will arrive
        break;
      }
    }
  }
}

}  // namespace archdb::service
