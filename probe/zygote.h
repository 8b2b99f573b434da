// probe/zygote.h — the process the workers are forked from: forked once from the parent as soon as the
// target machines are built, before the parent's heap grows with a run's results, it forks every worker
// on request and reaps them.
//
// Why: a fork costs in proportion to the forking process's memory (its page tables are copied) and, while
// the child lives, every page the parent writes is copied first. A census restarts thousands of workers (a
// crash ends one); forked from the parent, that cost fell on the parent, half its CPU time in the kernel.
// The zygote does nothing between forks, so nothing of its is copied, and the parent forks no more.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>

#include "probe/worker.h"

namespace archdb {

class Zygote {
 public:
  // `resources` are used by the workers in the zygote's copy of this process's memory.
  Zygote(const std::map<std::string, TargetResources>& resources, const std::string& flavor_label);
  ~Zygote();  // its workers must have been reaped; the zygote then exits
  Zygote(const Zygote&) = delete;
  Zygote& operator=(const Zygote&) = delete;

  // A worker reading jobs from `jobs_fd`, writing reports to `reports_fd` and its stderr to `stderr_fd`
  // (each the worker's own copy; the caller keeps or closes its own). Returns the worker's pid.
  pid_t spawn(int jobs_fd, int reports_fd, int stderr_fd);
  // Waits for a worker of this zygote to end; its wait status.
  int reap(pid_t worker);

 private:
  pid_t pid_ = -1;
  int socket_ = -1;
};

}  // namespace archdb
