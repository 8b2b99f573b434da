// probe/pool.cpp — forking, feeding, watching and reaping workers (see pool.h).
#include "probe/pool.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <algorithm>
#include <optional>

#include "support/error.h"

namespace archdb {
namespace {

using Clock = std::chrono::steady_clock;

// Grace the parent allows beyond the worker's own alarm before it kills the worker itself.
constexpr int kWatchdogGraceS = 15;

// The last part of what a worker wrote to stderr (its stderr is a memfd it shares with us).
std::string stderr_tail(int fd) {
  off_t size = ::lseek(fd, 0, SEEK_END);
  off_t from = size > 8192 ? size - 8192 : 0;
  std::string out(static_cast<size_t>(size - from), '\0');
  ssize_t n = ::pread(fd, out.data(), out.size(), from);
  out.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return out;
}

bool write_all(int fd, const std::string& s) {
  const char* p = s.data();
  size_t left = s.size();
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

}  // namespace

struct WorkerPool::Worker {
  pid_t pid = -1;
  int in_fd = -1;   // we write jobs
  int out_fd = -1;  // we read reports
  int err_fd = -1;  // its stderr
  std::optional<Job> job;
  bool warming = false;  // its job is the warm-up: nobody waits for it
  bool used = false;     // it has run a job other than the warm-up
  bool dying = false;    // said its last words (or retires); takes no more jobs
  std::string buffer;
  Clock::time_point last_activity;
  bool watchdog_killed = false;
  WorkerEnd end;  // last words about the current job
  bool has_last_words = false;  // `end` holds what the worker said of how it ended
};

WorkerPool::WorkerPool(int workers, std::shared_ptr<Zygote> zygote)
    : workers_(workers > 0 ? workers : 1), zygote_(std::move(zygote)) {
  // A worker may be gone when we hand it a job; we learn that from its end-of-file, not from SIGPIPE.
  ::signal(SIGPIPE, SIG_IGN);
}

WorkerPool::~WorkerPool() {
  for (auto& w : live_) {
    ::close(w->in_fd);  // an idle worker reads end-of-file and exits
    if (w->job) ::kill(w->pid, SIGKILL);
  }
  for (auto& w : live_) {
    try {
      zygote_->reap(w->pid);
    } catch (const Error&) {
      // The zygote is gone, and its workers with it (they die with their parent).
    }
    ::close(w->out_fd);
    ::close(w->err_fd);
  }
}

void WorkerPool::submit(Job job) { pending_.push_back(std::move(job)); }

void WorkerPool::keep_warm_spares(Job warm_up, int spares) {
  warm_up_ = std::move(warm_up);
  spares_ = spares;
}

void WorkerPool::spawn() {
  int to_child[2], from_child[2];
  if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0)
    throw internal_error(std::string("pipe: ") + std::strerror(errno));
  int err_fd = ::memfd_create("archdb-worker-stderr", MFD_CLOEXEC);
  if (err_fd < 0) throw internal_error(std::string("memfd_create: ") + std::strerror(errno));
  // Jobs arrive on its stdin; LLVM's and the C library's complaints land in the memfd.
  pid_t pid = zygote_->spawn(to_child[0], from_child[1], err_fd);
  ::close(to_child[0]);
  ::close(from_child[1]);
  auto w = std::make_unique<Worker>();
  w->pid = pid;
  w->in_fd = to_child[1];
  w->out_fd = from_child[0];
  w->err_fd = err_fd;
  w->last_activity = Clock::now();
  live_.push_back(std::move(w));
}

void WorkerPool::assign(Worker& w, Job job) {
  w.warming = false;
  w.end = WorkerEnd{};
  w.has_last_words = false;
  w.watchdog_killed = false;
  w.last_activity = Clock::now();
  std::string line = encode_job(job);
  w.used = true;
  w.job = std::move(job);
  // A worker that retired between jobs shows as a broken pipe here; its end-of-file gives the job back.
  write_all(w.in_fd, line);
}

void WorkerPool::finish_dead_job(Worker& w, const Callbacks& callbacks, int status, bool exited) {
  if (w.job && w.warming) w.job.reset();  // a spare that died warming up: nothing was asked of it
  if (w.job) {
    WorkerEnd end = w.end;
    if (w.watchdog_killed) {
      end.how = EndKind::kTimeout;
      end.budget = w.job->timeout_s;
    } else if (!w.has_last_words && exited) {
      if (WIFSIGNALED(status)) {
        end.how = EndKind::kSignal;
        const char* abbrev = sigabbrev_np(WTERMSIG(status));
        end.message = std::string("SIG") + (abbrev ? abbrev : "?");
      } else {
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        // Exit 0 with a job in hand: the worker retired before it saw the job, which it never started.
        end.how = code == 0 ? EndKind::kRetired : EndKind::kExit;
        end.message = "worker exited with status " + std::to_string(code);
      }
    } else if (!w.has_last_words) {
      end.how = EndKind::kExit;
    }
    // LLVM's assertions go to stderr before the abort.
    std::string err = stderr_tail(w.err_fd);
    size_t a = err.rfind("Assertion `");
    if (a != std::string::npos) {
      size_t e = err.find('\n', a);
      end.message = err.substr(a, e == std::string::npos ? std::string::npos : e - a);
    }
    Job job = std::move(*w.job);
    w.job.reset();
    if (end.how == EndKind::kRetired) {
      pending_.push_front(std::move(job));
    } else {
      callbacks.on_end(job, end);
    }
  }
}

void WorkerPool::reap(Worker& w, const Callbacks& callbacks) {
  int status = zygote_->reap(w.pid);
  ::close(w.in_fd);
  ::close(w.out_fd);
  finish_dead_job(w, callbacks, status, true);
  ::close(w.err_fd);
}

int WorkerPool::working() const {
  int n = 0;
  for (auto& w : live_) n += w->job && !w->warming;
  return n;
}

bool WorkerPool::busy() const { return !pending_.empty() || working() > 0; }

void WorkerPool::dispatch() {
  // Hand out work: idle workers first (they are warm), then new ones up to the limit.
  for (auto& w : live_) {
    if (pending_.empty() || working() >= workers_) break;
    if (w->job || w->dying) continue;
    if (pending_.front().retire_after && w->used) {
      // A job that must start from the zygote's state: this worker has a history; it retires (it reads the end
      // of its input and exits) and a fresh one takes the job.
      ::close(w->in_fd);
      w->in_fd = -1;
      w->dying = true;
      continue;
    }
    Job job = std::move(pending_.front());
    pending_.pop_front();
    assign(*w, std::move(job));
  }
  auto alive = [&] {
    int n = 0;
    for (auto& w : live_) n += !w->dying;
    return n;
  };
  while (!pending_.empty() && alive() < workers_) {
    spawn();
    Job job = std::move(pending_.front());
    pending_.pop_front();
    assign(*live_.back(), std::move(job));
  }
  if (warm_up_ && !pending_.empty()) {
    int ready = 0;
    for (auto& w : live_) ready += (!w->job && !w->dying) || w->warming;
    while (ready < spares_ && alive() < workers_ + spares_) {
      spawn();
      assign(*live_.back(), *warm_up_);
      live_.back()->warming = true;
      live_.back()->used = false;
      ++ready;
    }
  }
}

void WorkerPool::handle_line(Worker& w, const std::string& line, const Callbacks& callbacks) {
  std::optional<Report> report = decode_report(line);
  if (!report) return;  // a torn last word; the exit status still tells
  if (!w.job) return;
  if (w.warming) {
    if (std::holds_alternative<JobDone>(*report)) {
      w.job.reset();
      w.warming = false;
    }
    return;
  }
  if (auto* compiled = std::get_if<CompileReport>(&*report)) {
    if (callbacks.on_compiled) callbacks.on_compiled(*w.job, *compiled);
  } else if (auto* resolved = std::get_if<ResolveReport>(&*report)) {
    if (callbacks.on_resolved) callbacks.on_resolved(*w.job, *resolved);
  } else if (std::holds_alternative<JobDone>(*report)) {
    WorkerEnd end = w.end;
    end.how = EndKind::kCompleted;
    Job job = std::move(*w.job);
    w.job.reset();
    w.dying = job.retire_after;  // it exits after such a job
    callbacks.on_end(job, end);
  } else if (auto* words = std::get_if<LastWords>(&*report)) {
    // Its last words say all there is: hand the job back now rather than after the process is torn
    // down, which takes milliseconds for a process of LLVM's size.
    w.end.how = words->how;
    w.end.function = words->function;
    w.end.pass = words->pass;
    w.end.message = words->message;
    w.end.budget = words->budget;
    w.has_last_words = true;
    ::kill(w.pid, SIGKILL);
    w.dying = true;
    finish_dead_job(w, callbacks, 0, false);
  } else if (auto* error = std::get_if<JobError>(&*report)) {
    w.end.how = EndKind::kJobError;
    w.end.message = error->message;
    w.has_last_words = true;
  } else if (auto* unattributed = std::get_if<UnattributedError>(&*report)) {
    w.end.unattributed_error = unattributed->message;
  }
}

void WorkerPool::service(const std::vector<short>& revents, const Callbacks& callbacks) {
  auto now = Clock::now();
  std::vector<Worker*> gone;
  for (size_t i = 0; i < revents.size() && i < live_.size(); ++i) {
    Worker& w = *live_[i];
    bool eof = false;
    if (revents[i] & (POLLIN | POLLHUP | POLLERR)) {
      char buf[65536];
      ssize_t got = ::read(w.out_fd, buf, sizeof buf);
      if (got > 0) {
        w.buffer.append(buf, static_cast<size_t>(got));
        w.last_activity = now;
        size_t nl;
        while ((nl = w.buffer.find('\n')) != std::string::npos) {
          std::string line = w.buffer.substr(0, nl);
          w.buffer.erase(0, nl + 1);
          handle_line(w, line, callbacks);
        }
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        eof = true;
      }
    }
    if (!eof && w.job && !w.watchdog_killed &&
        now - w.last_activity > std::chrono::seconds(w.job->timeout_s + kWatchdogGraceS)) {
      ::kill(w.pid, SIGKILL);
      w.watchdog_killed = true;
    }
    if (eof) gone.push_back(&w);
  }
  for (Worker* w : gone) {
    auto it = std::find_if(live_.begin(), live_.end(), [&](const auto& p) { return p.get() == w; });
    std::unique_ptr<Worker> dead = std::move(*it);
    live_.erase(it);
    reap(*dead, callbacks);
  }
}

void WorkerPool::run(const Callbacks& callbacks) { run_together({{this, &callbacks}}); }

void WorkerPool::run_together(const std::vector<std::pair<WorkerPool*, const Callbacks*>>& pools) {
  auto any_busy = [&] {
    for (auto& [pool, cb] : pools)
      if (pool->busy()) return true;
    return false;
  };
  auto last_tick = Clock::now();
  auto tick = [&] {
    for (auto& [pool, cb] : pools)
      if (cb->on_tick) cb->on_tick();
  };
  while (any_busy()) {
    std::vector<pollfd> fds;
    std::vector<size_t> first;  // index in fds of each pool's first worker
    for (auto& [pool, cb] : pools) {
      pool->dispatch();
      first.push_back(fds.size());
      for (auto& w : pool->live_) fds.push_back({w->out_fd, POLLIN, 0});
    }
    int n = ::poll(fds.data(), fds.size(), 100);
    if (n < 0 && errno != EINTR) throw internal_error(std::string("poll: ") + std::strerror(errno));
    for (size_t p = 0; p < pools.size(); ++p) {
      size_t end = p + 1 < pools.size() ? first[p + 1] : fds.size();
      std::vector<short> revents;
      for (size_t i = first[p]; i < end; ++i) revents.push_back(n > 0 ? fds[i].revents : 0);
      pools[p].first->service(revents, *pools[p].second);
    }
    if (Clock::now() - last_tick > std::chrono::milliseconds(100)) {
      tick();
      last_tick = Clock::now();
    }
  }
  tick();
}

}  // namespace archdb
