// service/origin.h — whose requests the service answers: those of its own origin only. A page a developer
// visits elsewhere can make the browser send requests to 127.0.0.1 (a form, an image, a `text/plain` fetch:
// CORS "simple requests" need no preflight), and a DNS name rebound to 127.0.0.1 makes them same-origin to the
// browser. Both are told apart by the headers browsers set and pages cannot:
//   - Host must name this service: an IP literal (a rebinding needs a name), `localhost`, the --host it listens
//     on, or a name --allow-host adds. A client without a Host header (HTTP/1.0 tools) is no browser.
//   - Origin, where a browser sends it, must be this service's own (`http://` + the Host it was sent to).
//   - Sec-Fetch-Site, where a browser sends it, must be same-origin or none (typed, bookmarked), except that a
//     link from another site may still open the page (a GET or HEAD navigation).
// A refusal is 403 with a message naming the header.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace archdb::service {

struct Request;

struct OriginPolicy {
  std::vector<std::string> host_names;  // names Host may carry besides IP literals and localhost, any case
};

// Why the request must be refused, or nullopt when it is the service's own.
std::optional<std::string> foreign_request(const Request& request, const OriginPolicy& policy);

}  // namespace archdb::service
