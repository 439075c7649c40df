// What the cluster does the same with or without MPI: settings and machine kinds.
#include <unistd.h>

#include <mutex>

#include "parallel/bench_workers/cluster.hpp"
#include "parallel/bench_workers/internal.hpp"
#include "bench/machine.hpp"
#include "bench/peak.hpp"

namespace cluster {

namespace {
std::mutex g_settings_mu;
Settings g_settings;
}  // namespace

void configure(const Settings& s) {
  if (!(s.worker_timeout > 0 && s.worker_timeout <= 86400))
    throw std::invalid_argument("worker_timeout must be more than 0 and at most 86400 seconds");
  std::lock_guard lock(g_settings_mu);
  g_settings = s;
}

Settings settings() {
  std::lock_guard lock(g_settings_mu);
  return g_settings;
}

// Without the measured peak, which would cost a measurement where none is wanted.
std::string local_kind() {
  const auto& m = bench::machine();
  return detail::kind_of({{"model", m.model}, {"cores", m.cores}, {"simd", m.simd}, {"target", m.target}});
}

namespace detail {

// GFLOPS are comparable between nodes with the same CPU, core count and target.
std::string kind_of(const nlohmann::json& machine) {
  return machine.value("model", "?") + ", " + std::to_string(machine.value("cores", 0)) + " cores, " +
         machine.value("simd", "?") + ", target " + machine.value("target", "?");
}

std::string host_name() {
  char name[256] = {0};
  if (gethostname(name, sizeof name - 1) != 0) return "localhost";
  return name;
}

}  // namespace detail
}  // namespace cluster
