// An evaluation's options: as a caller gives them (EvalOptions, which also cross to
// benchmark workers unresolved), and as they cross to the evaluation process
// (ResolvedOptions: every value resolved for the node that evaluates, the target as
// explicit flags), checked once by bench::check_options before they leave the engine.
// The evaluation process decodes them once (from_json) and reads fields, never keys.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace bench {

struct EvalOptions {
  std::string opt = "O3";             // "O0".."O3", "Os" (optimisation_levels())
  std::string march;                  // "" or "native": the host CPU (explicit flags)
  std::string backend;                // "" : default_backend()
  int threads = 0;                    // 0: all cores
  int warmup = 1, runs = 3;           // untimed calls, then timed calls (the fastest counts);
                                      // each call has inputs of its own, 64 calls at most
  int max_runs = 10;                  // more timed calls, up to this many in all, while the
  double cov_target = 0.05;           // CoV of the timed calls is above cov_target (and the
                                      // timeout leaves room); max_runs <= runs: exactly runs
  double timeout = 8;                 // seconds for the warm-up and timed calls together
  double compile_timeout = 60;        // seconds for compiling and loading
  int64_t memory_mb = 4096;           // address space the kernel may add to its process
  nlohmann::json problem = nlohmann::json::object();  // {kind, M, N, K, seed, c_init} or
                                                      // {task, size, seed, spec} (task/task.hpp)
  std::string yardstick;              // bench.reference: the library to measure ("": the
                                      // fastest of the task's yardsticks, Task::yardsticks)
  std::string verify = "fp64";        // "fp64": every element of every call within the
                                      // double-precision error bound; "paper": 105 points
                                      // of every call, relative error 1e-6
  int pool = 32;                      // compiled kernels waiting for their turns at most: a
                                      // batch compiles until the pool is full, then runs it
                                      // with nothing else on the CPU
  bool hold = true;                   // a full pool runs while the compiles under way are
                                      // held stopped (false: the pool waits for them first)
  bool split_checks = true;           // a call's inputs loaded and its outputs checked on
                                      // the calls' threads, idle then (false: one thread)
  bool share = true;                  // kernels of a batch whose compiled code is identical
                                      // (code_identity) are run once; the others take that
                                      // record, marked same_code_as
};

// The one encoding of options as data (a request, a record's "options", a worker's batch);
// from_json throws std::invalid_argument naming a missing or mistyped option.
nlohmann::json options_to_json(const EvalOptions& opts);
EvalOptions options_from_json(const nlohmann::json& j);

struct ResolvedOptions : EvalOptions {
  std::vector<std::string> march_flags;  // `march` as the back ends take it

  nlohmann::json to_json() const;
  static ResolvedOptions from_json(const nlohmann::json& j);
  // As results record them: without march_flags (march says the same, joined), and a
  // spec's task by its name and size (the spec's text is the task's file, not each record's).
  nlohmann::json as_recorded() const;
};

}  // namespace bench
