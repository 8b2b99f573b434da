// support/compiler_flavor.cpp — see compiler_flavor.h.
#include "support/compiler_flavor.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <regex>

#include "support/error.h"

extern char** environ;

namespace archdb {

std::optional<std::string> flavor_from_version_text(const std::string& text) {
  static const std::regex version(R"((?:clang|LLVM) version (\d+)\.)");
  std::smatch m;
  if (!std::regex_search(text, m, version)) return std::nullopt;
  return "llvm" + m[1].str();
}

std::string flavor_of_compiler(const std::string& compiler) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw internal_error(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[1]);
  std::string version_flag = "--version";
  char* argv[] = {const_cast<char*>(compiler.c_str()), version_flag.data(), nullptr};
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, compiler.c_str(), &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (rc != 0) {
    ::close(pipe_fds[0]);
    throw usage_error("cannot run compiler '" + compiler + "': " + std::strerror(rc));
  }
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw usage_error("compiler '" + compiler + "' --version failed");
  std::optional<std::string> flavor = flavor_from_version_text(out);
  if (!flavor) throw usage_error("compiler '" + compiler + "' --version names no clang or LLVM version");
  return *flavor;
}

}  // namespace archdb
