// The engine built without MPI: one process, evaluating on its own node.
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "parallel/bench_workers/cluster.hpp"

namespace cluster {

namespace {

// The process count an MPI launcher announces, 1 when there is none.
int launcher_size() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"})
    if (const char* v = std::getenv(name); v && std::atoi(v) > 1) return std::atoi(v);
  return 1;
}

}  // namespace

void start(int&, char**&) {
  if (int n = launcher_size(); n > 1)
    throw std::runtime_error("launched as " + std::to_string(n) +
                             " MPI processes, but this engine was built without MPI (install "
                             "libopenmpi-dev and rebuild); each process would run the whole script");
}

void stop() {}

int size() { return 1; }

bool rank0_shares_cores() { return false; }

std::vector<Worker> workers() { return {}; }

nlohmann::json evaluate_records(const std::vector<std::string>& sources, const bench::EvalOptions& opts) {
  return bench::evaluate_records(sources, opts);
}

nlohmann::json reference_record(const bench::EvalOptions& opts) { return bench::reference_record(opts); }

}  // namespace cluster
