// cluster.hpp over MPI: start (the job's ranks sorted into trainer ranks and benchmark
// workers, the trainer ranks' rendezvous published), stop, and evaluations spread over
// the workers. Messages are CBOR: the evaluation process's own requests and records,
// unresolved options (a worker resolves them against its own machine).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "files/clock.hpp"
#include "parallel/bench_workers/internal.hpp"
#include "parallel/bench_workers/mpi_job.hpp"
#include "parallel/rendezvous/rendezvous.hpp"

namespace cluster {

using namespace mpi;

// ENGINE_TRAINERS: how many of the job's first ranks train (1: rank 0 alone).
static int trainer_ranks() {
  const char* v = std::getenv("ENGINE_TRAINERS");
  if (!v || !*v) return 1;
  char* end = nullptr;
  long n = std::strtol(v, &end, 10);
  if (*end != '\0' || n < 1 || n > g_size)
    throw std::runtime_error(std::string("ENGINE_TRAINERS=") + v + " must be a number from 1 to the " +
                             std::to_string(g_size) + " ranks of the job");
  return static_cast<int>(n);
}

// The trainer ranks meet at rank 0's host, or where the user said
// (parallel/rendezvous); each learns its place from the environment.
static void share_rendezvous() {
  char where[512] = {};
  if (g_rank == 0) {
    std::string s = rendezvous::user_store();
    if (s.empty()) s = rendezvous::tcp_store(detail::host_name());
    std::snprintf(where, sizeof where, "%s", s.c_str());
  }
  MPI_Bcast(where, sizeof where, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (g_rank >= g_trainers) return;
  rendezvous::publish({g_rank, g_trainers, g_local_trainer, 0, where});
}

void start(int& argc, char**& argv) {
  if (!launched_by_mpi()) return;
  setenv("OMPI_MCA_async_mpi_finalize", "1", 0);
  int provided = 0;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS)
    throw std::runtime_error("cluster: MPI_Init_thread failed");
  if (provided < MPI_THREAD_SERIALIZED) {
    MPI_Finalize();
    throw std::runtime_error("cluster: the MPI library does not allow calls from several threads");
  }
  g_on = true;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  // Errors come back as codes: a dead peer must not end this process.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  g_trainers = trainer_ranks();
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  take_share_of_node(node);
  MPI_Comm_free(&node);
  if (g_trainers > 1) share_rendezvous();
  if (g_rank >= g_trainers) serve();
  std::atexit(stop);
  if (g_rank != 0) return;  // a trainer rank: engine/parallel/trainer_ranks takes it from here
  g_roster.workers.resize(static_cast<size_t>(g_size - g_trainers));
  g_roster.greeted.assign(g_roster.workers.size(), false);
  g_roster.last_seen.assign(g_roster.workers.size(), files::monotonic_seconds());
  for (size_t i = 0; i < g_roster.workers.size(); ++i) g_roster.workers[i].rank = worker_rank(i);
  g_roster.started = files::monotonic_seconds();
  if (g_size > g_trainers) g_heartbeat = std::thread(heartbeat_loop);
}

bool rank0_shares_cores() { return g_shares_cores; }

void stop() {
  if (!g_on || g_stopped || g_rank >= g_trainers) return;
  g_stopped = true;
  if (g_rank != 0) {  // a trainer rank, done following rank 0
    std::lock_guard lock(g_mpi);
    MPI_Finalize();
    return;
  }
  g_heartbeat_done = true;
  if (g_heartbeat.joinable()) g_heartbeat.join();
  // All at once, then up to 5 s for them to be taken (a worker still starting up takes
  // a moment before it can receive).
  std::vector<MPI_Request> reqs;
  static const Bytes empty = nlohmann::json::to_cbor(nlohmann::json::object());
  {
    std::lock_guard lock(g_mpi);
    for (size_t w : alive_workers()) {
      MPI_Request r;
      if (MPI_Isend(empty.data(), static_cast<int>(empty.size()), MPI_BYTE, worker_rank(w), kStop,
                    MPI_COMM_WORLD, &r) == MPI_SUCCESS)
        reqs.push_back(r);
    }
  }
  for (const double deadline = files::monotonic_seconds() + 5; !reqs.empty();) {
    int done = 0;
    {
      std::lock_guard lock(g_mpi);
      if (MPI_Testall(static_cast<int>(reqs.size()), reqs.data(), &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS) done = 1;
      if (!done && files::monotonic_seconds() > deadline) {
        for (auto& r : reqs) MPI_Request_free(&r);
        done = 1;
      }
    }
    if (done) break;
    nap();
  }
  finalize_and_exit(0);
}

int size() { return g_size; }

std::vector<Worker> workers() {
  if (g_size <= g_trainers) return {};
  {
    std::lock_guard lock(g_dispatch);
    await_hellos();
  }
  std::lock_guard lock(g_roster.mu);
  return g_roster.workers;
}

nlohmann::json evaluate_records(const std::vector<std::string>& sources, const bench::EvalOptions& opts) {
  if (g_size <= g_trainers) return bench::evaluate_records(sources, opts);
  bench::check_options(opts);  // bad options fail here, before any worker sees them
  if (sources.empty()) return nlohmann::json::array();
  return spread(sources, opts, false);
}

nlohmann::json reference_record(const bench::EvalOptions& opts) {
  if (g_size <= g_trainers) return bench::reference_record(opts);
  bench::check_options(opts);
  return spread({}, opts, true).at(0);
}

}  // namespace cluster
