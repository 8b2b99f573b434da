// service/compute_slots.h — who may read IR now: the service's IR readings (LLVM, in isolated children) share a
// few slots, one per CPU, fairly between clients. A client (its address) has at most `per_client` IR checks
// running or waiting; one more is refused at once (HTTP 429), so no client can queue without bound. While
// another client waits, no client holds more than all slots but one, and a freed slot goes to the waiting
// client holding the fewest (the earliest of those): a client sending heavy kernels holds back its own checks,
// not everyone's.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <map>
#include <mutex>
#include <string>

namespace archdb::service {

class ComputeSlots {
 public:
  ComputeSlots(unsigned slots, unsigned per_client);

  // A slot held until destroyed.
  class Slot {
   public:
    Slot(ComputeSlots& owner, std::string client) : owner_(&owner), client_(std::move(client)) {}
    ~Slot() { if (owner_) owner_->release(client_); }
    Slot(Slot&& other) noexcept : owner_(other.owner_), client_(std::move(other.client_)) { other.owner_ = nullptr; }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    Slot& operator=(Slot&&) = delete;

   private:
    ComputeSlots* owner_;
    std::string client_;
  };

  // Waits for a slot for `client`; throws HttpError 429 at once when the client already has `per_client` IR
  // checks running or waiting.
  Slot acquire(const std::string& client);

  unsigned slots() const { return slots_; }
  unsigned per_client() const { return per_client_; }

 private:
  struct Client {
    unsigned running = 0;
    unsigned waiting = 0;
  };
  bool may_run(const std::string& client, unsigned long ticket) const;
  void release(const std::string& client);

  const unsigned slots_;
  const unsigned per_client_;
  std::mutex mutex_;
  std::condition_variable cv_;
  unsigned free_;
  std::map<std::string, Client> clients_;
  std::deque<std::pair<unsigned long, std::string>> waiting_;  // (ticket, client), arrival order
  unsigned long next_ticket_ = 0;
};

}  // namespace archdb::service
