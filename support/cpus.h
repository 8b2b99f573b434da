// support/cpus.h — how many CPUs this process may use: its affinity mask, capped by a cgroup CPU quota (v2's
// cpu.max at every level of the hierarchy, or v1's cfs quota). Not the host's core count: a container given
// 2 CPUs of a 64-core host gets 2. The one answer for the probe's workers and the service's threads.
#pragma once

namespace archdb {

// At least 1.
int usable_cpus();

}  // namespace archdb
