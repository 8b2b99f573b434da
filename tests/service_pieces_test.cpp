// tests/service_pieces_test.cpp — the service's request parameters and its answer cache, on their own (the
// endpoints that use them are tested against a real server in service_test.cpp).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "service/answer_cache.h"
#include "service/compute_slots.h"
#include "service/params.h"

namespace archdb::service {
namespace {

std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const HttpError& e) {
    return std::to_string(e.status) + " " + e.message;
  }
  return "accepted";
}

TEST(Params, ReadsScalarsAndListsAndRefusesWhatTheEndpointDoesNotTake) {
  Params p("flavor=llvm22&targets=gfx90a,%20gfx942&targets=gfx1100&q=a+b%2Bc");
  EXPECT_EQ(p.get_or("flavor", ""), "llvm22");
  EXPECT_EQ(p.get_or("q", ""), "a b+c");
  EXPECT_EQ(p.list("targets"), (std::vector<std::string>{"gfx90a", "gfx942", "gfx1100"}));
  EXPECT_FALSE(p.get("absent"));
  EXPECT_EQ(refusal([&] { p.allow({"flavor", "q"}, {"targets"}); }), "accepted");
  EXPECT_EQ(refusal([&] { p.allow({"flavor"}, {"targets"}); }),
            "400 unknown parameter 'q' (this endpoint takes: flavor, targets)");
  EXPECT_EQ(refusal([] { Params("a=1").allow({}, {}); }), "400 unknown parameter 'a' (this endpoint takes none)");
  EXPECT_EQ(refusal([] { Params("flavor=a&flavor=b").allow({"flavor"}, {}); }),
            "400 parameter 'flavor' given more than once");
  EXPECT_EQ(refusal([] { Params("q=%zz"); }), "400 malformed percent-encoding in the query string");
  EXPECT_EQ(refusal([] { Params("limit=12x").number("limit", 5); }),
            "400 parameter 'limit' must be a non-negative integer, not '12x'");
  EXPECT_EQ(Params("limit=12").number("limit", 5), 12u);
  EXPECT_EQ(Params("").number("limit", 5), 5u);
}

TEST(Params, AFeaturedTargetKeepsItsOwnCommas) {
  Params p("targets=gfx1100:%2Bwavefrontsize64,-wavefrontsize32,fiji");  // + is a space in a query
  EXPECT_EQ(p.targets("targets"),
            (std::vector<std::string>{"gfx1100:+wavefrontsize64,-wavefrontsize32", "gfx803"}));
}

Reply answer(const std::string& body, const std::string& etag, int status = 200) {
  Reply r;
  r.status = status;
  r.body = body;
  r.etag = etag;
  return r;
}

TEST(AnswerCache, KeepsTheSnapshotsAnswersWithinItsBudgetAndDropsThemWhenTheSnapshotChanges) {
  AnswerCache cache(20);
  cache.keep("/v1/a?", "e1", answer("0123456789", "e1"));  // 6 + 10 bytes
  ASSERT_TRUE(cache.find("/v1/a?", "e1"));
  EXPECT_EQ(cache.find("/v1/a?", "e1")->body, "0123456789");
  EXPECT_FALSE(cache.find("/v1/a?", "e2"));                  // another snapshot's question
  cache.keep("/v1/b?", "e1", answer("0123456789", "e1"));  // would pass the budget: not kept
  EXPECT_FALSE(cache.find("/v1/b?", "e1"));
  EXPECT_EQ(cache.bytes(), 16u);
  cache.keep("/v1/c?", "e1", answer("x", "e1", 404));      // only 200s
  cache.keep("/v1/d?", "e1", answer("x", "e0"));           // only answers of the snapshot asked
  EXPECT_FALSE(cache.find("/v1/c?", "e1"));
  EXPECT_FALSE(cache.find("/v1/d?", "e1"));
  cache.keep("/v1/b?", "e2", answer("0123456789", "e2"));  // a new snapshot: the old answers go
  EXPECT_FALSE(cache.find("/v1/a?", "e1"));
  EXPECT_TRUE(cache.find("/v1/b?", "e2"));
  EXPECT_EQ(cache.bytes(), 16u);
  AnswerCache none(0);
  none.keep("/v1/a?", "e1", answer("x", "e1"));
  EXPECT_FALSE(none.enabled());
  EXPECT_FALSE(none.find("/v1/a?", "e1"));
}

// Waits (up to 2 s) until `done` holds.
bool eventually(const std::function<bool()>& done) {
  for (int i = 0; i < 200; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

TEST(ComputeSlots, AClientPastItsShareIsRefusedAtOnce) {
  ComputeSlots slots(2, 2);
  auto first = slots.acquire("a");
  auto second = slots.acquire("a");  // alone, a client may use every slot
  EXPECT_EQ(refusal([&] { slots.acquire("a"); }).rfind("429 this client has 2 IR checks running or waiting", 0), 0u);
  auto other = std::async(std::launch::async, [&] { return slots.acquire("b"); });  // waits: both slots are a's
  EXPECT_EQ(other.wait_for(std::chrono::milliseconds(100)), std::future_status::timeout);
  { auto done = std::move(first); }
  EXPECT_EQ(other.wait_for(std::chrono::seconds(2)), std::future_status::ready);
}

TEST(ComputeSlots, AFreedSlotGoesToTheClientHoldingFewestAndNoneHoldsAllWhileOthersWait) {
  ComputeSlots slots(2, 8);
  std::optional<ComputeSlots::Slot> a1(slots.acquire("heavy"));
  std::atomic<int> heavy_running{1}, light_running{0};
  std::vector<ComputeSlots::Slot> held;
  std::mutex held_mutex;
  auto take = [&](const std::string& client, std::atomic<int>& running) {
    return std::async(std::launch::async, [&, client] {
      auto s = slots.acquire(client);
      ++running;
      std::lock_guard<std::mutex> lock(held_mutex);
      held.push_back(std::move(s));
    });
  };
  // Light waits first; heavy asks for more after it: the free slot is light's, not heavy's second.
  auto light = take("light", light_running);
  ASSERT_TRUE(eventually([&] { return light_running == 1; })) << "one slot was free";
  auto heavy2 = take("heavy", heavy_running);
  auto light2 = take("light", light_running);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(heavy_running, 1);
  EXPECT_EQ(light_running, 1);
  a1.reset();  // heavy's slot frees: light holds one, heavy none, both wait — heavy holds fewest
  ASSERT_TRUE(eventually([&] { return heavy_running == 2; }));
  EXPECT_EQ(light_running, 1) << "light2 waits: light already holds a slot and heavy held none";
  {
    std::lock_guard<std::mutex> lock(held_mutex);
    held.clear();  // everything frees
  }
  ASSERT_TRUE(eventually([&] { return light_running == 2; }));
  light.get();
  heavy2.get();
  light2.get();
}

}  // namespace
}  // namespace archdb::service
