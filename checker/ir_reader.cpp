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

#include <sys/socket.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstring>
#include <deque>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

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

class Descriptor {
 public:
  explicit Descriptor(int fd, const char* what) : fd_(fd) {
    if (fd_ < 0) throw internal_error(std::string(what) + ": " + std::strerror(errno));
  }
  ~Descriptor() { reset(); }
  Descriptor(const Descriptor&) = delete;
  Descriptor& operator=(const Descriptor&) = delete;
  int get() const { return fd_; }
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
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

// The one wording of a reading past the memory limit, whether the child saw its allocation fail or died of it.
std::string memory_refusal(const std::string& name, const IrReadLimits& limits) {
  return name + ": reading it needed more memory than the limit (" + std::to_string(limits.memory_bytes >> 20) + " MiB)";
}

// What a reader child reads before its first request, so that its first real reading finds LLVM's tables set up
// and the pages reading touches already in its memory.
const char* const kWarmUpKernel =
    "declare i32 @llvm.amdgcn.workitem.id.x()\n"
    "define amdgpu_kernel void @warm() {\n  %x = call i32 @llvm.amdgcn.workitem.id.x()\n  ret void\n}\n";

// Reads one whole frame from a blocking descriptor; false at end of file (the parent retired this child).
bool read_frame(int fd, std::string& pending, std::string& message) {
  char buffer[65536];
  while (!decode_frame(pending, message)) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    pending.append(buffer, static_cast<size_t>(n));
  }
  return true;
}

// A reader child: limits first, then one reading per request until the parent closes the socket. A crash or a
// limit ends it by a signal the parent reads.
void serve_in_child(int in_fd, int out_fd, const IrReadLimits& limits) {
  for (int sig : {SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT, SIGXCPU}) ::signal(sig, SIG_DFL);
  rlimit none{0, 0};
  ::setrlimit(RLIMIT_CORE, &none);
  rlimit memory{mapped_bytes() + limits.memory_bytes, mapped_bytes() + limits.memory_bytes};
  ::setrlimit(RLIMIT_AS, &memory);
  // A backstop for the whole life of the child, should its timer not fire.
  rlim_t life = (limits.cpu_ms / 1000 + 1) * (limits.readings_per_reader + 2);
  rlimit cpu{life, life + 1};
  ::setrlimit(RLIMIT_CPU, &cpu);
  // Each reading's CPU budget: a timer on this process's CPU time, armed per request, SIGXCPU when it fires.
  sigevent event{};
  event.sigev_notify = SIGEV_SIGNAL;
  event.sigev_signo = SIGXCPU;
  timer_t budget;
  if (::timer_create(CLOCK_PROCESS_CPUTIME_ID, &event, &budget) != 0) ::_exit(70);
  const itimerspec armed{{0, 0}, {static_cast<time_t>(limits.cpu_ms / 1000), static_cast<long>(limits.cpu_ms % 1000) * 1000000}};
  const itimerspec disarmed{};

  std::string pending, message;
  while (read_frame(in_fd, pending, message)) {
    std::string name, bytes, reply;
    ::timer_settime(budget, 0, &armed, nullptr);
    try {
      decode_ir_request(message, name, bytes);
      reply = encode_ir_reply(scan_ir_buffer(bytes, name));
    } catch (const Error& e) {
      reply = encode_ir_reply_error(e.what());
    } catch (const std::bad_alloc&) {
      reply = encode_ir_reply_error(memory_refusal(name, limits));
    }
    ::timer_settime(budget, 0, &disarmed, nullptr);
    std::string frame = encode_frame(reply);
    if (!write_all(out_fd, frame.data(), frame.size())) return;
  }
}

