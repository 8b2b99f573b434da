// service/reception.h — where `archdb serve`'s connections wait until they have a whole request: one
// thread holds every connection that is new, idle between requests, or still arriving, with poll(), and hands
// a connection to a worker only once its request head (and a Content-Length body) is in. A client that sends
// half a request, or trickles one, costs a socket and a buffer here, never a worker: it is answered 408 at
// its deadline, 431 when its head is too large, and the workers keep serving everyone else.
//
// Plain sockets, no HTTP library: the reception only finds where a request ends (scan_request); parsing and
// answering it is cpp-httplib's, on a worker (server.cpp).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "service/routes.h"

namespace archdb::service {

using ConnClock = std::chrono::steady_clock;

// A client connection between two owners (the reception and a worker).
struct Connection {
  int sock = -1;
  std::string buffered;         // received and not yet served: the start of the next request(s)
  size_t served = 0;            // requests already answered on it
  ConnClock::time_point started{};  // when the first byte of the request in `buffered` arrived
};

// Request lines, header lines and header sections past these are refused before any parsing.
constexpr size_t kRequestLineMax = 8192 + 64;  // an 8 KiB URI (cpp-httplib's limit, 414) with method and version
constexpr size_t kHeaderLineMax = 8192;        // one header line with its CR LF (cpp-httplib's limit)

// How far the bytes at the front of a connection are a request.
struct RequestScan {
  enum Kind {
    kIncomplete,    // the head has not ended yet (or the Content-Length body has not arrived)
    kComplete,      // `wanted` bytes (head and Content-Length body) are what the request needs
    kMalformed,     // a line ends in a bare LF (the head's, or a chunked body's), Host or Origin twice or empty: 400
    kUriTooLong,    // 414
    kHeadTooLarge,  // a header line over kHeaderLineMax or the header section over Limits::max_head: 431
  };
  Kind kind = kIncomplete;
  const char* why = "";  // kMalformed: what is wrong, for malformed_message
  size_t head = 0;    // bytes of the request line and headers, with the empty line (once known)
  size_t wanted = 0;  // head plus the body the request announces with Content-Length (when ≤ max_body), or
                      // plus its whole chunked body
  bool chunked = false;  // the head announces a chunked body (`head` is set even while it is incomplete)
};
// `wanted` counts a Content-Length body only when it is a plain number within the body limit and the client
// does not wait for "100 Continue"; a chunked body is waited for whole and its framing checked (a bare LF is
// kMalformed) while its data stays within the body limit; any other framing is judged (400, 413, 501) by the
// worker, at once.
RequestScan scan_request(std::string_view bytes, const Limits& limits);
// The 400's message for a kMalformed scan, the reception's and the workers' alike.
std::string malformed_message(const RequestScan& scan);

// A complete HTTP/1.1 response with the service's JSON error body, ending its connection.
std::string error_response(int status, const std::string& message);
// The messages of 408 and 431, which the reception and the workers both give.
std::string request_timeout_message(const Limits& limits);
std::string head_too_large_message(const Limits& limits);

class Reception {
 public:
  // `dispatch` runs on the reception's thread and must not block: it queues the connection for a worker.
  using Dispatch = std::function<void(Connection&&)>;
  Reception(const Limits& limits, Dispatch dispatch);
  ~Reception();
  Reception(const Reception&) = delete;
  Reception& operator=(const Reception&) = delete;

  // Takes a connection (a new one, or one a worker is done with for now), from any thread. After drain() it
  // is closed at once.
  void admit(Connection connection);
  // Stops waiting for new requests: idle connections are closed at once; requests already arriving are
  // dispatched when complete or answered 408 at their deadline. Returns when no connection is left.
  void drain();

 private:
  struct Held;
  void run();
  void evaluate(std::vector<Held>& held, bool draining);
  void reply_and_close(Held& h, int status, const std::string& message);

  const Limits limits_;
  Dispatch dispatch_;
  int wake_fd_ = -1;
  std::mutex mutex_;
  std::condition_variable drained_cv_;
  std::vector<Connection> incoming_;
  bool draining_ = false;
  bool finished_ = false;
  std::thread thread_;
};

}  // namespace archdb::service
