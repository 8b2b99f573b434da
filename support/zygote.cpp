// support/zygote.cpp — forking children from a process that stays small (see zygote.h). Requests and replies
// travel over a SOCK_SEQPACKET socket pair, a child's three descriptors with its spawn request.
#include "support/zygote.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "support/error.h"

namespace archdb {
namespace {

struct Request {
  char op = 0;  // 's': spawn (three descriptors attached), 'r': reap `pid`
  pid_t pid = 0;
};

struct Reply {
  long value = 0;  // spawn: the pid; reap: the wait status
  int error = 0;   // errno of the zygote's fork or waitpid, 0 on success
};

bool send_message(int socket, const void* data, size_t size, const int* fds, int nfds) {
  iovec io{const_cast<void*>(data), size};
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(3 * sizeof(int))] = {};
  if (nfds > 0) {
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(static_cast<size_t>(nfds) * sizeof(int));
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(static_cast<size_t>(nfds) * sizeof(int));
    std::memcpy(CMSG_DATA(c), fds, static_cast<size_t>(nfds) * sizeof(int));
  }
  for (;;) {
    ssize_t n = ::sendmsg(socket, &msg, MSG_NOSIGNAL);
    if (n >= 0) return static_cast<size_t>(n) == size;
    if (errno != EINTR) return false;
  }
}

// Returns the bytes received (0 at end of file, -1 on error); `fds` gets up to three descriptors.
ssize_t receive_message(int socket, void* data, size_t size, int* fds, int& nfds) {
  iovec io{data, size};
  msghdr msg{};
  msg.msg_iov = &io;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(3 * sizeof(int))] = {};
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  nfds = 0;
  ssize_t n;
  do n = ::recvmsg(socket, &msg, MSG_CMSG_CLOEXEC);
  while (n < 0 && errno == EINTR);
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); n > 0 && c; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    int count = static_cast<int>((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    for (int i = 0; i < count; ++i) {
      int fd;
      std::memcpy(&fd, CMSG_DATA(c) + static_cast<size_t>(i) * sizeof(int), sizeof fd);
      if (nfds < 3) fds[nfds++] = fd;
      else ::close(fd);
    }
  }
  return n;
}

[[noreturn]] void become_child(int in_fd, int out_fd, int stderr_fd, pid_t zygote, const Zygote::Body& body) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != zygote) ::_exit(1);
  ::dup2(in_fd, 0);
  ::dup2(stderr_fd, 2);
  int devnull = ::open("/dev/null", O_WRONLY);
  ::dup2(devnull, 1);
  int out = ::dup(out_fd);
  // Nothing but its own pipes stays open in a child, or other children's ends would never be seen.
  if (out > 3) ::close_range(3, static_cast<unsigned>(out - 1), 0);
  ::close_range(static_cast<unsigned>(out + 1), ~0U, 0);
  body(0, out);
  std::fflush(nullptr);
  ::_exit(0);
}

[[noreturn]] void serve(int socket, pid_t parent, const Zygote::Body& body) {
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(1);
  ::signal(SIGCHLD, SIG_DFL);  // children stay to be reaped on request
  const pid_t self = ::getpid();
  for (;;) {
    Request request;
    int fds[3], nfds = 0;
    ssize_t n = receive_message(socket, &request, sizeof request, fds, nfds);
    if (n <= 0) ::_exit(0);  // the parent is done with us
    Reply reply;
    if (request.op == 's' && nfds == 3) {
      pid_t pid = ::fork();
      if (pid == 0) {
        ::close(socket);
        become_child(fds[0], fds[1], fds[2], self, body);
      }
      reply.value = pid;
      reply.error = pid < 0 ? errno : 0;
    } else if (request.op == 'r') {
      int status = 0;
      pid_t got;
      do got = ::waitpid(request.pid, &status, 0);
      while (got < 0 && errno == EINTR);
      reply.value = status;
      reply.error = got < 0 ? errno : 0;
    } else {
      reply.error = EINVAL;
    }
    for (int i = 0; i < nfds; ++i) ::close(fds[i]);
    if (!send_message(socket, &reply, sizeof reply, nullptr, 0)) ::_exit(0);
  }
}

}  // namespace

Zygote::Zygote(Body body) {
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0)
    throw internal_error(std::string("socketpair: ") + std::strerror(errno));
  const pid_t parent = ::getpid();
  std::fflush(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) throw internal_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::close(pair[0]);
    // Only the socket stays open (at 3): the parent's other descriptors are not the zygote's to hold.
    if (pair[1] != 3) {
      ::dup2(pair[1], 3);
      ::close(pair[1]);
    }
    ::close_range(4, ~0U, 0);
    serve(3, parent, body);
  }
  ::close(pair[1]);
  pid_ = pid;
  socket_ = pair[0];
}

Zygote::~Zygote() {
  ::close(socket_);
  int status;
  while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
}

pid_t Zygote::spawn(int in_fd, int out_fd, int stderr_fd) {
  std::lock_guard<std::mutex> hold(mutex_);
  Request request;
  request.op = 's';
  int fds[3] = {in_fd, out_fd, stderr_fd};
  Reply reply;
  int none[3], nfds = 0;
  if (!send_message(socket_, &request, sizeof request, fds, 3) ||
      receive_message(socket_, &reply, sizeof reply, none, nfds) != static_cast<ssize_t>(sizeof reply))
    throw internal_error("the zygote is gone");
  if (reply.error != 0) throw internal_error(std::string("fork: ") + std::strerror(reply.error));
  return static_cast<pid_t>(reply.value);
}

int Zygote::reap(pid_t child) {
  std::lock_guard<std::mutex> hold(mutex_);
  Request request;
  request.op = 'r';
  request.pid = child;
  Reply reply;
  int none[3], nfds = 0;
  if (!send_message(socket_, &request, sizeof request, nullptr, 0) ||
      receive_message(socket_, &reply, sizeof reply, none, nfds) != static_cast<ssize_t>(sizeof reply))
    throw internal_error("the zygote is gone");
  if (reply.error != 0) throw internal_error(std::string("waitpid: ") + std::strerror(reply.error));
  return static_cast<int>(reply.value);
}

}  // namespace archdb
