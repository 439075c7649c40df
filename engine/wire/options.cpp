#include "wire/options.hpp"

#include <stdexcept>

namespace bench {

nlohmann::json ResolvedOptions::as_recorded() const {
  return {{"opt", opt},         {"march", march},
          {"backend", backend}, {"threads", threads},
          {"warmup", warmup},   {"runs", runs},
          {"max_runs", max_runs}, {"cov_target", cov_target},
          {"timeout", timeout}, {"compile_timeout", compile_timeout},
          {"memory_mb", memory_mb}, {"problem", problem},
          {"verify", verify}};
}

nlohmann::json ResolvedOptions::to_json() const {
  nlohmann::json j = as_recorded();
  j["march_flags"] = march_flags;
  return j;
}

ResolvedOptions ResolvedOptions::from_json(const nlohmann::json& j) {
  ResolvedOptions o;
  try {
    o.opt = j.at("opt").get<std::string>();
    o.march = j.at("march").get<std::string>();
    o.march_flags = j.at("march_flags").get<std::vector<std::string>>();
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
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(std::string("evaluation options: ") + e.what());
  }
  return o;
}

}  // namespace bench
