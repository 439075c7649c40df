#include "wire/options.hpp"

#include <stdexcept>

namespace bench {

nlohmann::json options_to_json(const EvalOptions& o) {
  nlohmann::json j = {{"opt", o.opt},         {"march", o.march},       {"backend", o.backend},
                      {"threads", o.threads}, {"warmup", o.warmup},     {"runs", o.runs},
                      {"max_runs", o.max_runs}, {"cov_target", o.cov_target}, {"timeout", o.timeout},
                      {"compile_timeout", o.compile_timeout}, {"memory_mb", o.memory_mb},
                      {"problem", o.problem}, {"verify", o.verify}, {"share", o.share}, {"pool", o.pool}};
  if (!o.yardstick.empty()) j["yardstick"] = o.yardstick;  // bench.reference's only
  if (o.hold) j["hold"] = true;  // absent: made without holding, as every record before it
  if (o.split_checks) j["split_checks"] = true;  // absent: on one thread, as before it
  return j;
}

EvalOptions options_from_json(const nlohmann::json& j) try {
  EvalOptions o;
  o.opt = j.at("opt").get<std::string>();
  o.march = j.at("march").get<std::string>();
  o.backend = j.at("backend").get<std::string>();
  o.threads = j.at("threads").get<int>();
  o.warmup = j.at("warmup").get<int>();
  o.runs = j.at("runs").get<int>();
  o.max_runs = j.at("max_runs").get<int>();
  o.cov_target = j.at("cov_target").get<double>();
  o.timeout = j.at("timeout").get<double>();
  o.compile_timeout = j.at("compile_timeout").get<double>();
  o.memory_mb = j.at("memory_mb").get<int64_t>();
  o.problem = j.at("problem");
  o.verify = j.at("verify").get<std::string>();
  o.share = j.at("share").get<bool>();
  o.pool = j.at("pool").get<int>();
  o.yardstick = j.value("yardstick", "");
  o.hold = j.value("hold", false);
  o.split_checks = j.value("split_checks", false);
  return o;
} catch (const nlohmann::json::exception& e) {
  throw std::invalid_argument(std::string("evaluation options: ") + e.what());
}

nlohmann::json ResolvedOptions::to_json() const {
  nlohmann::json j = options_to_json(*this);
  j["march_flags"] = march_flags;
  return j;
}

ResolvedOptions ResolvedOptions::from_json(const nlohmann::json& j) {
  ResolvedOptions r;
  static_cast<EvalOptions&>(r) = options_from_json(j);
  try {
    r.march_flags = j.at("march_flags").get<std::vector<std::string>>();
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("evaluation options: ") + e.what());
  }
  return r;
}

nlohmann::json ResolvedOptions::as_recorded() const {
  nlohmann::json j = options_to_json(*this);
  if (j["problem"].is_object()) {
    j["problem"].erase("spec");        // a task's text is its file's,
    j["problem"].erase("yardsticks");  // and so are its yardsticks'
  }
  return j;
}

}  // namespace bench
