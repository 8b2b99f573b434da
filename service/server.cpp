// service/server.cpp — the HTTP side of `archdb serve` (see server.h).
//
// cpp-httplib parses requests and writes responses; the connections around them are ours, for what the
// library does not do. httplib's accept loop hands each new socket to the reception (reception.h), where it
// waits until a whole request has arrived, so slow or silent clients never hold a worker; a worker then
// serves it, and the requests that follow on a kept-alive connection as long as they arrive at once and no
// other request waits for a worker, then gives the connection back to the reception. Every request has a
// deadline for the whole of it and a byte budget. Framing the library would get wrong or slow is refused
// before anything of the body is read (an unusable Content-Length, a Transfer-Encoding other than chunked),
// a chunked body is cut off with 413 as soon as it passes the body limit, and a response that ends its
// connection says so once.
//
// That is written against cpp-httplib 0.11 (Debian bookworm, what archdb builds with). A newer cpp-httplib
// (Debian sid's, in the roots tools/provision-flavor builds the probe in, which leave the service out)
// changed those internals: there the library's own connection handling is used, with the same timeouts.
#include "service/server.h"

#include <arpa/inet.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "service/reception.h"
#include "service/render.h"
#include "support/cpus.h"
#include "support/error.h"

// cpp-httplib 0.11 has no CPPHTTPLIB_VERSION_NUM; the versions that define it changed the internals used here.
#if !defined(CPPHTTPLIB_VERSION_NUM)
#define ARCHDB_OWN_CONNECTIONS 1
#else
#define ARCHDB_OWN_CONNECTIONS 0
#endif

namespace archdb::service {

namespace {

using Clock = ConnClock;

// Connection workers. Like httplib's ThreadPool, but it says how many jobs wait for a worker (a worker
// then gives its kept-alive connection back rather than keep it), and it runs the reception's drain before
// its workers stop.
class WorkerPool : public httplib::TaskQueue {
 public:
  explicit WorkerPool(unsigned n) {
    for (unsigned i = 0; i < n; ++i) threads_.emplace_back([this] { run(); });
  }
#if ARCHDB_OWN_CONNECTIONS
  // httplib's accept loop: the hand-over of a new socket to the reception, done at once on its thread.
  void enqueue(std::function<void()> fn) override { fn(); }
#else
  bool enqueue(std::function<void()> fn) override {
    push(std::move(fn));
    return true;
  }
#endif
  // Serves every connection already accepted, then joins.
  void shutdown() override {
    if (before_shutdown) before_shutdown();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
  }
  void push(std::function<void()> fn) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      jobs_.push_back(std::move(fn));
      waiting_ = jobs_.size();
    }
    cv_.notify_one();
  }
  size_t waiting() const { return waiting_.load(std::memory_order_relaxed); }
  std::function<void()> before_shutdown;

 private:
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
// A socket as httplib's Stream: what the reception received first, then the socket, with the deadlines of
// the request being read.
class ConnStream : public httplib::Stream {
 public:
  ConnStream(int sock, const Limits& limits, std::string received)
      : sock_(sock), limits_(limits), buf_(std::move(received)) {
    // The head within its limits, a body within its limit, and room for a chunked body's framing.
    byte_budget_ = kRequestLineMax + limits_.max_head + 4 * limits_.max_body;
  }

