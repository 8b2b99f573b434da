// fuzz/fuzz_http_framing.cpp — libFuzzer harness for the request framing of `archdb serve`: scan_request
// (service/reception.h), which decides from the bytes a connection has sent so far where its request ends
// (request line, header lines, a Content-Length body, a chunked body with its framing; other framings are
// left to the worker). It throws nothing, so the harness holds it to its contract instead, under the default
// limits and under tight ones (so that the header-section and body limits are reached by short inputs):
//   - a complete request's head lies within the bytes, and `wanted` is the head plus at most max_body (a
//     chunked body: the head, or the end of the whole body, which lies within the bytes);
//   - the verdict is a function of the request's own bytes: scanning only the head of a complete request (with
//     a chunked body, the head and the whole body) gives the same head and `wanted`, and any verdict but "incomplete"
//     stays the same when more bytes arrive (the reception scans again after every read).
// A finding: a broken invariant (reported, then abort), any exception, a crash, an ASan report, a hang or a
// leak. Seeds: a handful of valid, partial, pipelined and refused HTTP/1.1 requests.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "service/reception.h"

namespace {

using archdb::service::Limits;
using archdb::service::RequestScan;
using archdb::service::scan_request;

void require(bool holds, const char* invariant, const Limits& limits) {
  if (holds) return;
  std::fprintf(stderr, "fuzz_http_framing: broken invariant (max_head %zu, max_body %zu): %s\n", limits.max_head,
               limits.max_body, invariant);
  std::abort();
}

void check_framing(std::string_view bytes, const Limits& limits) {
  const RequestScan scan = scan_request(bytes, limits);
  if (scan.kind == RequestScan::kComplete) {
    require(scan.head > 0 && scan.head <= bytes.size(), "a complete request's head lies within the bytes", limits);
    if (scan.chunked) {
      require(scan.wanted >= scan.head && scan.wanted <= bytes.size(), "a chunked request's end lies within the bytes",
              limits);
    } else {
      require(scan.wanted >= scan.head && scan.wanted - scan.head <= limits.max_body,
              "wanted is the head plus a body within max_body", limits);
    }
    // (A chunked body left to the worker, `wanted` the head, was judged from body bytes past the head.)
    if (!scan.chunked || scan.wanted > scan.head) {
      const size_t own = scan.chunked ? scan.wanted : scan.head;
      const RequestScan head_only = scan_request(bytes.substr(0, own), limits);
      require(head_only.kind == RequestScan::kComplete && head_only.head == scan.head && head_only.wanted == scan.wanted,
              "the head alone (with a chunked body, head and body) frames the request as the whole bytes do", limits);
    }
  }
  if (scan.kind != RequestScan::kIncomplete) {
    std::string more(bytes);
    more += "X-More: 1\r\n\r\nGET / HTTP/1.1\r\n\r\n";
    const RequestScan later = scan_request(more, limits);
    require(later.kind == scan.kind && later.head == scan.head && later.wanted == scan.wanted,
            "a verdict other than incomplete does not change as more bytes arrive", limits);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  check_framing(bytes, Limits{});
  Limits tight;
  tight.max_head = 64;
  tight.max_body = 16;
  check_framing(bytes, tight);
  return 0;
}
