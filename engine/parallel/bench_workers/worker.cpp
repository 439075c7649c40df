// A benchmark worker rank: takes its share of the node's cores, says hello with its
// machine record, then evaluates what rank 0 sends (in its own evaluation process, as rank
// 0 would) until told to stop or rank 0 falls silent.
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "bench/peak.hpp"
#include "files/clock.hpp"
#include "parallel/bench_workers/internal.hpp"
#include "parallel/bench_workers/mpi_job.hpp"

namespace cluster::mpi {

// Workers sharing a node (and one CPU set, as mpirun leaves them when it does not bind)
// take disjoint shares of it, so their timed runs never meet on a core.
// ENGINE_RANK0_CORES=N: rank 0 keeps the first N cores of a node it shares with workers
// (for sampling and training while they time kernels: --async); 0 or unset: none.
int rank0_cores() {
  const char* v = std::getenv("ENGINE_RANK0_CORES");
  return v ? std::max(0, std::atoi(v)) : 0;
}

// Splits the node's cores between the workers on it (and rank 0's reserve). Ranks the
// launcher already placed on different cores keep their placement.
void take_share_of_node(MPI_Comm node) {
  cpu_set_t mine;
  CPU_ZERO(&mine);
  sched_getaffinity(0, sizeof mine, &mine);
  int n = 0;
  MPI_Comm_size(node, &n);
  std::vector<cpu_set_t> all(static_cast<size_t>(n));
  std::vector<int> ranks(static_cast<size_t>(n));
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, node);
  MPI_Allgather(&g_rank, 1, MPI_INT, ranks.data(), 1, MPI_INT, node);
  bool rank0_here = false, placed = false;
  int workers = 0, index = 0;
  for (int i = 0; i < n; ++i) {
    if (!CPU_EQUAL(&all[i], &all[0])) placed = true;
    if (ranks[i] < g_trainers) {  // rank 0 and the trainer ranks share its reserve
      rank0_here = true;
      if (ranks[i] < g_rank) ++g_local_trainer;
      continue;
    }
    if (ranks[i] < g_rank) ++index;
    ++workers;
  }
  std::vector<int> cpus;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &mine)) cpus.push_back(c);
  const int reserve = rank0_here && workers > 0 && !placed ? rank0_cores() : 0;
  if (reserve > 0 && static_cast<int>(cpus.size()) < reserve + workers)
    throw std::runtime_error("ENGINE_RANK0_CORES=" + std::to_string(reserve) + " leaves no core for the " +
                             std::to_string(workers) + " benchmark worker(s) of a " +
                             std::to_string(cpus.size()) + "-core node");
  auto pin = [](const std::vector<int>& cs, size_t from, size_t to) {
    cpu_set_t share;
    CPU_ZERO(&share);
    for (size_t i = from; i < to; ++i) CPU_SET(cs[i], &share);
    sched_setaffinity(0, sizeof share, &share);
  };
  if (g_rank < g_trainers) {
    if (reserve > 0) pin(cpus, 0, static_cast<size_t>(reserve));
  } else if (!placed) {
    cpus.erase(cpus.begin(), cpus.begin() + reserve);
    if ((workers > 1 || reserve > 0) && static_cast<int>(cpus.size()) >= workers)
      pin(cpus, cpus.size() * index / workers, cpus.size() * (index + 1) / workers);
  }
  // Where everyone ended up: rank 0 learns whether a worker times kernels on its cores.
  sched_getaffinity(0, sizeof mine, &mine);
  MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine, MPI_BYTE, node);
  if (g_rank != 0) return;
  for (int i = 0; i < n; ++i) {
    if (ranks[i] < g_trainers) continue;
    cpu_set_t both;
    CPU_AND(&both, &all[i], &mine);
    if (CPU_COUNT(&both) > 0) g_shares_cores = true;
  }
}

nlohmann::json work(const nlohmann::json& req, const std::string& node) {
  try {
    auto opts = bench::options_from_json(req.at("options"));
    nlohmann::json records;
    if (req.at("op") == "reference") records = nlohmann::json::array({bench::reference_record(opts)});
    else records = bench::evaluate_records(req.at("sources").get<std::vector<std::string>>(), opts);
    for (auto& r : records) r["node"] = node;
    return {{"id", req.at("id")}, {"records", std::move(records)}};
  } catch (const std::exception& e) {
    return {{"id", req.value("id", -1)}, {"error", e.what()}};
  }
}

[[noreturn]] void serve() {
  bench::start_zygote();
  const std::string host = detail::host_name();
  const std::string node = host + ":" + std::to_string(g_rank);
  nlohmann::json machine = bench::machine_record();
  post(0, kHello, {{"host", host}, {"pid", static_cast<int>(getpid())}, {"machine", machine},
                   {"kind", detail::kind_of(machine)}});
  std::atomic<bool> done{false};
  std::thread heartbeat([&] {
    static const std::uint8_t beat = 0;
    while (!done) {
      {
        std::lock_guard lock(g_mpi);
        MPI_Request req;
        if (MPI_Isend(&beat, 1, MPI_BYTE, 0, kAlive, MPI_COMM_WORLD, &req) == MPI_SUCCESS) MPI_Request_free(&req);
      }
      for (int i = 0; i < 10 && !done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  double heard = files::monotonic_seconds();
  std::string why;
  for (;;) {
    auto m = poll(0, MPI_ANY_TAG);
    if (!m) {
      if (files::monotonic_seconds() - heard > kTrainerSilence) {
        why = "rank 0 has not been heard from for " + std::to_string(int(kTrainerSilence)) + " s";
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      continue;
    }
    heard = files::monotonic_seconds();
    if (m->tag == kStop) break;
    if (m->tag != kWork) continue;
    auto answer = work(m->body, node);
    if (!send(0, kAnswer, answer, files::monotonic_seconds() + kTrainerSilence)) {
      why = "rank 0 did not take an answer";
      break;
    }
    heard = files::monotonic_seconds();
  }
  done = true;
  heartbeat.join();
  if (!why.empty()) std::fprintf(stderr, "engine: benchmark worker %s stops: %s\n", node.c_str(), why.c_str());
  finalize_and_exit(why.empty() ? 0 : 1);
  std::exit(why.empty() ? 0 : 1);
}

}  // namespace cluster::mpi
