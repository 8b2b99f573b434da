// support/zygote.h — a process children are forked from: forked once, early (the probe: as soon as its target
// machines are built, before its heap grows with a run's results; the IR reader: before the service starts a
// thread), it forks a child on request, which runs the body the zygote was made with, and reaps them.
//
// Why: a fork costs in proportion to the forking process's memory (its page tables are copied) and, while
// the child lives, every page the parent writes is copied first. A census restarts thousands of workers (a
// crash ends one); forked from the parent, that cost fell on the parent, half its CPU time in the kernel.
// The zygote does nothing between forks, so nothing of its is copied, and the parent forks no more. And a
// fork from a process with threads copies whatever locks those threads held: the zygote has one thread.
#pragma once

#include <sys/types.h>

#include <functional>
#include <mutex>

namespace archdb {

class Zygote {
 public:
  // What a child runs, in the zygote's copy of this process's memory as it was when the zygote was made:
  // it reads from `in_fd` (its standard input), writes to `out_fd`; its standard error is the one given to
  // spawn(). Nothing else is open in it. The child exits 0 when the body returns.
  using Body = std::function<void(int in_fd, int out_fd)>;
  explicit Zygote(Body body);
  ~Zygote();  // its children must have been reaped; the zygote then exits
  Zygote(const Zygote&) = delete;
  Zygote& operator=(const Zygote&) = delete;

  // A child reading `in_fd`, writing `out_fd` and its stderr to `stderr_fd` (each the child's own copy; the
  // caller keeps or closes its own). Returns the child's pid. Thread-safe.
  pid_t spawn(int in_fd, int out_fd, int stderr_fd);
  // Waits for a child of this zygote to end; its wait status. Thread-safe; a child that never ends holds
  // every other caller up, so kill it first when in doubt.
  int reap(pid_t child);

 private:
  pid_t pid_ = -1;
  int socket_ = -1;
  std::mutex mutex_;  // one request and its reply at a time on the socket
};

}  // namespace archdb
