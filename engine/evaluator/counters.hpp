// Inside engine/evaluator only: a kernel's hardware and software counters, opened by the
// evaluation process on the kernel's process (perf_event_open; the kernel's process never
// holds them, cannot open its own, and closes every inherited descriptor at its start).
// Opened before its first call with inheritance, so the OpenMP threads it starts later
// are counted too (a read sums the threads alive and ended).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace bench::detail {

class Counters {
 public:
  // Opens what this machine and its permissions allow on `pid`; what it cannot, it names
  // with the reason (no hardware PMU, perf_event_paranoid, an event this CPU lacks).
  explicit Counters(pid_t pid);
  ~Counters();
  Counters(const Counters&) = delete;
  Counters& operator=(const Counters&) = delete;

  // The counts so far, scaled where the PMU multiplexed them; one per open counter.
  std::vector<double> read() const;
  // Where the timed calls start: read() now, subtracted from the end's.
  void mark_start() { start_ = read(); }
  // {"counters": per call over `calls` since mark_start(), "counters_unavailable": {name: why}}.
  nlohmann::json record(int calls) const;

  const std::vector<std::string>& names() const { return names_; }
  const std::map<std::string, std::string>& unavailable() const { return unavailable_; }

 private:
  std::vector<std::string> names_;
  std::vector<int> fds_;
  std::vector<double> scale_;  // task-clock is counted in ns and reported in ms
  std::vector<double> start_;
  std::map<std::string, std::string> unavailable_;
};

}  // namespace bench::detail
