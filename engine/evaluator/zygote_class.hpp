// Inside engine/evaluator only: the zygote, shared by zygote.cpp (its life, requests and
// scheduling) and calls.cpp (each call: the commands, the stop, the checks, the clock).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evaluator/job.hpp"
#include "files/clock.hpp"
#include "files/files.hpp"
#include "task/task.hpp"
#include "wire/options.hpp"
#include "wire/records.hpp"

namespace bench::detail {

using nlohmann::json;

using files::monotonic_seconds;

inline std::string fmt(const char* f, double x) {
  char b[64];
  std::snprintf(b, sizeof b, f, x);
  return b;
}

constexpr int kPings = 5;
// A call above the CPU-time bound is not timed; this many refuse the kernel (calls.cpp).
constexpr int kCallsOverCpuBound = 2;
// Inputs for one call more than asked: the one a call over the bound was not timed in.
constexpr int kSpareCalls = kCallsOverCpuBound - 1;


class Zygote {
 public:
  Zygote(int sock, pid_t engine) : sock_(sock), engine_(engine) {}
  [[noreturn]] void run();

 private:
  json handle(const json& req);
  Task& task_for(const json& problem, int calls, int threads);
  void run_batch(std::vector<Job>& jobs, const ResolvedOptions& opts, bool reference, int parallel);
  void spawn(Job& job, const ResolvedOptions& opts, bool reference, std::vector<Job>& all);
  void read_from(Job& job, const ResolvedOptions& opts);
  void send(Job& job, char cmd);
  void mark_cpu(Job& job);
  bool another_call(const Job& job, const ResolvedOptions& opts) const;
  void call_returned(Job& job, const DoneRecord& rec, const ResolvedOptions& opts);
  void take_turn(Job& job, double timeout);
  bool stop_child(Job& job);
  void reap();
  void wait_for(Job& job);
  void finish(Job& job, const ResolvedOptions& opts);
  void end_stopped();
  void kill_stopped();
  void hold_compiles(std::vector<Job>& jobs);
  void release(Job& job);
  size_t share_identical_code(std::vector<Job>& jobs, std::map<std::string, size_t>& first_with,
                              const ResolvedOptions& opts);
  [[noreturn]] void exit_now();

  int sock_;
  pid_t engine_;
  std::map<std::string, std::unique_ptr<Task>> tasks_;
  std::deque<std::string> task_order_;
  Task* task_ = nullptr;
  double peak_gflops_ = 0, peak_gbps_ = 0;
  std::vector<Job*> live_;
  std::vector<pid_t> stopped_;  // finished kernels' processes, stopped, ended between pools
  std::vector<pid_t> dying_;    // and killed, their ends overlapping compiles, not yet reaped
  uintptr_t stack_lo_ = 0, stack_hi_ = 0;
  files::OwnedDir root_;  // kernels' working directories live below it
};

}  // namespace bench::detail
