// support/spawn.h — starting another program as a child process (posix_spawn): where its standard streams go,
// and waiting for it. The one way archdb's tests, benchmarks and tools start a program; the forked workers
// that run LLVM on untrusted input are the zygote's (support/zygote.h), not this.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace archdb {

// Where a child's standard stream goes: a file (created or truncated for output), or a descriptor of ours.
struct ChildStream {
  std::string path = "/dev/null";
  int fd = -1;  // when >= 0, used instead of `path`; ours stays open
  static ChildStream file(std::string p) { return {std::move(p), -1}; }
  static ChildStream descriptor(int d) { return {"", d}; }
};

struct ChildIo {
  ChildStream in = {};
  ChildStream out = {};
  ChildStream err = {};
};

// Starts argv[0] (a path, or a name without '/' looked up in PATH) with this process's environment. Throws internal_error naming
// the program when it cannot be started.
pid_t spawn_child(const std::vector<std::string>& argv, const ChildIo& io = {});

// Waits for the child to end (retrying on EINTR): its exit code, or 128 + the signal that ended it.
int wait_child(pid_t pid);

// The program a name stands for: itself if it holds a '/', else the first executable of that name in PATH; empty
// when there is none.
std::string find_program(const std::string& name);

// spawn_child then wait_child.
int run_child(const std::vector<std::string>& argv, const ChildIo& io = {});

}  // namespace archdb
