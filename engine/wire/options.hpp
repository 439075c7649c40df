// An evaluation's options as they cross to the evaluation process: every value resolved
// for the node that evaluates (threads counted, the back end named, the target as explicit
// flags), checked once by bench::check_options before they leave the engine. The
// evaluation process decodes them once (from_json) and reads fields, never keys.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace bench {

struct ResolvedOptions {
  std::string opt;                       // "O0".."O3", "Os"
  std::string march;                     // the flags joined, as records show them
  std::vector<std::string> march_flags;  // the flags as the back ends take them
  std::string backend;
  int threads = 1;
  int warmup = 1, runs = 3, max_runs = 3;  // max_runs >= runs
  double cov_target = 0.05;
  double timeout = 8, compile_timeout = 60;
  int64_t memory_mb = 4096;
  nlohmann::json problem;  // the task's options, complete
  std::string verify;      // "fp64" or "paper"

  nlohmann::json to_json() const;
  // Throws std::invalid_argument naming the missing or mistyped option.
  static ResolvedOptions from_json(const nlohmann::json& j);
  // As results record them: without march_flags (march says the same).
  nlohmann::json as_recorded() const;
};

}  // namespace bench
