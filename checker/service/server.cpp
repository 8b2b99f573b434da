// checker/service/server.cpp — the HTTP side of `archdb serve` (see server.h).
//
// cpp-httplib parses requests and writes responses; the connection around them is ours
// (process_and_close_socket), for three things the library does not do: a deadline for a whole request (a
// client trickling one byte every few seconds is cut off, with 408 if it had started a request), closing
// idle kept-alive connections as soon as other connections wait for a worker or the server drains, and a
// byte budget per request. Worker threads serve one connection at a time.
//
// That loop is written against cpp-httplib 0.11 (Debian bookworm, what archdb builds with). A newer
// cpp-httplib (Debian sid's, in the roots tools/provision-flavor builds the probe in, which never serve)
// changed those internals: there the library's own connection handling is used, with the same timeouts.
#include "checker/service/server.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <httplib.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include "checker/service/render.h"
#include "support/error.h"

// cpp-httplib 0.11 has no CPPHTTPLIB_VERSION_NUM; the versions that define it changed the internals used here.
#if !defined(CPPHTTPLIB_VERSION_NUM)
#define ARCHDB_OWN_CONNECTIONS 1
#else
#define ARCHDB_OWN_CONNECTIONS 0
#endif

namespace archdb::service {

namespace {

using Clock = std::chrono::steady_clock;

// Connection workers. Like httplib's ThreadPool, but it says how many connections wait for a worker, so a
// busy server can close idle kept-alive connections in their favour.
class WorkerPool : public httplib::TaskQueue {
 public:
  explicit WorkerPool(unsigned n) {
    for (unsigned i = 0; i < n; ++i) threads_.emplace_back([this] { run(); });
  }
#if ARCHDB_OWN_CONNECTIONS
  void enqueue(std::function<void()> fn) override { push(std::move(fn)); }
#else
  bool enqueue(std::function<void()> fn) override {
    push(std::move(fn));
    return true;
  }
#endif
  // Serves every connection already accepted, then joins.
  void shutdown() override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }
  size_t waiting() const { return waiting_.load(std::memory_order_relaxed); }

 private:
  void push(std::function<void()> fn) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.push_back(std::move(fn));
      waiting_ = jobs_.size();
    }
    cv_.notify_one();
  }
  void run() {
    for (;;) {
      std::function<void()> fn;
      {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
        if (jobs_.empty()) return;
        fn = std::move(jobs_.front());
        jobs_.pop_front();
        waiting_ = jobs_.size();
      }
      fn();
    }
  }

  std::vector<std::thread> threads_;
  std::deque<std::function<void()>> jobs_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool stopping_ = false;
  std::atomic<size_t> waiting_{0};
};

#if ARCHDB_OWN_CONNECTIONS
// A socket as httplib's Stream, buffered, with the deadlines of the request being read.
class ConnStream : public httplib::Stream {
 public:
  ConnStream(int sock, const Limits& limits, size_t byte_budget)
      : sock_(sock), limits_(limits), byte_budget_(byte_budget) {}

  void begin_request() {
    auto now = Clock::now();
    read_deadline_ = now + std::chrono::seconds(limits_.request_timeout_s);
    // Writing a response gets its own allowance after the request is in (a large matrix to a slow reader).
    write_deadline_ = read_deadline_ + std::chrono::seconds(limits_.request_timeout_s + 6 * limits_.write_timeout_s);
    timed_out_ = over_budget_ = false;
    received_ = 0;
    wrote_ = false;
  }
  bool buffered() const { return pos_ < len_; }
  bool timed_out() const { return timed_out_; }
  bool over_budget() const { return over_budget_; }
  size_t received() const { return received_; }
  bool wrote() const { return wrote_; }

  bool is_readable() const override { return buffered() || wait(POLLIN, limits_.read_timeout_s, read_deadline_); }
  bool is_writable() const override { return wait(POLLOUT, limits_.write_timeout_s, write_deadline_); }

