// service/compute_slots.cpp — the IR readings' slots, shared fairly between clients (see compute_slots.h).
#include "service/compute_slots.h"

#include <algorithm>

#include "service/messages.h"

namespace archdb::service {

ComputeSlots::ComputeSlots(unsigned slots, unsigned per_client)
    : slots_(std::max(1u, slots)), per_client_(std::max(1u, per_client)), free_(slots_) {}

// Whether the waiter `ticket` of `client` is the one a free slot goes to now: a client holds all slots but one
// only while nobody else waits; among the waiters whose client may take one more, the client holding the
// fewest, then the earliest.
bool ComputeSlots::may_run(const std::string& client, unsigned long ticket) const {
  if (free_ == 0) return false;
  bool others_wait = std::any_of(waiting_.begin(), waiting_.end(), [&](const auto& w) { return w.second != client; });
  const unsigned cap = others_wait && slots_ > 1 ? slots_ - 1 : slots_;
  const std::pair<unsigned long, std::string>* best = nullptr;
  unsigned best_running = 0;
  for (const auto& w : waiting_) {
    unsigned running = clients_.at(w.second).running;
    if (running >= cap) continue;
    if (!best || running < best_running) {
      best = &w;
      best_running = running;
    }
  }
  return best && best->first == ticket;
}

ComputeSlots::Slot ComputeSlots::acquire(const std::string& client) {
  std::unique_lock<std::mutex> lock(mutex_);
  Client& c = clients_[client];
  if (c.running + c.waiting >= per_client_)
    fail(429, "this client has " + std::to_string(c.running + c.waiting) + " IR checks running or waiting, the most one "
              "client may (serve --ir-per-client " + std::to_string(per_client_) + "); send the next when one is answered");
  const unsigned long ticket = next_ticket_++;
  ++c.waiting;
  waiting_.emplace_back(ticket, client);
  cv_.wait(lock, [&] { return may_run(client, ticket); });
  waiting_.erase(std::find_if(waiting_.begin(), waiting_.end(), [&](const auto& w) { return w.first == ticket; }));
  --c.waiting;
  ++c.running;
  --free_;
  cv_.notify_all();  // another waiter may be next
  return Slot(*this, client);
}

void ComputeSlots::release(const std::string& client) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++free_;
    Client& c = clients_[client];
    --c.running;
    if (c.running == 0 && c.waiting == 0) clients_.erase(client);
  }
  cv_.notify_all();
}

}  // namespace archdb::service
