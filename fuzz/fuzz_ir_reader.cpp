// fuzz/fuzz_ir_reader.cpp — libFuzzer harness for the isolated IR reader (checker/ir_reader.h), which reads the
// kernel IR given to `archdb check` and POSTed to the service: text IR or bitcode, read by LLVM in a child
// forked from a zygote. One reader is made in LLVMFuzzerInitialize, while the process has one thread (its
// zygote is forked then), and every input is read by it as "fuzz.ll".
// Expected: an IrUses, or an input_error naming the input — LLVM's own crashes, hangs and allocations happen in
// the child and come back as such errors, which is the point. A finding: any other exception; an internal_error
// (the header promises every way the child ends is an IrUses or an input_error: a garbled reply, a leaked
// descriptor that makes memfd_create or pipe fail); an ASan report in the child (archdb's own code there — the
// decoding, scan_ir_buffer's walk — is instrumented too, and its report would otherwise come back as "LLVM
// failed reading it"); a crash, ASan report, hang or leak in this process.
// How a report in the child is told from LLVM's failures: a death callback, set before the zygote is forked
// (so every child has it; libFuzzer sets its own in this process later), ends a child that dies of an ASan
// report with kSanitizedChildExit. The reader's message then starts "fuzz.ll: LLVM failed reading it (exit 86)",
// which no input can forge (LLVM's diagnostics start "fuzz.ll:LINE:COL:"; matching words of the message instead
// was fooled by LLVM quoting the input). Running out of the child's memory limit is an expected answer, also
// under ASan, whose allocator reports it and dies where a plain build throws std::bad_alloc: not a finding.
// Nor is a report raised in LLVM's own code: Debian's libLLVM is not instrumented, but ASan's interceptors
// (memcpy, strlen, ...) and allocator still see its faults — e.g. the bitcode reader copying a partition name
// past its string table (LLVM 22) — which the isolation exists to contain. The callback walks the dying stack
// from the top: a frame of libLLVM before any frame of archdb's code is LLVM's fault, anything else is ours.
// The limits are tighter than the service's so that the reader answers before libFuzzer's -timeout (25 s).
// Seeds: small kernels as text IR, one as bitcode, and bit-flipped bitcode that crashes LLVM
// (tests/fixtures/hostile, their source path made neutral).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <memory>
#include <string>

#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#include <execinfo.h>
#include <unistd.h>

#include "checker/ir_reader.h"
#include "support/error.h"

namespace {

constexpr int kSanitizedChildExit = 86;
const std::string kSanitizedChildMessage = "fuzz.ll: LLVM failed reading it (exit " + std::to_string(kSanitizedChildExit) + ")";

std::unique_ptr<archdb::IsolatedIrReader> reader;

// ASan's descriptions of an allocation it refused: the memory limit doing its work.
bool is_allocation_failure(const char* description) {
  for (const char* kind : {"out-of-memory", "allocation-size-too-big", "calloc-overflow", "reallocarray-overflow",
                           "pvalloc-overflow", "invalid-allocation-alignment", "rss-limit-exceeded"})
    if (std::strcmp(description, kind) == 0) return true;
  return false;
}

// Whether the fault ASan reports lies in LLVM's code: walking the stack from the callback down, the first frame
// that is either libLLVM's or archdb's (a function of namespace archdb) is libLLVM's. ASan's runtime and its
// interceptors, linked into this executable, and this callback are neither and are passed over.
bool fault_is_in_llvm() {
  void* frames[128];
  const int depth = ::backtrace(frames, 128);
  char where[1024];
  for (int i = 0; i < depth; ++i) {
    __sanitizer_symbolize_pc(frames[i], "%m|%f", where, sizeof where);
    const std::string_view frame(where);
    const std::string_view module = frame.substr(0, frame.find('|'));
    const std::string_view function = frame.substr(frame.find('|') + 1);
    if (module.find("libLLVM") != std::string_view::npos) return true;
    if (function.find("archdb::") != std::string_view::npos) return false;
  }
  return false;
}

// Runs in a child (and the zygote) as ASan dies, after its report is written to the child's stderr.
void on_sanitizer_death() {
  if (!__asan_report_present()) return;  // a mapping ASan could not make: out of memory as well
  const char* description = __asan_get_report_description();
  if (description && is_allocation_failure(description)) return;
  if (fault_is_in_llvm()) return;
  ::_exit(kSanitizedChildExit);
}

[[noreturn]] void finding(const char* what, const std::string& message) {
  std::fprintf(stderr, "fuzz_ir_reader: %s: %s\n", what, message.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* argc, char*** argv) {
  archdb::IrReadLimits limits;
  limits.cpu_ms = 5000;
  limits.wall_seconds = 10;
  limits.memory_bytes = size_t{1} << 30;
  __sanitizer_set_death_callback(on_sanitizer_death);
  reader = std::make_unique<archdb::IsolatedIrReader>(limits);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    reader->read(bytes, "fuzz.ll");
  } catch (const archdb::Error& e) {
    const std::string message = e.what();
    if (e.code() != archdb::kExitBadInput) finding("not an input_error", message);
    if (message.rfind(kSanitizedChildMessage, 0) == 0) finding("an ASan report in the child (its end)", message);
  }
  return 0;
}
