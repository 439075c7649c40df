// The cores this process may run on: its CPU affinity (taskset, a cgroup's cpuset, a batch
// system's allocation), not the machine's count. Pools sized by the machine's count run
// many threads per core under such a limit; an OpenMP pool of 16 spinning on two cores made
// a decode step several times slower.
#pragma once

#include <sched.h>

#include <algorithm>
#include <thread>

namespace files {

inline int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace files
