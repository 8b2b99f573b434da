// support/cpus.cpp — the CPUs this process may use (see cpus.h).
#include "support/cpus.h"

#include <sched.h>

#include <cmath>
#include <fstream>
#include <string>

namespace archdb {
namespace {

int cgroup_v2_limit() {
  std::ifstream self("/proc/self/cgroup");
  std::string line, path;
  while (std::getline(self, line))
    if (line.rfind("0::", 0) == 0) path = line.substr(3);
  if (path.empty()) return 0;
  int best = 0;
  // Every level of the hierarchy may cap the quota; the tightest one applies.
  for (std::string p = path;; p = p.substr(0, p.rfind('/'))) {
    std::ifstream max("/sys/fs/cgroup" + p + "/cpu.max");
    std::string quota;
    long period = 0;
    if (max >> quota >> period && quota != "max" && period > 0) {
      int n = static_cast<int>(std::ceil(std::stod(quota) / static_cast<double>(period)));
      if (n > 0 && (best == 0 || n < best)) best = n;
    }
    if (p.empty() || p == "/") break;
  }
  return best;
}

int cgroup_v1_limit() {
  std::ifstream q("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"), p("/sys/fs/cgroup/cpu/cpu.cfs_period_us");
  long quota = 0, period = 0;
  if (q >> quota && p >> period && quota > 0 && period > 0)
    return static_cast<int>(std::ceil(static_cast<double>(quota) / static_cast<double>(period)));
  return 0;
}

}  // namespace

int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  int n = 0;
  if (sched_getaffinity(0, sizeof set, &set) == 0) n = CPU_COUNT(&set);
  if (n <= 0) n = 1;
  for (int limit : {cgroup_v2_limit(), cgroup_v1_limit()})
    if (limit > 0 && limit < n) n = limit;
  return n;
}

}  // namespace archdb
