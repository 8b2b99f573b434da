// checker/ir_reader.h — kernel IR from outside (a file given to `archdb check`, a body POSTed to the service)
// is read by LLVM in an isolated child process, never in ours: LLVM's readers crash, recurse without bound
// or run for minutes on hostile or damaged input (30,000 nested `{`, a bitcode file with one byte flipped),
// and a crash there must be an answer, not the end of the service.
//
// Invariants: the child is forked by a zygote made when the reader is (so construct the reader while the
// process has one thread: before the service starts its threads); it holds nothing but its input, its output
// pipe and a file for its stderr; it runs under limits on CPU time, address space and core size, and the
// parent kills it at a wall-clock deadline. Every way it can end is an IrUses or an input_error (exit 3, HTTP
// 400) naming the input: "NAME: LLVM crashed reading it (signal 11, SIGSEGV)". Cheap guards run first (empty
// input, nesting depth of text IR), never instead of the isolation.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "checker/ir_uses.h"

namespace archdb {

class Zygote;

struct IrReadLimits {
  unsigned cpu_seconds = 10;                  // RLIMIT_CPU of the child: SIGXCPU past it
  double wall_seconds = 30;                   // killed at this deadline, whatever it is doing
  size_t memory_bytes = size_t{2} << 30;      // address space the reading may add (RLIMIT_AS beyond what is mapped)
  size_t max_nesting = 256;                   // brackets of text IR open at once; deeper is refused unread
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

  // scan_ir_buffer's answer, read in a child. Thread-safe: each call forks a child of its own.
  IrUses read(const std::string& bytes, const std::string& name) const;
  IrUses read_file(const std::string& path) const;

  const IrReadLimits& limits() const { return limits_; }

 private:
  IrReadLimits limits_;
  std::unique_ptr<Zygote> zygote_;
};

// The messages between the reader and its child, each with one encoder and one decoder.
// Request: the input's name, a NUL, then its bytes. Reply: a JSON object, {"uses": {...}} or {"error": "..."}.
std::string encode_ir_request(const std::string& name, const std::string& bytes);
void decode_ir_request(const std::string& message, std::string& name, std::string& bytes);
std::string encode_ir_reply(const IrUses& uses);
std::string encode_ir_reply_error(const std::string& message);
// Throws input_error with the child's message for an error reply; internal_error naming `name` for a reply
// that is not one of ours.
IrUses decode_ir_reply(const std::string& reply, const std::string& name);

}  // namespace archdb
