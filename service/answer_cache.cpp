// service/answer_cache.cpp — the service's answers kept per snapshot (see answer_cache.h).
#include "service/answer_cache.h"

namespace archdb::service {

std::optional<Reply> AnswerCache::find(const std::string& key, const std::string& etag) const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (etag_ != etag) return std::nullopt;
  auto it = answers_.find(key);
  if (it == answers_.end()) return std::nullopt;
  return it->second;
}

void AnswerCache::keep(const std::string& key, const std::string& etag, const Reply& reply) {
  if (!enabled() || reply.status != 200 || reply.etag != etag) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (etag_ != etag) {
    answers_.clear();
    bytes_ = 0;
    etag_ = etag;
  }
  size_t size = reply.body.size() + key.size();
  if (bytes_ + size <= budget_ && answers_.emplace(key, reply).second) bytes_ += size;
}

size_t AnswerCache::bytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return bytes_;
}

}  // namespace archdb::service