// The end of what the child wrote to its stderr since `since` (LLVM's "LLVM ERROR: ..." lines of this reading),
// trailing blanks dropped.
std::string stderr_tail(int fd, off_t since) {
  off_t size = ::lseek(fd, 0, SEEK_END);
  off_t from = std::max(since, size > 4096 ? size - 4096 : off_t{0});
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

std::string encode_frame(const std::string& message) {
  std::string frame(8, '\0');
  uint64_t n = message.size();
  for (int i = 0; i < 8; ++i) frame[static_cast<size_t>(i)] = static_cast<char>((n >> (8 * i)) & 0xff);
  return frame + message;
}

bool decode_frame(std::string& buffer, std::string& message) {
  if (buffer.size() < 8) return false;
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(buffer[static_cast<size_t>(i)]);
  if (n > (uint64_t{1} << 30)) throw internal_error("an IR reader frame of " + std::to_string(n) + " bytes is none of ours");
  if (buffer.size() - 8 < n) return false;
  message = buffer.substr(8, static_cast<size_t>(n));
  buffer.erase(0, 8 + static_cast<size_t>(n));
  return true;
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
  return json{{"uses", j}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

// LLVM's diagnostics quote the input's own bytes: what is not UTF-8 becomes U+FFFD rather than no answer.
std::string encode_ir_reply_error(const std::string& message) {
  return json{{"error", message}}.dump(-1, ' ', false, json::error_handler_t::replace);
}

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

namespace {
// A reading stopped at the wall-clock deadline: the machine's load may have had as much to do with it as the
// input, so it is not kept as the input's answer (a crash or a CPU budget is).
class ReadingStopped : public Error {
 public:
  explicit ReadingStopped(const std::string& message) : Error(kExitBadInput, message) {}
};
}  // namespace

// One reader child as the parent holds it: its socket, its stderr file, how many readings it has done.
struct IsolatedIrReader::Child {
  pid_t pid = -1;
  int socket = -1;  // non-blocking: the parent never waits on it past a deadline
  int err = -1;
  size_t readings = 0;
  std::string pending;
};

// The warm children, the background thread that keeps `warm_readers` of them waiting, and the cache of answers.
class IsolatedIrReader::Pool {
 public:
  Pool(const IsolatedIrReader& reader, size_t warm) : reader_(reader), warm_(warm) {
    if (warm_ > 0) refiller_ = std::thread([this] { refill(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    if (refiller_.joinable()) refiller_.join();
    for (auto& c : idle_) reader_.retire(std::move(c));
  }

  // A warm child, else (all busy, or none kept) a fresh one.
  std::unique_ptr<Child> take() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++busy_;
      if (!idle_.empty()) {
        auto c = std::move(idle_.back());
        idle_.pop_back();
        return c;
      }
    }
    try {
      return reader_.spawn();
    } catch (...) {
      lost();
      throw;
    }
  }
  // A child that answered: kept while it has readings left and the children kept number fewer than `warm_`,
  // else retired (and the refiller makes another warm one).
  void give_back(std::unique_ptr<Child> c) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --busy_;
      if (c->readings < reader_.limits_.readings_per_reader && idle_.size() + busy_ < warm_) {
        idle_.push_back(std::move(c));
        return;
      }
    }
    cv_.notify_all();
    reader_.retire(std::move(c));
  }
  // A child that failed a reading, or could not be made: retired.
  void discard(std::unique_ptr<Child> c) {
    lost();
    if (c) reader_.retire(std::move(c));
  }

  size_t waiting() {
    std::lock_guard<std::mutex> lock(mutex_);
    return idle_.size();
  }

  std::optional<std::string> cached(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = answers_.find(key);
    if (it == answers_.end()) return std::nullopt;
    return it->second;
  }
  void keep(const std::string& key, const std::string& reply) {
    if (reader_.limits_.cached_readings == 0) return;
    std::lock_guard<std::mutex> lock(mutex_);
    if (!answers_.emplace(key, reply).second) return;
    order_.push_back(key);
    if (order_.size() > reader_.limits_.cached_readings) {
      answers_.erase(order_.front());
      order_.pop_front();
    }
  }

 private:
  void lost() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --busy_;
    }
    cv_.notify_all();
  }

  void refill() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
      if (idle_.size() + busy_ + making_ >= warm_) {
        cv_.wait(lock);
        continue;
      }
      ++making_;
      lock.unlock();
      std::unique_ptr<Child> c;
      try {
        c = reader_.spawn();
        reader_.exchange(*c, encode_ir_request("warm-up.ll", kWarmUpKernel), "warm-up.ll");
      } catch (const Error&) {
        if (c) reader_.retire(std::move(c));  // safe after a failed exchange: it reaped the child already
        c.reset();
      }
      lock.lock();
      --making_;
      if (c && !stopping_) idle_.push_back(std::move(c));
      else if (c) reader_.retire(std::move(c));
      if (!c) cv_.wait_for(lock, std::chrono::milliseconds(100));  // no busy loop when children cannot be made
    }
  }

  const IsolatedIrReader& reader_;
  const size_t warm_;
  std::mutex mutex_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Child>> idle_;
  size_t making_ = 0;
  size_t busy_ = 0;  // children taken and not yet given back
  bool stopping_ = false;
  std::map<std::string, std::string> answers_;  // digest of (name, bytes) -> the child's reply
  std::deque<std::string> order_;
  std::thread refiller_;
};

IsolatedIrReader::IsolatedIrReader(IrReadLimits limits) : limits_(limits) {
  // Our own kernel, read here once, so that what LLVM and the reader set up on first use (the intrinsic
  // table's target prefixes, the parser's keyword tables) is in the zygote's memory, not redone by every child.
  scan_ir_buffer(kWarmUpKernel, "warm-up.ll");
  zygote_ = std::make_unique<Zygote>([limits](int in_fd, int out_fd) { serve_in_child(in_fd, out_fd, limits); });
  pool_ = std::make_unique<Pool>(*this, limits_.warm_readers);
}

IsolatedIrReader::~IsolatedIrReader() { pool_.reset(); }

size_t IsolatedIrReader::children_made() const { return made_.load(); }
size_t IsolatedIrReader::children_waiting() const { return pool_->waiting(); }

std::unique_ptr<IsolatedIrReader::Child> IsolatedIrReader::spawn() const {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0)
    throw internal_error(std::string("socketpair: ") + std::strerror(errno));
  Descriptor mine(pair[0], "socketpair"), theirs(pair[1], "socketpair");
  Descriptor err(::memfd_create("archdb-ir-stderr", MFD_CLOEXEC), "memfd_create");
  auto c = std::make_unique<Child>();
  c->pid = zygote_->spawn(theirs.get(), theirs.get(), err.get());
  ::fcntl(mine.get(), F_SETFL, ::fcntl(mine.get(), F_GETFL) | O_NONBLOCK);
  c->socket = mine.release();
  c->err = err.release();
  ++made_;
  return c;
}