  ssize_t read(char* ptr, size_t size) override {
    if (!buffered()) {
      if (received_ >= byte_budget_) {
        over_budget_ = true;
        return -1;
      }
      if (!wait(POLLIN, limits_.read_timeout_s, read_deadline_)) return -1;
      ssize_t n;
      do {
        n = ::recv(sock_, buf_, sizeof buf_, 0);
      } while (n < 0 && errno == EINTR);
      if (n <= 0) return n;
      pos_ = 0;
      len_ = static_cast<size_t>(n);
    }
    size_t n = std::min(size, len_ - pos_);
    std::memcpy(ptr, buf_ + pos_, n);
    pos_ += n;
    received_ += n;
    return static_cast<ssize_t>(n);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!wait(POLLOUT, limits_.write_timeout_s, write_deadline_)) return -1;
    ssize_t n;
    do {
      n = ::send(sock_, ptr, size, MSG_NOSIGNAL);
    } while (n < 0 && errno == EINTR);
    if (n > 0) wrote_ = true;
    return n;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override { address(::getpeername, ip, port); }
  void get_local_ip_and_port(std::string& ip, int& port) const override { address(::getsockname, ip, port); }
  socket_t socket() const override { return sock_; }

 private:
  // Waits for `events` for at most `idle_s` seconds and never past `deadline`; false (a timeout) otherwise.
  bool wait(short events, int idle_s, Clock::time_point deadline) const {
    for (;;) {
      auto now = Clock::now();
      if (now >= deadline) {
        timed_out_ = true;
        return false;
      }
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1;
      int ms = static_cast<int>(std::min<long long>(left, idle_s * 1000LL));
      pollfd p{sock_, events, 0};
      int rc = ::poll(&p, 1, ms);
      if (rc < 0 && errno == EINTR) continue;
      if (rc < 0) return false;
      if (rc == 0) {
        timed_out_ = true;
        return false;
      }
      return true;  // ready, or an error/hang-up the next recv or send reports
    }
  }

