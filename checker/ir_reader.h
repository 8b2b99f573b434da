// checker/ir_reader.h — kernel IR from outside (a file given to `archdb check`, a body POSTed to the service)
// is read by LLVM in an isolated child process, never in ours: LLVM's readers crash, recurse without bound
// or run for minutes on hostile or damaged input (30,000 nested `{`, a bitcode file with one byte flipped),
// and a crash there must be an answer, not the end of the service.
//
// Invariants: a reader child is forked by a zygote made when the reader is (so construct the reader while the
// process has one thread: before the service starts its threads); it holds nothing but one socket to the
// parent and a file for its stderr; it runs under limits on address space and core size, each reading under a
// CPU budget (a CPU-time timer: SIGXCPU past it), and the parent kills it at a wall-clock deadline. Children
// are kept warm and reused: `warm_readers` of them wait, each having read a kernel already (so what reading
// touches is in its memory, not faulted in during a request); a child is retired (killed) after a crash, a
// limit, an answer it garbled, or `readings_per_reader` readings, and another is made warm in the background.
// With warm_readers = 0 every reading has a fresh child, retired after it. Every way a reading can end is an
// IrUses or an input_error (exit 3, HTTP 422) naming the input: "NAME: LLVM crashed reading it (signal 11,
// SIGSEGV)". The same bytes under the same name are answered from a cache of the last readings (answers and
// refusals alike) without reading them again. Cheap guards run first (empty input, nesting depth of text IR),
// never instead of the isolation.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>

#include "checker/ir_uses.h"

namespace archdb {

class Zygote;

struct IrReadLimits {
  unsigned cpu_ms = 10000;                    // CPU time one reading may take: SIGXCPU past it
  double wall_seconds = 30;                   // killed at this deadline, whatever it is doing
  size_t memory_bytes = size_t{2} << 30;      // address space the reading may add (RLIMIT_AS beyond what is mapped)
  size_t max_nesting = 256;                   // brackets of text IR open at once; deeper is refused unread
  unsigned warm_readers = 0;                  // children kept warm and waiting (0: a fresh child per reading)
  unsigned readings_per_reader = 1000;        // a child is retired after this many readings
  size_t cached_readings = 1024;              // answers kept by the bytes and name read (0: none)
};

// The cheap guards, in the caller's process: throws input_error naming `name` when the IR is empty (no bytes,
// or only whitespace) or, as text, nests brackets deeper than `max_nesting` (counting ( [ { < outside strings
// and comments; no kernel nests more than a few dozen, and LLVM's parser recurses once per level).
void guard_ir_before_reading(const std::string& bytes, const std::string& name, size_t max_nesting);

class IsolatedIrReader {
 public:
  explicit IsolatedIrReader(IrReadLimits limits = {});
  ~IsolatedIrReader();
  IsolatedIrReader(const IsolatedIrReader&) = delete;
  IsolatedIrReader& operator=(const IsolatedIrReader&) = delete;

  // scan_ir_buffer's answer, read in a child. Thread-safe: each call reads in a child no other call uses.
  IrUses read(const std::string& bytes, const std::string& name) const;
  IrUses read_file(const std::string& path) const;

  const IrReadLimits& limits() const { return limits_; }
  // Children made so far (warm or not), and those warm and waiting now: a benchmark's and a test's view.
  size_t children_made() const;
  size_t children_waiting() const;

 private:
  struct Child;
  class Pool;
  std::unique_ptr<Child> spawn() const;
  void retire(std::unique_ptr<Child> c) const;
  std::string exchange(Child& c, const std::string& request, const std::string& name) const;

  IrReadLimits limits_;
  std::unique_ptr<Zygote> zygote_;
  mutable std::atomic<size_t> made_{0};  // the pool's thread counts here too, while pool_ is being made or unmade
  std::unique_ptr<Pool> pool_;
};

// The messages between the reader and its child, each with one encoder and one decoder. On the socket each is a
// frame: its length (8 bytes, little-endian), then the message.
// Request: the input's name, a NUL, then its bytes. Reply: a JSON object, {"uses": {...}} or {"error": "..."}.
std::string encode_frame(const std::string& message);
// Takes one whole frame's message off the front of `buffer`; false while the frame is not whole yet. Throws
// internal_error for a length no message of ours has (more than 1 GiB).
bool decode_frame(std::string& buffer, std::string& message);
std::string encode_ir_request(const std::string& name, const std::string& bytes);
void decode_ir_request(const std::string& message, std::string& name, std::string& bytes);
std::string encode_ir_reply(const IrUses& uses);
std::string encode_ir_reply_error(const std::string& message);
// Throws input_error with the child's message for an error reply; internal_error naming `name` for a reply
// that is not one of ours.
IrUses decode_ir_reply(const std::string& reply, const std::string& name);

}  // namespace archdb
