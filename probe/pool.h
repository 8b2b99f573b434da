// probe/pool.h — the parent side of the workers: as many forked workers as this process may use, each
// taking jobs one after another over a pipe; a worker LLVM kills is replaced. In the manner of
// llvm-exegesis's sub-process executor. The workers are forked by a zygote (zygote.h), which pools share.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "probe/job.h"
#include "probe/worker.h"
#include "support/zygote.h"
#include "support/cpus.h"

namespace archdb {

class WorkerPool {
 public:
  struct Callbacks {
    std::function<void(const Job&, const CompileReport&)> on_compiled;  // a compile item finished
    std::function<void(const Job&, const ResolveReport&)> on_resolved;  // a declaration resolved
    std::function<void(const Job&, const WorkerEnd&)> on_end;  // the job is over: done, or its worker died
    std::function<void()> on_tick;                              // now and then, for progress
  };

  // Workers are forked by `zygote`, which must outlive the pool's workers (a pool holds it).
  WorkerPool(int workers, std::shared_ptr<Zygote> zygote);
  ~WorkerPool();  // idle workers are told to stop and reaped
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Keeps `spares` extra workers forked and warmed by `warm_up` (a job whose results are dropped) while
  // work is under way, so a worker LLVM kills is replaced by one that has already paid its start-up.
  void keep_warm_spares(Job warm_up, int spares);

  void submit(Job job);                  // also from within callbacks
  void run(const Callbacks& callbacks);  // until no job is pending or running; idle workers stay for the next run
  // Runs several pools at once, each with its own callbacks, until none has work.
  static void run_together(const std::vector<std::pair<WorkerPool*, const Callbacks*>>& pools);
  bool busy() const;
  int workers() const { return workers_; }

 private:
  struct Worker;
  void spawn();
  void assign(Worker& w, Job job);
  void reap(Worker& w, const Callbacks& callbacks);
  void finish_dead_job(Worker& w, const Callbacks& callbacks, int status, bool exited);
  int working() const;
  void dispatch();
  void handle_line(Worker& w, const std::string& line, const Callbacks& callbacks);
  void service(const std::vector<short>& revents, const Callbacks& callbacks);

  int workers_;
  std::shared_ptr<Zygote> zygote_;
  std::deque<Job> pending_;
  std::optional<Job> warm_up_;
  int spares_ = 0;
  std::vector<std::unique_ptr<Worker>> live_;
};

}  // namespace archdb
