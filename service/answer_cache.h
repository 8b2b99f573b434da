// service/answer_cache.h — rendered GET answers of the current snapshot, by path and query. A snapshot never
// changes, so an answer is good until the snapshot's ETag changes (then every answer is dropped at once);
// what is kept stays within a byte budget (bodies and keys), and an answer that would pass it is not kept.
// Only answers that carry the snapshot's own ETag are kept. Safe for concurrent use.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <optional>
#include <string>

#include "service/messages.h"

namespace archdb::service {

class AnswerCache {
 public:
  explicit AnswerCache(size_t budget_bytes) : budget_(budget_bytes) {}

  bool enabled() const { return budget_ > 0; }
  // The answer kept for `key` under the snapshot `etag`, if any.
  std::optional<Reply> find(const std::string& key, const std::string& etag) const;
  // Keeps `reply` for `key` if it is a 200 of snapshot `etag` and fits the budget.
  void keep(const std::string& key, const std::string& etag, const Reply& reply);
  size_t bytes() const;

 private:
  const size_t budget_;
  mutable std::mutex mutex_;
  std::map<std::string, Reply> answers_;
  std::string etag_;
  size_t bytes_ = 0;
};

}  // namespace archdb::service