  // `started`: when the request's first byte arrived (it may have waited in the reception).
  void begin_request(Clock::time_point started) {
    read_deadline_ = started + std::chrono::seconds(limits_.request_timeout_s);
    // Writing a response gets its own allowance after the request is in (a large matrix to a slow reader).
    write_deadline_ = read_deadline_ + std::chrono::seconds(limits_.request_timeout_s + 6 * limits_.write_timeout_s);
    timed_out_ = over_budget_ = false;
    received_ = 0;
    wrote_ = false;
  }
  bool timed_out() const { return timed_out_; }
  bool over_budget() const { return over_budget_; }
  size_t received() const { return received_; }
  bool wrote() const { return wrote_; }
  std::string_view unread() const { return std::string_view(buf_).substr(pos_); }
  std::string take_unread() {
    std::string rest = buf_.substr(pos_);
    buf_.clear();
    pos_ = 0;
    return rest;
  }
  // Appends what the socket has now, without waiting: >0 bytes read, 0 the client closed, <0 nothing yet
  // (errno EAGAIN) or an error.
  ssize_t read_available() {
    if (pos_ > 0) {
      buf_.erase(0, pos_);
      pos_ = 0;
    }
    char chunk[16384];
    ssize_t n;
    do {
      n = ::recv(sock_, chunk, sizeof chunk, MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n > 0) buf_.append(chunk, static_cast<size_t>(n));
    return n;
  }

  bool is_readable() const override { return pos_ < buf_.size() || wait(POLLIN, limits_.read_timeout_s, read_deadline_); }
  bool is_writable() const override { return wait(POLLOUT, limits_.write_timeout_s, write_deadline_); }

  ssize_t read(char* ptr, size_t size) override {
    if (received_ >= byte_budget_) {
      over_budget_ = true;
      return -1;
    }
    if (pos_ >= buf_.size()) {
      if (!wait(POLLIN, limits_.read_timeout_s, read_deadline_)) return -1;
      buf_.resize(16384);
      ssize_t n;
      do {
        n = ::recv(sock_, buf_.data(), buf_.size(), 0);
      } while (n < 0 && errno == EINTR);
      buf_.resize(n > 0 ? static_cast<size_t>(n) : 0);
      pos_ = 0;
      if (n <= 0) return n;
    }
    size_t n = std::min({size, buf_.size() - pos_, byte_budget_ - received_});
    std::memcpy(ptr, buf_.data() + pos_, n);
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
  std::string buf_;
  size_t pos_ = 0;
  size_t received_ = 0;
  bool wrote_ = false;
  Clock::time_point read_deadline_{}, write_deadline_{};
  mutable bool timed_out_ = false;
  bool over_budget_ = false;
};

// What the handlers need to know about the request they answer (same thread as the connection).
thread_local ConnStream* tl_stream = nullptr;
#endif
// Set by a handler or the error handler: this response ends its connection.
thread_local bool tl_close = false;

// Methods cpp-httplib 0.11 parses; any other is refused while the request line is read.
bool is_known_method(const std::string& m) {
  static const char* const kMethods[] = {"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "PRI"};
  return std::any_of(std::begin(kMethods), std::end(kMethods), [&](const char* k) { return m == k; });
}

// A request line that is well formed but names a method nobody implements (501, not 400).
bool is_unknown_method(const httplib::Request& req) {
  if (req.method.empty() || is_known_method(req.method) || req.target.empty()) return false;
  if (req.version != "HTTP/1.1" && req.version != "HTTP/1.0") return false;
  return std::all_of(req.method.begin(), req.method.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("!#$%&'*+-.^_`|~", c);
  });
}

std::string generic_message(int status, const httplib::Request& req, const Limits& limits) {
  switch (status) {
    case 400: return "malformed HTTP request";
    case 404: return "not found";
    case 408: return request_timeout_message(limits);
    case 413: return "request body too large: the limit is " + std::to_string(limits.max_body) + " bytes";
    case 414: return "request URI too long (the limit is 8192 bytes)";
    case 416: return "invalid Range header";
    case 431: return head_too_large_message(limits);
    case 501: return "method '" + req.method + "' is not implemented (the API answers GET, HEAD and POST)";
    default: return std::string(reason_phrase(status));
  }
}

void set_error(httplib::Response& res, int status, const std::string& message) {
  res.status = status;
  res.set_content(error_body(status, message), "application/json");
  tl_close = true;
}

std::string lower_trimmed(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The framing of a request's body, judged before anything of the body is read: nullopt if it may be read.
// A framing error ends the connection (what follows is not known to be a request).
struct Framing {
  bool has_body = false;
};
std::optional<std::pair<int, std::string>> bad_framing(const httplib::Request& req, const Limits& limits, Framing& f) {
  size_t te = req.get_header_value_count("Transfer-Encoding"), cl = req.get_header_value_count("Content-Length");
  if (te) {
    std::string coding = lower_trimmed(req.get_header_value("Transfer-Encoding"));
    if (te > 1 || coding != "chunked")
      return std::make_pair(501, "Transfer-Encoding '" + req.get_header_value("Transfer-Encoding") +
                                     "' is not supported (a body is sent with Content-Length, or chunked)");
    if (cl) return std::make_pair(400, std::string("a request with both Content-Length and Transfer-Encoding"));
    f.has_body = true;
    return std::nullopt;
  }
  if (!cl) return std::nullopt;
  if (cl > 1) return std::make_pair(400, std::string("Content-Length given more than once"));
  std::string v = lower_trimmed(req.get_header_value("Content-Length"));
  if (v.empty() || v.size() > 18 || !std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::make_pair(400, "invalid Content-Length '" + req.get_header_value("Content-Length") +
                                   "' (a number of bytes, 0 or more)");
  unsigned long long n = std::stoull(v);
  if (n > limits.max_body)
    return std::make_pair(413, "request body too large: " + v + " bytes; the limit is " + std::to_string(limits.max_body) +
                                   " bytes");
  f.has_body = n > 0;
  return std::nullopt;
}

class HttpServer : public httplib::Server {
 public:
  explicit HttpServer(const Limits& limits) : limits_(limits) {}

  void drain() {
    draining_ = true;
    stop();
  }
  bool draining() const { return draining_; }
  WorkerPool* pool = nullptr;
#if ARCHDB_OWN_CONNECTIONS
  // Made once the pool exists (httplib makes the pool when it starts to accept).
  void open_reception(WorkerPool* p) {
    pool = p;
    reception_ = std::make_unique<Reception>(limits_, [this](Connection&& c) {
      auto shared = std::make_shared<Connection>(std::move(c));
      pool->push([this, shared] { serve_connection(std::move(*shared)); });
    });
    p->before_shutdown = [this] { reception_->drain(); };
  }
#endif

 private:
#if ARCHDB_OWN_CONNECTIONS
  // A new connection, from httplib's accept loop: it waits in the reception for its first request.
  bool process_and_close_socket(socket_t sock) override {
    // Headers and body leave in two writes: without TCP_NODELAY the body would wait for the client's
    // delayed ACK of the headers.
    int one = 1;
    ::setsockopt(sock, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    Connection c;
    c.sock = sock;
    reception_->admit(std::move(c));
    return true;
  }

  // On a worker: the connection's buffer holds a whole request (the reception saw to it).
  void serve_connection(Connection c) {
    ConnStream strm(c.sock, limits_, std::move(c.buffered));
    tl_stream = &strm;
    Clock::time_point started = c.started;
    for (size_t served = c.served;; ++served) {
      strm.begin_request(started);
      bool last = draining_ || served + 1 >= limits_.keep_alive_max;
      bool closed = false;
      tl_close = false;
      bool ok = process_request(strm, last, closed, nullptr);
      if (!ok) {
        if ((strm.timed_out() || strm.over_budget()) && strm.received() > 0 && !strm.wrote())
          write_all(strm, error_response(strm.over_budget() ? 413 : 408,
                                         strm.over_budget() ? generic_message(413, {}, limits_)
                                                            : request_timeout_message(limits_)));
        break;
      }
      if (last || closed || tl_close) break;
      // The next request: served here if it is whole at once; otherwise the connection waits in the reception.
      int refused = 0;
      if (!next_request(strm, started, refused)) {
        if (refused) {
          write_all(strm, error_response(refused, refused == 431 ? head_too_large_message(limits_)
                                                  : refused == 414 ? generic_message(414, {}, limits_)
                                                                   : malformed_message(scan_request(strm.unread(), limits_))));
          break;
        }
        if (strm.unread().empty() && peer_gone(c.sock)) break;
        tl_stream = nullptr;
        Connection back;
        back.sock = c.sock;
        back.buffered = strm.take_unread();
        back.served = served + 1;
        back.started = back.buffered.empty() ? Clock::time_point{} : started;
        reception_->admit(std::move(back));
        return;
      }
    }
    tl_stream = nullptr;
    close_gracefully(c.sock);
  }

  // True when the stream holds the next whole request; false to give the connection back (or, with
  // `refused` set, to answer it so and close). Waits up to linger_ms while no job waits for a worker.
  bool next_request(ConnStream& strm, Clock::time_point& started, int& refused) {
    auto until = Clock::now() + std::chrono::milliseconds(limits_.linger_ms);
    bool had_bytes = !strm.unread().empty();
    if (had_bytes) started = Clock::now();
    for (;;) {
      if (!strm.unread().empty()) {
        RequestScan scan = scan_request(strm.unread(), limits_);
        if (scan.kind == RequestScan::kComplete && strm.unread().size() >= scan.wanted) return true;
        if (scan.kind == RequestScan::kHeadTooLarge) refused = 431;
        if (scan.kind == RequestScan::kUriTooLong) refused = 414;
        if (scan.kind == RequestScan::kMalformed) refused = 400;
        if (refused) return false;
      }
      auto now = Clock::now();
      if (draining_ || (pool && pool->waiting() > 0) || now >= until) return false;
      pollfd p{strm.socket(), POLLIN, 0};
      int ms = static_cast<int>(std::min<long long>(
          20, std::chrono::duration_cast<std::chrono::milliseconds>(until - now).count() + 1));
      if (::poll(&p, 1, ms) <= 0) continue;
      size_t before = strm.unread().size();
      ssize_t n = strm.read_available();
      if (n == 0) return false;  // the client closed: peer_gone() sees it
      if (n > 0 && before == 0) started = Clock::now();
    }
  }

  static bool peer_gone(int sock) {
    char c;
    ssize_t n = ::recv(sock, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return n == 0 || (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
  }

  static void write_all(ConnStream& strm, const std::string& all) {
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

  std::unique_ptr<Reception> reception_;
#endif

  const Limits& limits_;
  std::atomic<bool> draining_{false};
};

Request to_request(const httplib::Request& req, std::string body) {
  Request r;
  r.method = req.method;
  r.path = req.path;
  size_t q = req.target.find('?');
  if (q != std::string::npos) r.query = req.target.substr(q + 1);
  r.content_type = req.get_header_value("Content-Type");
  r.body = std::move(body);
  r.if_none_match = req.get_header_value("If-None-Match");
  r.client = req.remote_addr;
  r.host = req.get_header_value("Host");
  r.origin = req.get_header_value("Origin");
  r.sec_fetch_site = req.get_header_value("Sec-Fetch-Site");
  r.sec_fetch_mode = req.get_header_value("Sec-Fetch-Mode");
  return r;
}

// A server that may hold thousands of waiting connections needs a descriptor for each.
void raise_descriptor_limit() {
  rlimit r{};
  if (::getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < r.rlim_max) {
    r.rlim_cur = r.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &r);
  }
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
  raise_descriptor_limit();
  // glibc gives each of up to 8 x CPUs threads an allocator arena of its own; 16 workers per CPU handling large
  // IR bodies then keep tens of MB each in free lists. Two arenas per CPU keep the memory near flat under load
  // without making the threads wait for each other's allocations (docs/measurements.md, "Load").
  ::mallopt(M_ARENA_MAX, 2 * std::max(1, static_cast<int>(usable_cpus())));

  // Its zygote is forked now, while this process has one thread (see checker/ir_reader.h).
  const Limits limits = options.limits;
  IrReadLimits read_limits;
  read_limits.cpu_ms = limits.ir_cpu_ms;
  // One warm reader per slot: a reading never waits for a child to be made (nor for LLVM's pages to fault in).
  read_limits.warm_readers = limits.compute_slots ? limits.compute_slots : static_cast<unsigned>(usable_cpus());
  IsolatedIrReader ir_reader(read_limits);
  const Store& store_ref = *store;
  SnapshotSource source(std::move(store), schema);
  OriginPolicy origin_policy;
  origin_policy.host_names = options.allow_hosts;
  origin_policy.host_names.push_back(options.host);
  Api api(source, schema, store_ref, limits, options.web_dir, ir_reader, origin_policy);

  HttpServer server(limits);
  unsigned threads = limits.threads ? limits.threads : 16 * static_cast<unsigned>(usable_cpus());
  server.new_task_queue = [&server, threads] {
    auto* pool = new WorkerPool(threads);
#if ARCHDB_OWN_CONNECTIONS
    server.open_reception(pool);
#else
    server.pool = pool;
#endif
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

  auto answer = [&api, &server](const httplib::Request& req, httplib::Response& res, std::string body) {
    Reply reply = api.handle(to_request(req, std::move(body)));
    if (server.draining()) tl_close = true;  // answered, then the connection ends
    res.status = reply.status;
    if (!reply.etag.empty()) res.set_header("ETag", reply.etag);
    res.set_header("Cache-Control", reply.cache_control);
    res.set_header("X-Content-Type-Options", "nosniff");
    if (!reply.allow.empty()) res.set_header("Allow", reply.allow);
    if (reply.content_type.rfind("text/html", 0) == 0)
      res.set_header("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'");
    if (reply.status != 304) res.set_content(reply.body, reply.content_type);
  };
  // GET, HEAD and OPTIONS carry no body httplib reads; the methods that do read theirs through a content
  // reader, which stops at the body limit, however the body is framed.
  httplib::Server::Handler without_body = [answer](const httplib::Request& req, httplib::Response& res) {
    answer(req, res, "");
  };
  httplib::Server::HandlerWithContentReader with_body =
      [answer, &limits](const httplib::Request& req, httplib::Response& res, const httplib::ContentReader& read) {
        std::string body;
        bool too_large = false;
        bool whole = read([&](const char* data, size_t n) {
          if (body.size() + n > limits.max_body) {
            too_large = true;
            return false;
          }
          body.append(data, n);
          return true;
        });
        if (too_large) return set_error(res, 413, generic_message(413, req, limits));
        if (!whole) {
#if ARCHDB_OWN_CONNECTIONS
          if (tl_stream && tl_stream->timed_out()) return set_error(res, 408, request_timeout_message(limits));
          if (tl_stream && tl_stream->over_budget()) return set_error(res, 413, generic_message(413, req, limits));
#endif
          return set_error(res, 400, "malformed request body (the chunked framing, or its Content-Encoding)");
        }
        answer(req, res, std::move(body));
      };
  server.Get(".*", without_body);
  server.Options(".*", without_body);
  server.Post(".*", with_body);
  server.Put(".*", with_body);
  server.Patch(".*", with_body);
  server.Delete(".*", with_body);
  // Before routing (and before any body is read): the body's framing is judged; a request without
  // Content-Length or Transfer-Encoding has no body (RFC 9112, 6.3), which httplib 0.11 would read until the
  // client closes; TRACE and CONNECT, which httplib parses but routes nowhere, reach the API (405 with Allow).
  server.set_pre_routing_handler([without_body, &limits](const httplib::Request& req, httplib::Response& res) {
    tl_close = false;  // a new request (with the library's own connections, nothing else resets it)
    Framing framing;
    if (auto bad = bad_framing(req, limits, framing)) {
      set_error(res, bad->first, bad->second);
      return httplib::Server::HandlerResponse::Handled;
    }
    const std::string& m = req.method;
    bool reads_body = m == "POST" || m == "PUT" || m == "PATCH" || m == "DELETE";
    if (!reads_body) {
      if (framing.has_body) tl_close = true;  // unread, the body must not be taken for the next request
      if (m == "GET" || m == "HEAD" || m == "OPTIONS") return httplib::Server::HandlerResponse::Unhandled;
      without_body(req, res);
      return httplib::Server::HandlerResponse::Handled;
    }
    if (req.has_header("Content-Length") || req.has_header("Transfer-Encoding"))
      return httplib::Server::HandlerResponse::Unhandled;
    without_body(req, res);
    return httplib::Server::HandlerResponse::Handled;
  });

  // Errors httplib raises itself (malformed request, URI too long, ...) get the same JSON body as ours, and
  // end their connection.
  server.set_error_handler(httplib::Server::HandlerWithResponse([&limits](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;  // ours, already JSON
    int status = res.status;
#if ARCHDB_OWN_CONNECTIONS
    if (tl_stream && tl_stream->timed_out()) status = 408;
    else if (tl_stream && tl_stream->over_budget()) status = 413;
#endif
    if (status == 400 && is_unknown_method(req)) status = 501;
    set_error(res, status, generic_message(status, req, limits));
    return httplib::Server::HandlerResponse::Handled;
  }));
  // Last before a response leaves: one coherent set of connection headers. httplib adds Keep-Alive unless it
  // closes the connection itself; a response that ends its connection says only "Connection: close".
  server.set_post_routing_handler([](const httplib::Request&, httplib::Response& res) {
    if (!tl_close && res.get_header_value("Connection") != "close") return;
    res.headers.erase("Connection");
    res.headers.erase("Keep-Alive");
    res.set_header("Connection", "close");
    tl_close = true;
  });
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
  auto first = source.current();
  std::fprintf(stderr, "archdb serve: %zu columns (%s, loaded in %.0f ms), %u workers, read-only\n",
               first->flavors.size(), first->etag.c_str(), first->load_ms, threads);
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
