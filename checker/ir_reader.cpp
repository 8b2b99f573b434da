// checker/ir_reader.cpp — reading outside IR in an isolated child (see ir_reader.h): the guards, the child's
// side (limits, then scan_ir_buffer), the parent's side (feed, watch, reap, say how it ended) and the two
// messages between them.
#include "checker/ir_reader.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>

#include <nlohmann/json.hpp>

#include "support/error.h"
#include "support/files.h"
#include "support/zygote.h"

namespace archdb {
namespace {

using json = nlohmann::json;

bool is_bitcode(const std::string& bytes) {
  // A raw bitcode stream ("BC" 0xC0DE) or Darwin's wrapper (0x0B17C0DE, little-endian).
  return bytes.rfind(std::string("BC\xC0\xDE", 4), 0) == 0 || bytes.rfind(std::string("\xDE\xC0\x17\x0B", 4), 0) == 0;
}

bool write_all(int fd, const char* p, size_t left) {
  while (left > 0) {
    ssize_t n = ::write(fd, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return true;
}

std::string read_all(int fd) {
  std::string out;
  char buffer[65536];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out;
    out.append(buffer, static_cast<size_t>(n));
  }
}

class Descriptor {
 public:
  explicit Descriptor(int fd, const char* what) : fd_(fd) {
    if (fd_ < 0) throw internal_error(std::string(what) + ": " + std::strerror(errno));
  }
  ~Descriptor() { reset(); }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

// Bytes this process maps now (VmSize): the child's address-space limit is this plus the reading's allowance.
size_t mapped_bytes() {
  std::ifstream status("/proc/self/status");
  std::string word;
  while (status >> word)
    if (word == "VmSize:") {
      size_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
  return 0;
}

// The child: limits first, then LLVM. A crash or a limit ends it by a signal the parent reads.
void read_in_child(int in_fd, int out_fd, const IrReadLimits& limits) {
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGXCPU}) ::signal(sig, SIG_DFL);
  rlimit none{0, 0};
  ::setrlimit(RLIMIT_CORE, &none);
  rlimit cpu{limits.cpu_seconds, limits.cpu_seconds + 1};
  ::setrlimit(RLIMIT_CPU, &cpu);
  rlimit memory{mapped_bytes() + limits.memory_bytes, mapped_bytes() + limits.memory_bytes};
  ::setrlimit(RLIMIT_AS, &memory);

  std::string name, bytes, reply;
  try {
    decode_ir_request(read_all(in_fd), name, bytes);
    reply = encode_ir_reply(scan_ir_buffer(bytes, name));
  } catch (const Error& e) {
    reply = encode_ir_reply_error(e.what());
  } catch (const std::bad_alloc&) {
    reply = encode_ir_reply_error(name + ": reading it needed more memory than the limit (" +
                                  std::to_string(limits.memory_bytes >> 20) + " MiB)");
  }
  write_all(out_fd, reply.data(), reply.size());
}

// The end of what the child wrote to its stderr (LLVM's "LLVM ERROR: ..." lines), trailing blanks dropped.
std::string stderr_tail(int fd) {
  off_t size = ::lseek(fd, 0, SEEK_END);
  off_t from = size > 4096 ? size - 4096 : 0;
  std::string tail(static_cast<size_t>(size - from), '\0');
  ssize_t n = ::pread(fd, tail.data(), tail.size(), from);
  tail.resize(n > 0 ? static_cast<size_t>(n) : 0);
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
  return tail;
}

std::string last_line(const std::string& text) {
  size_t nl = text.rfind('\n');
  return nl == std::string::npos ? text : text.substr(nl + 1);
}

// LLVM's allocation-failure handler says "out of memory"; an uncaught std::bad_alloc names itself.
bool ran_out_of_memory(const std::string& said) {
  return said.find("out of memory") != std::string::npos || said.find("bad_alloc") != std::string::npos;
}

std::string signal_name(int sig) {
  const char* abbrev = ::sigabbrev_np(sig);
  return "signal " + std::to_string(sig) + (abbrev ? std::string(", SIG") + abbrev : std::string());
}

std::string seconds_text(double s) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g", s);
  return buffer;
}

}  // namespace

void guard_ir_before_reading(const std::string& bytes, const std::string& name, size_t max_nesting) {
  if (bytes.find_first_not_of(" \t\r\n") == std::string::npos)
    throw input_error(name + ": the IR is empty" + (bytes.empty() ? "" : " (only whitespace)"));
  if (is_bitcode(bytes)) return;
  size_t depth = 0, line = 1;
  bool in_string = false, in_comment = false;
  for (char c : bytes) {
    if (c == '\n') {
      ++line;
      in_comment = false;
      continue;
    }
    if (in_comment) continue;
    if (in_string) {
      in_string = c != '"';
      continue;
    }
    switch (c) {
      case ';': in_comment = true; break;
      case '"': in_string = true; break;
      case '(': case '[': case '{': case '<':
        if (++depth > max_nesting)
          throw input_error(name + ":" + std::to_string(line) + ": the IR nests brackets more than " +
                            std::to_string(max_nesting) + " deep; refused before LLVM reads it");
        break;
      case ')': case ']': case '}': case '>':
        if (depth > 0) --depth;
        break;
      default: break;
    }
  }
}

std::string encode_ir_request(const std::string& name, const std::string& bytes) {
  std::string message = name;
  message.push_back('\0');
  return message + bytes;
}

void decode_ir_request(const std::string& message, std::string& name, std::string& bytes) {
  size_t nul = message.find('\0');
  if (nul == std::string::npos) throw internal_error("an IR request without its name");
  name = message.substr(0, nul);
  bytes = message.substr(nul + 1);
}

std::string encode_ir_reply(const IrUses& uses) {
  json j;
  j["target_intrinsics"] = uses.target_intrinsics;
  j["declared_only"] = uses.declared_only;
  j["generic_intrinsics"] = uses.generic_intrinsics;
  j["kernels"] = uses.kernels;
  j["declarations"] = uses.declarations;
  j["added_features"] = uses.added_features;
  j["calls"] = json::array();
  for (const IrCall& c : uses.calls)
    j["calls"].push_back({{"intrinsic", c.intrinsic}, {"posed", c.posed ? json(posing_to_json(*c.posed)) : json(nullptr)}});
  return json{{"uses", j}}.dump();
}

std::string encode_ir_reply_error(const std::string& message) { return json{{"error", message}}.dump(); }

IrUses decode_ir_reply(const std::string& reply, const std::string& name) {
  json j = json::parse(reply, nullptr, /*allow_exceptions=*/false);
  auto garbled = [&] { return internal_error(name + ": the IR reader's reply is not one of ours"); };
  if (!j.is_object()) throw garbled();
  if (j.contains("error") && j["error"].is_string()) throw input_error(j["error"].get<std::string>());
  if (!j.contains("uses") || !j["uses"].is_object()) throw garbled();
  const json& u = j["uses"];
  auto strings = [&](const char* field) {
    std::vector<std::string> out;
    if (!u.contains(field) || !u[field].is_array()) throw garbled();
    for (const json& s : u[field]) {
      if (!s.is_string()) throw garbled();
      out.push_back(s.get<std::string>());
    }
    return out;
  };
  IrUses uses;
  uses.target_intrinsics = strings("target_intrinsics");
  uses.declared_only = strings("declared_only");
  uses.generic_intrinsics = strings("generic_intrinsics");
  uses.kernels = strings("kernels");
  uses.added_features = strings("added_features");
  if (!u.contains("declarations") || !u["declarations"].is_object()) throw garbled();
  for (const auto& [k, v] : u["declarations"].items()) {
    if (!v.is_string()) throw garbled();
    uses.declarations[k] = v.get<std::string>();
  }
  if (!u.contains("calls") || !u["calls"].is_array()) throw garbled();
  for (const json& c : u["calls"]) {
    if (!c.is_object() || !c.contains("intrinsic") || !c["intrinsic"].is_string() || !c.contains("posed")) throw garbled();
    IrCall call;
    call.intrinsic = c["intrinsic"].get<std::string>();
    if (!c["posed"].is_null()) {
      try {
        call.posed = posing_from_json(c["posed"]);
      } catch (const std::invalid_argument&) {
        throw garbled();
      }
    }
    uses.calls.push_back(std::move(call));
  }
  return uses;
}

IsolatedIrReader::IsolatedIrReader(IrReadLimits limits) : limits_(limits) {
  // Our own kernel, read here once, so that what LLVM and the reader set up on first use (the intrinsic
  // table's target prefixes, the parser's keyword tables) is in the zygote's memory, not redone by every child.
  scan_ir_buffer("declare i32 @llvm.amdgcn.workitem.id.x()\n"
                 "define amdgpu_kernel void @warm() {\n  %x = call i32 @llvm.amdgcn.workitem.id.x()\n  ret void\n}\n",
                 "warm-up.ll");
  zygote_ = std::make_unique<Zygote>([limits](int in_fd, int out_fd) { read_in_child(in_fd, out_fd, limits); });
}

IsolatedIrReader::~IsolatedIrReader() = default;

IrUses IsolatedIrReader::read_file(const std::string& path) const { return read(archdb::read_file(path), path); }

IrUses IsolatedIrReader::read(const std::string& bytes, const std::string& name) const {
  guard_ir_before_reading(bytes, name, limits_.max_nesting);

  Descriptor in(::memfd_create("archdb-ir-request", MFD_CLOEXEC), "memfd_create");
  std::string request = encode_ir_request(name, bytes);
  if (!write_all(in.get(), request.data(), request.size()) || ::lseek(in.get(), 0, SEEK_SET) != 0)
    throw internal_error(std::string("writing the IR request: ") + std::strerror(errno));
  Descriptor err(::memfd_create("archdb-ir-stderr", MFD_CLOEXEC), "memfd_create");
  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw internal_error(std::string("pipe: ") + std::strerror(errno));
  Descriptor from_child(pipe_fds[0], "pipe"), to_parent(pipe_fds[1], "pipe");

  pid_t pid = zygote_->spawn(in.get(), to_parent.get(), err.get());
  to_parent.reset();
  in.reset();

  std::string reply;
  bool stopped = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limits_.wall_seconds);
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      ::kill(pid, SIGKILL);
      stopped = true;
      break;
    }
    pollfd p{from_child.get(), POLLIN, 0};
    int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    char buffer[65536];
    ssize_t n = ::read(from_child.get(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    reply.append(buffer, static_cast<size_t>(n));
  }
  int status = zygote_->reap(pid);

  if (stopped)
    throw input_error(name + ": LLVM took more than " + seconds_text(limits_.wall_seconds) +
                      " s reading it; stopped");
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    if (sig == SIGXCPU || sig == SIGKILL)
      throw input_error(name + ": LLVM used more than " + std::to_string(limits_.cpu_seconds) +
                        " s of CPU reading it; stopped");
    std::string said = stderr_tail(err.get());
    if (ran_out_of_memory(said))
      throw input_error(name + ": reading it needed more memory than the limit (" +
                        std::to_string(limits_.memory_bytes >> 20) + " MiB)");
    throw input_error(name + ": LLVM crashed reading it (" + signal_name(sig) + ")" +
                      (said.empty() ? "" : ": " + last_line(said)));
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    std::string said = stderr_tail(err.get());
    if (ran_out_of_memory(said))
      throw input_error(name + ": reading it needed more memory than the limit (" +
                        std::to_string(limits_.memory_bytes >> 20) + " MiB)");
    throw input_error(name + ": LLVM failed reading it (exit " + std::to_string(WEXITSTATUS(status)) + ")" +
                      (said.empty() ? "" : ": " + last_line(said)));
  }
  return decode_ir_reply(reply, name);
}

}  // namespace archdb
