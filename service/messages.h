// service/messages.h — what the service's handlers take and give, independent of the HTTP library: a request
// as received (path percent-decoded, query raw), a reply, and an error carrying its HTTP status (its message
// becomes the JSON body's "message").
#pragma once

#include <string>

namespace archdb::service {

struct Request {
  std::string method;        // GET, HEAD, POST, ...
  std::string path;          // percent-decoded
  std::string query;         // raw, after '?'
  std::string content_type;  // the header as sent
  std::string body;
  std::string if_none_match;
  std::string client;        // the peer's address: whose share of the IR readings this is (compute_slots.h)
  // Who sent it (service/origin.h): empty where the header was absent.
  std::string host;
  std::string origin;
  std::string sec_fetch_site;
  std::string sec_fetch_mode;
};

struct Reply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  std::string etag;
  std::string cache_control = "no-cache";
  std::string allow;  // for 405
};

// An error with its HTTP status; the message is the body's "message".
struct HttpError {
  int status;
  std::string message;
  std::string allow;
};

[[noreturn]] inline void fail(int status, const std::string& message) { throw HttpError{status, message, ""}; }

}  // namespace archdb::service
