// support/spawn.cpp — starting a program as a child and waiting for it (see spawn.h).
#include "support/spawn.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "support/error.h"
#include "support/text.h"

extern char** environ;

namespace archdb {
namespace {

void redirect(posix_spawn_file_actions_t& actions, int target, const ChildStream& stream, bool output) {
  if (stream.fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, stream.fd, target);
    return;
  }
  int flags = output ? O_WRONLY | O_CREAT | O_TRUNC : O_RDONLY;
  posix_spawn_file_actions_addopen(&actions, target, stream.path.c_str(), flags, 0644);
}

bool is_executable(const std::filesystem::path& p) {
  std::error_code ec;
  return std::filesystem::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
}

}  // namespace

std::string find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return is_executable(name) ? name : "";
  const char* path = std::getenv("PATH");
  for (const std::string& dir : split(path ? path : "", ':'))
    if (!dir.empty() && is_executable(std::filesystem::path(dir) / name)) return (std::filesystem::path(dir) / name).string();
  return "";
}

pid_t spawn_child(const std::vector<std::string>& argv, const ChildIo& io) {
  if (argv.empty()) throw internal_error("spawn_child: no program named");
  std::vector<std::string> copy = argv;
  std::vector<char*> args;
  for (auto& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  redirect(actions, 0, io.in, false);
  redirect(actions, 1, io.out, true);
  redirect(actions, 2, io.err, true);
  pid_t pid = -1;
  bool search = argv[0].find('/') == std::string::npos;
  int rc = (search ? posix_spawnp : posix_spawn)(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw internal_error("cannot run " + argv[0] + ": " + std::strerror(rc));
  return pid;
}

int wait_child(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int run_child(const std::vector<std::string>& argv, const ChildIo& io) { return wait_child(spawn_child(argv, io)); }

}  // namespace archdb