  template <typename F>
  void address(F get, std::string& ip, int& port) const {
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    ip.clear();
    port = -1;
    if (get(sock_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return;
    char text[INET6_ADDRSTRLEN] = {0};
    if (addr.ss_family == AF_INET) {
      auto* a = reinterpret_cast<sockaddr_in*>(&addr);
      ::inet_ntop(AF_INET, &a->sin_addr, text, sizeof text);
      port = ntohs(a->sin_port);
    } else if (addr.ss_family == AF_INET6) {
      auto* a = reinterpret_cast<sockaddr_in6*>(&addr);
      ::inet_ntop(AF_INET6, &a->sin6_addr, text, sizeof text);
      port = ntohs(a->sin6_port);
    }
    ip = text;
  }

  int sock_;
  const Limits& limits_;
  size_t byte_budget_;
  char buf_[16384];
  size_t pos_ = 0, len_ = 0;
  size_t received_ = 0;
  bool wrote_ = false;
  Clock::time_point read_deadline_{}, write_deadline_{};
  mutable bool timed_out_ = false;
  bool over_budget_ = false;
};

// What the error handler needs to know about the request it answers (same thread as the connection).
thread_local ConnStream* tl_stream = nullptr;
#endif
// Set by a handler or the error handler: this response ends its connection.
thread_local bool tl_close = false;

std::string generic_message(int status, const httplib::Request& req, const Limits& limits) {
  switch (status) {
    case 400: return "malformed HTTP request";
    case 404: return "not found";
    case 408: return "the request did not arrive within " + std::to_string(limits.request_timeout_s) +
                     " s (or paused longer than " + std::to_string(limits.read_timeout_s) + " s)";
    case 413: {
      std::string m = "request body too large: the limit is " + std::to_string(limits.max_body) + " bytes";
      if (req.get_header_value("Content-Type") == "application/x-www-form-urlencoded")
        m += " (form-encoded bodies: 8192 bytes; send JSON with Content-Type: application/json)";
      return m;
    }
    case 414: return "request URI too long (the limit is 8192 bytes)";
    case 416: return "invalid Range header";
    default: return std::string(reason_phrase(status));
  }
}

class HttpServer : public httplib::Server {
 public:
  HttpServer(const Api& api, const Limits& limits) : api_(api), limits_(limits) {}

  void drain() {
    draining_ = true;
    stop();
  }
  bool draining() const { return draining_; }
  WorkerPool* pool = nullptr;

 private:
#if ARCHDB_OWN_CONNECTIONS
  // Overrides httplib's loop over the requests of one connection (see the top of this file).
  bool process_and_close_socket(socket_t sock) override {
    // Headers and body leave in two writes: without TCP_NODELAY the body would wait for the client's
    // delayed ACK of the headers.
    int one = 1;
    ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    ConnStream strm(sock, limits_, limits_.max_body + (1u << 20));
    tl_stream = &strm;
    bool ret = true;
    for (size_t served = 0;; ++served) {
      if (!strm.buffered() && !wait_for_request(sock, served == 0)) break;
      strm.begin_request();
      bool last = draining_ || served + 1 >= limits_.keep_alive_max || (pool && pool->waiting() > 0);
      bool closed = false;
      tl_close = false;
      ret = process_request(strm, last, closed, nullptr);
      if (!ret) {
        if ((strm.timed_out() || strm.over_budget()) && strm.received() > 0 && !strm.wrote()) reply_raw(strm);
        break;
      }
      if (last || closed || tl_close) break;
    }
    tl_stream = nullptr;
    close_gracefully(sock);
    return ret;
  }

  // Waits for the first byte of the next request: a new connection gets the read timeout; a kept-alive one
  // the keep-alive timeout, cut short when the server drains or other connections wait for a worker.
  bool wait_for_request(int sock, bool first) {
    auto limit = std::chrono::seconds(first ? limits_.read_timeout_s : limits_.keep_alive_s);
    auto start = Clock::now();
    for (;;) {
      if (draining_ && !first) return false;
      pollfd p{sock, POLLIN, 0};
      int rc = ::poll(&p, 1, 50);
      if (rc > 0) return true;
      if (rc < 0 && errno != EINTR) return false;
      if (!first && pool && pool->waiting() > 0) return false;
      if (Clock::now() - start >= limit) return false;
    }
  }

  // A request that timed out (or overran its budget) before httplib could answer it.
  void reply_raw(ConnStream& strm) {
    int status = strm.over_budget() ? 413 : 408;
    std::string body = error_body(status, strm.over_budget() ? "request too large" : generic_message(408, {}, limits_));
    std::string head = "HTTP/1.1 " + std::to_string(status) + " " + std::string(reason_phrase(status)) +
                       "\r\nContent-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) +
                       "\r\nConnection: close\r\n\r\n";
    std::string all = head + body;
    size_t off = 0;
    while (off < all.size()) {
      ssize_t n = strm.write(all.data() + off, all.size() - off);
      if (n <= 0) break;
      off += static_cast<size_t>(n);
    }
  }

  // Half-closes, then reads what the client still sends for a moment, so a response is not lost to a
  // reset when the client's request had bytes we did not read.
  static void close_gracefully(int sock) {
    ::shutdown(sock, SHUT_WR);
    auto until = Clock::now() + std::chrono::milliseconds(200);
    char sink[4096];
    size_t drained = 0;
    while (Clock::now() < until && drained < (1u << 20)) {
      pollfd p{sock, POLLIN, 0};
      if (::poll(&p, 1, 20) <= 0) continue;
      ssize_t n = ::recv(sock, sink, sizeof sink, 0);
      if (n <= 0) break;
      drained += static_cast<size_t>(n);
    }
    ::close(sock);
  }
#endif

  const Api& api_;
  const Limits& limits_;
  std::atomic<bool> draining_{false};
};

Request to_request(const httplib::Request& req) {
  Request r;
  r.method = req.method;
  r.path = req.path;
  size_t q = req.target.find('?');
  if (q != std::string::npos) r.query = req.target.substr(q + 1);
  r.content_type = req.get_header_value("Content-Type");
  r.body = req.body;
  r.if_none_match = req.get_header_value("If-None-Match");
  return r;
}

}  // namespace

int serve(std::unique_ptr<Store> store, std::shared_ptr<const Schema> schema, const ServeOptions& options) {
  // Signals go to one thread (below), which drains; every other thread has them blocked.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);

  const Limits limits = options.limits;
  const Store& store_ref = *store;
  SnapshotSource source(std::move(store), schema);
  Api api(source, schema, store_ref, limits, options.web_dir);

  HttpServer server(api, limits);
  unsigned threads = limits.threads ? limits.threads : 16 * affinity_cpus();
  server.new_task_queue = [&server, threads] {
    auto* pool = new WorkerPool(threads);
    server.pool = pool;
    return pool;
  };
  server.set_payload_max_length(limits.max_body);
  server.set_read_timeout(limits.read_timeout_s);
  server.set_write_timeout(limits.write_timeout_s);
  server.set_keep_alive_timeout(limits.keep_alive_s);
  server.set_keep_alive_max_count(limits.keep_alive_max);
  int listen_fd = -1;
  server.set_socket_options([&listen_fd](socket_t sock) {
    int one = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);  // not SO_REUSEPORT: one server per port
    listen_fd = sock;
  });

