// service/origin.cpp — the same-origin rule of origin.h, on the headers of a parsed request.
#include "service/origin.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>

#include "service/routes.h"

namespace archdb::service {
namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// "127.0.0.1:8787" -> "127.0.0.1"; "[::1]:8787" -> "::1"; "Example.COM" -> "example.com".
std::string host_part(const std::string& host_header) {
  std::string h = lower(host_header);
  if (!h.empty() && h.front() == '[') {
    size_t close = h.find(']');
    return close == std::string::npos ? h : h.substr(1, close - 1);
  }
  size_t colon = h.rfind(':');
  if (colon != std::string::npos && colon + 1 < h.size() &&
      std::all_of(h.begin() + static_cast<long>(colon) + 1, h.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    h.resize(colon);
  return h;
}

bool is_ip_literal(const std::string& host) {
  unsigned char buffer[16];
  return ::inet_pton(AF_INET, host.c_str(), buffer) == 1 || ::inet_pton(AF_INET6, host.c_str(), buffer) == 1;
}

bool is_own_host(const std::string& host, const OriginPolicy& policy) {
  if (is_ip_literal(host) || host == "localhost") return true;
  if (host.size() > 10 && host.compare(host.size() - 10, 10, ".localhost") == 0) return true;
  for (const std::string& name : policy.host_names)
    if (lower(name) == host) return true;
  return false;
}

}  // namespace

std::optional<std::string> foreign_request(const Request& r, const OriginPolicy& policy) {
  if (!r.host.empty() && !is_own_host(host_part(r.host), policy))
    return "Host '" + r.host + "' is not a name of this service (it answers IP addresses, localhost and the names "
           "given with --host or --allow-host)";
  if (!r.origin.empty() && lower(r.origin) != "http://" + lower(r.host))
    return "a request from another origin (Origin: " + r.origin + ") is refused: this service answers its own page "
           "and clients that are no browser";
  std::string site = lower(r.sec_fetch_site);
  if (!site.empty() && site != "same-origin" && site != "none") {
    bool navigation = (r.method == "GET" || r.method == "HEAD") && lower(r.sec_fetch_mode) == "navigate";
    if (!navigation)
      return "a request another site's page made (Sec-Fetch-Site: " + r.sec_fetch_site + ") is refused";
  }
  return std::nullopt;
}

}  // namespace archdb::service