void IsolatedIrReader::retire(std::unique_ptr<Child> c) const {
  if (c->pid > 0) {  // a child that failed a reading was reaped then (pid -1); -1 must never reach kill()
    ::kill(c->pid, SIGKILL);
    zygote_->reap(c->pid);
  }
  if (c->socket >= 0) ::close(c->socket);
  if (c->err >= 0) ::close(c->err);
}

// Sends one request and waits for its reply, within the wall-clock deadline. Throws input_error naming `name`
// for every way the child can fail it (and retires the child); the child is the caller's again on return.
std::string IsolatedIrReader::exchange(Child& c, const std::string& request, const std::string& name) const {
  const off_t err_at = ::lseek(c.err, 0, SEEK_END);
  const std::string out = encode_frame(request);
  size_t sent = 0;
  std::string reply;
  bool stopped = false, ended = false, garbled = false;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(limits_.wall_seconds);
  while (!ended) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      stopped = true;
      break;
    }
    pollfd p{c.socket, static_cast<short>(POLLIN | (sent < out.size() ? POLLOUT : 0)), 0};
    int ready = ::poll(&p, 1, static_cast<int>(left.count()));
    if (ready <= 0) continue;
    if (sent < out.size() && (p.revents & POLLOUT)) {
      ssize_t n = ::send(c.socket, out.data() + sent, out.size() - sent, MSG_NOSIGNAL);
      if (n > 0) sent += static_cast<size_t>(n);
      else if (n < 0 && errno != EAGAIN && errno != EINTR) ended = true;  // the child is gone
    }
    if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
      char buffer[65536];
      ssize_t n = ::recv(c.socket, buffer, sizeof buffer, 0);
      if (n > 0) {
        c.pending.append(buffer, static_cast<size_t>(n));
        bool whole = false;
        try {
          whole = decode_frame(c.pending, reply);
        } catch (const Error&) {  // not a frame of ours: the child is not to be trusted again
          garbled = ended = true;
        }
        if (whole) {
          ++c.readings;
          return reply;
        }
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        ended = true;
      }
    }
  }
  // The child ended or must: how it ended is the answer.
  ::kill(c.pid, SIGKILL);
  int status = zygote_->reap(c.pid);
  c.pid = -1;
  if (garbled) throw internal_error(name + ": the IR reader's reply is not one of ours");
  const std::string said = stderr_tail(c.err, err_at);
  if (stopped)
    throw ReadingStopped(name + ": LLVM took more than " + seconds_text(limits_.wall_seconds) + " s reading it; stopped");
  if (WIFSIGNALED(status)) {
    int sig = WTERMSIG(status);
    if (sig == SIGXCPU)
      throw input_error(name + ": reading it used more than its CPU budget (" + std::to_string(limits_.cpu_ms) +
                        " ms); stopped");
    if (ran_out_of_memory(said)) throw input_error(memory_refusal(name, limits_));
    throw input_error(name + ": LLVM crashed reading it (" + signal_name(sig) + ")" +
                      (said.empty() ? "" : ": " + last_line(said)));
  }
  if (ran_out_of_memory(said)) throw input_error(memory_refusal(name, limits_));
  throw input_error(name + ": LLVM failed reading it (exit " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) +
                    ")" + (said.empty() ? "" : ": " + last_line(said)));
}

IrUses IsolatedIrReader::read_file(const std::string& path) const { return read(archdb::read_file(path), path); }

IrUses IsolatedIrReader::read(const std::string& bytes, const std::string& name) const {
  guard_ir_before_reading(bytes, name, limits_.max_nesting);
  const std::string request = encode_ir_request(name, bytes);
  const std::string key = digest_hex(request);
  if (auto reply = pool_->cached(key)) return decode_ir_reply(*reply, name);

  std::unique_ptr<Child> c = pool_->take();
  std::string reply;
  try {
    reply = exchange(*c, request, name);
  } catch (const ReadingStopped&) {
    pool_->discard(std::move(c));
    throw;
  } catch (const Error& e) {
    // A child that failed a reading is gone (exchange reaped it); a refusal of this input is kept as its answer.
    if (e.code() == kExitBadInput) pool_->keep(key, encode_ir_reply_error(e.what()));
    pool_->discard(std::move(c));
    throw;
  }
  IrUses uses;
  try {
    uses = decode_ir_reply(reply, name);
  } catch (const Error& e) {
    if (e.code() != kExitBadInput) {  // garbled: that child is not to be trusted again
      pool_->discard(std::move(c));
      throw;
    }
    pool_->give_back(std::move(c));  // the child refused this input in its own words, and is well
    pool_->keep(key, reply);
    throw;
  }
  pool_->give_back(std::move(c));
  pool_->keep(key, reply);
  return uses;
}

}  // namespace archdb
