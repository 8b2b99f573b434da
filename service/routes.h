// service/routes.h — the service's requests and answers, independent of the HTTP library: the
// versioned JSON API under /v1 and the page's static files. Every error is a JSON body with a message and
// a 4xx/5xx status; unknown query parameters and body fields are refused by name.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "checker/checker.h"
#include "checker/ir_reader.h"
#include "service/answer_cache.h"
#include "service/compute_slots.h"
#include "service/messages.h"
#include "service/origin.h"
#include "service/snapshot.h"

namespace archdb::service {

// The limits a client meets (documented in docs/service.md, "archdb serve").
struct Limits {
  size_t max_body = 2u << 20;       // bytes of a request body (JSON or raw IR): larger is 413
  size_t max_ir = 1u << 20;         // bytes of IR text or bitcode in one check: larger is 413
  size_t max_head = 16u << 10;      // bytes of a request's header lines (after the request line): larger is 431
  size_t max_connections = 4096;    // client connections open at once: a connection beyond is answered 503
  int read_timeout_s = 5;           // longest silence while a request is arriving
  int write_timeout_s = 5;          // longest stall while a response is leaving
  int request_timeout_s = 10;       // a whole request (line, headers, body) must arrive within this
  int keep_alive_s = 5;             // an idle kept-alive connection is closed after this
  int linger_ms = 200;              // a worker waits this long for a kept-alive connection's next request
  size_t keep_alive_max = 1000;     // requests on one connection
  unsigned threads = 0;             // connection workers; 0: 16 per CPU of the process's affinity
  unsigned compute_slots = 0;       // concurrent IR reads (LLVM); 0: the CPUs of the affinity
  unsigned ir_per_client = 4;       // IR checks one client may have running or waiting; one more is 429
  unsigned ir_cpu_ms = 10000;       // CPU time one IR reading may take; past it the check is a 422 naming it
  size_t cache_bytes = 64u << 20;   // rendered GET answers kept for the current snapshot; 0: none
};

class Api {
 public:
  // `web_dir`: the page's files (index.html, app.js, style.css), read once here; throws usage_error if the
  // folder has no index.html. IR from a request is read by `ir_reader`, in a child process.
  Api(SnapshotSource& source, std::shared_ptr<const Schema> schema, const Store& store, Limits limits,
      const std::string& web_dir, const IsolatedIrReader& ir_reader, OriginPolicy origin_policy = {});

  Reply handle(const Request& request) const;
  const Limits& limits() const { return limits_; }
  // The page as a static site serves it (service/site.h): index.html with its data block, which says `site` so
  // the page reads the site's files instead of asking /v1.
  std::string site_page() const;
  // The snapshot every answer of this moment comes from.
  std::shared_ptr<const Snapshot> snapshot() const { return source_.current(); }

 private:
  struct WebFile {
    std::string content_type, body, etag;
  };

  // One row per endpoint of /v1: dispatch, `GET /v1` and the API reference (docs/service.md, checked against
  // `GET /v1` by a test) all read this table. A path's {names} are the arguments the handler gets, in order.
  struct Route {
    const char* method;      // GET (HEAD as well) or POST
    const char* path;        // "/v1/cells/{flavor}/{key}/{target}"
    const char* parameters;  // what the query string takes, as `GET /v1` says it ("" for none)
    const char* description;
    std::function<Reply(const Api&, const Request&, const std::vector<std::string>& args)> handler;
  };
  static const std::vector<Route>& routes();

  Reply route(const Request& request) const;
  Reply api(const Request& request, const std::vector<std::string>& segments) const;
  Reply static_file(const Request& request) const;
  void embed_initial_data(Reply& page, bool site = false) const;

  Reply index() const;
  Reply status() const;
  Reply flavors(const Request& r, const std::string& one) const;
  Reply targets(const Request& r) const;
  Reply keys(const Request& r) const;
  Reply search(const Request& r) const;
  Reply cell(const Request& r, const std::string& flavor, const std::string& key, const std::string& target) const;
  Reply matrix(const Request& r) const;
  Reply history(const Request& r, const std::string& key) const;
  Reply intrinsic(const Request& r, const std::string& flavor, const std::string& name) const;
  Reply diff(const Request& r, const std::string& from, const std::string& to) const;
  Reply check(const Request& r) const;


  SnapshotSource& source_;
  std::shared_ptr<const Schema> schema_;
  Checker checker_;
  Limits limits_;
  const IsolatedIrReader& ir_reader_;
  OriginPolicy origin_policy_;
  std::map<std::string, WebFile> web_;
  mutable AnswerCache cache_;  // handle() is const: answering a request keeps its answer
  // Reading IR runs LLVM (in a child): at most compute_slots at once, shared fairly between clients.
  mutable ComputeSlots compute_;
};

}  // namespace archdb::service
