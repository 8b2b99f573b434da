// service/server.h — `archdb serve`: the read-only HTTP service over the database (cpp-httplib), with
// connections held to deadlines (a slow or silent client waits in the reception, is cut off at its deadline,
// and never holds a worker), a pool of workers sized to the process's CPUs that serve whole requests, and a
// drain on SIGTERM/SIGINT: stop accepting, finish the requests in flight, exit 0.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "service/routes.h"
#include "service/snapshot.h"
#include "db/store.h"

namespace archdb::service {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8787;        // 0: any free port (printed)
  std::string web_dir;    // the page's folder
  std::vector<std::string> allow_hosts;  // names a Host header may carry besides IP literals, localhost, `host`
  Limits limits;
  bool access_log = false;  // one line per request on stderr
};

// Serves until SIGTERM or SIGINT; returns the process exit code (0 after a clean drain). The first line on
// stdout is "archdb serve: listening on http://HOST:PORT/" once the socket accepts connections. Throws
// archdb::Error for a database that cannot be read, a missing page folder, or an address it cannot bind.
int serve(std::unique_ptr<Store> store, std::shared_ptr<const Schema> schema, const ServeOptions& options);

}  // namespace archdb::service