  auto handler = [&api, &server](const httplib::Request& req, httplib::Response& res) {
    Reply reply = api.handle(to_request(req));
    if (server.draining()) {  // answered, then the connection ends
      res.set_header("Connection", "close");
      tl_close = true;
    }
    res.status = reply.status;
    if (!reply.etag.empty()) res.set_header("ETag", reply.etag);
    res.set_header("Cache-Control", reply.cache_control);
    res.set_header("X-Content-Type-Options", "nosniff");
    if (!reply.allow.empty()) res.set_header("Allow", reply.allow);
    if (reply.content_type.rfind("text/html", 0) == 0)
      res.set_header("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'");
    if (reply.status != 304) res.set_content(reply.body, reply.content_type);
  };
  // Every method reaches the API, which answers 405 where a method does not apply; bodies are read (up to
  // the limit) before a handler runs, so the connection stays in step.
  httplib::Server::Handler any = handler;
  server.Get(".*", any);
  server.Post(".*", any);
  server.Put(".*", any);
  server.Patch(".*", any);
  server.Delete(".*", any);
  server.Options(".*", any);
  // A request without Content-Length or Transfer-Encoding has no body (RFC 9112, 6.3); httplib 0.11 would
  // read a POST's body until the client closes, so such requests are answered before it tries.
  server.set_pre_routing_handler([any](const httplib::Request& req, httplib::Response& res) {
    bool may_have_body = req.method == "POST" || req.method == "PUT" || req.method == "PATCH" || req.method == "DELETE";
    if (!may_have_body || req.has_header("Content-Length") || req.has_header("Transfer-Encoding"))
      return httplib::Server::HandlerResponse::Unhandled;
    any(req, res);
    return httplib::Server::HandlerResponse::Handled;
  });

  // Errors httplib raises itself (malformed request, body over the limit, URI too long) get the same JSON
  // body as ours; a request that broke the framing also ends its connection.
  server.set_error_handler(httplib::Server::HandlerWithResponse([&limits](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;  // ours, already JSON
#if ARCHDB_OWN_CONNECTIONS
    if (tl_stream && tl_stream->timed_out()) res.status = 408;
    if (tl_stream && tl_stream->over_budget()) res.status = 413;
#endif
    tl_close = true;
    res.set_header("Connection", "close");
    res.set_content(error_body(res.status, generic_message(res.status, req, limits)), "application/json");
    return httplib::Server::HandlerResponse::Handled;
  }));
  if (options.access_log)
    server.set_logger([](const httplib::Request& req, const httplib::Response& res) {
      std::fprintf(stderr, "%s %s %s %d %zu\n", req.remote_addr.c_str(), req.method.c_str(), req.target.c_str(),
                   res.status, res.body.size());
    });

  int port = options.port;
  errno = 0;
  if (port == 0) port = server.bind_to_any_port(options.host);
  else if (!server.bind_to_port(options.host, port)) port = -1;
  if (port <= 0) {
    int err = errno;
    throw usage_error("cannot listen on " + options.host + ":" + std::to_string(options.port) +
                      (err ? std::string(" (") + std::strerror(err) + ")" : std::string()));
  }
  // httplib listens with a backlog of 5; a burst of connections deserves more.
  if (listen_fd >= 0) ::listen(listen_fd, SOMAXCONN);
  std::string shown = options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
  std::printf("archdb serve: listening on http://%s:%d/\n", shown.c_str(), port);
  std::fflush(stdout);
  std::fprintf(stderr, "archdb serve: %zu columns (%s), %u workers, read-only\n", source.current()->flavors.size(),
               source.current()->etag.c_str(), threads);
  source.start();

  std::atomic<bool> finished{false};
  std::thread signal_thread([&] {
    int sig = 0;
    while (sigwait(&signals, &sig) != 0) {
    }
    if (finished) return;
    std::fprintf(stderr, "archdb serve: %s: no new connections; finishing the requests in flight\n", strsignal(sig));
    // stop() has no effect until the accept loop runs: repeat it until the server is down.
    timespec slice{0, 50 * 1000 * 1000};
    while (!finished) {
      server.drain();
      siginfo_t info;
      int again = sigtimedwait(&signals, &info, &slice);
      if (again > 0 && !finished) {
        std::fprintf(stderr, "archdb serve: %s again: exiting at once\n", strsignal(again));
        std::fflush(stderr);
        ::_exit(128 + again);
      }
    }
  });

  bool ok = server.listen_after_bind();
  finished = true;
  pthread_kill(signal_thread.native_handle(), SIGTERM);
  signal_thread.join();
  source.stop();
  if (!ok) throw internal_error("the server's socket failed while accepting connections");
  std::fprintf(stderr, "archdb serve: stopped\n");
  return kExitOk;
}

}  // namespace archdb::service
