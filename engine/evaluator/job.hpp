// Inside engine/evaluator only: what the zygote knows of one kernel's evaluation,
// from its fork to its verdict (the zygote fills it in; verdict.cpp reads it).
#pragma once

#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evaluator/counters.hpp"
#include "kernel_child/child.hpp"
#include "task/task.hpp"

namespace bench::detail {

using nlohmann::json;

struct Job {
  size_t index = 0;
  std::string source;
  pid_t pid = -1;
  int from = -1, to = -1;
  std::string workdir;
  std::unique_ptr<Stage> stage;
  // paused: stopped and checked between two calls, waiting for its next turn (the
  // kernels of a pool take turns, one call each).
  enum State { pending, compiling, ready, running, paused, finished } state = pending;
  double deadline = 0;                // moved on while paused: only its own turns count
  double paused_at = 0;
  double run_start = 0, run_end = 0;  // the zygote's clock: first command, child gone
  double compile_start = 0, compile_end = 0;  // and: forked, compile report read
  // A compile held stopped while a pool runs: since when (0: not held), and each hold's span.
  double held_at = 0;
  std::vector<std::pair<double, double>> holds;
  bool in_pool = false;  // ready when its pool began to run (one compiled during it waits for the next)
  std::string inbuf;
  bool eof = false, exited = false;
  int wstatus = 0;
  rusage ru{};
  std::optional<json> compiled;
  std::optional<FaultRecord> fault;
  // The calls: pings first (the round trip of a command and its answer), then the
  // calls, each stopped, checked and timed by the zygote.
  char awaiting = 0;        // kPing or kCall while a command is out
  double sent_at = 0;       // when it went out
  int pings = 0, call = 0;  // answered pings; calls made
  double rtt = 1e300;       // the fastest round trip
  uint64_t secret = 0;      // draws the points checked in "paper" mode (drawn after the fork)
  clockid_t cpu_clock{};    // the kernel's process's CPU clock, read by the zygote
  bool has_cpu_clock = false;
  double cpu_at_start = 0, wall_at_start = 0;  // when the current call was started
  std::vector<double> times;  // timed calls, as accepted
  std::vector<double> elapsed;  // the same calls by the zygote's clock (command to answer)
  std::vector<double> own_times;  // and by the child's (the kernel's to forge)
  std::vector<double> call_starts;  // when each timed call's command went out (zygote's clock)
  std::vector<double> busy;       // every call's CPU time over its window: threads at work
  int calls_over_cpu_bound = 0;   // calls not timed: their CPU time was above the bound
  double max_rel_error = 0;
  bool checked = false;     // at least one call's output was checked
  double check_s = 0;       // time the process spent stopped for checks
  bool done = false;        // every call made and checked
  std::string wrong;        // a call's output failed its check
  std::string rejected;     // a measurement refused, and why
  std::string protocol_error;
  std::string timeout_msg;
  bool reference = false;   // the library routine, not a kernel
  std::unique_ptr<Counters> counters;  // opened at its first turn; closed when it ends
  json counted;             // their record, read when the last call returned
  std::optional<size_t> same_code_as;  // not run: its code is this kernel's of the batch
  json result;
};

}  // namespace bench::detail
