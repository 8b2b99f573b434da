// bench/timing.h — how the benchmarks time a piece of work: run it `repeat` times and keep the median and the 90th
// percentile of the wall-clock times, in milliseconds.
#pragma once

#include <algorithm>
#include <chrono>
#include <vector>

namespace archdb::bench {

struct Figures {
  double median_ms = 0, p90_ms = 0;
};

inline Figures summarize(std::vector<double> ms) {
  std::sort(ms.begin(), ms.end());
  return {ms[ms.size() / 2], ms[std::min(ms.size() - 1, ms.size() * 9 / 10)]};
}

template <class F>
Figures time_it(int repeat, F body) {
  std::vector<double> ms;
  for (int i = 0; i < repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    body();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return summarize(std::move(ms));
}

}  // namespace archdb::bench
