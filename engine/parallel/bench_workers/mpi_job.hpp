// Inside parallel/bench_workers only, with MPI: the job's state and its messages, shared
// by messages.cpp (sending, polling, finalizing), worker.cpp (a benchmark worker's life),
// rank0.cpp (rank 0's roster of workers and the batches it spreads over them) and mpi.cpp
// (cluster.hpp over MPI: start, stop, evaluate).
//
// MPI is used in MPI_THREAD_SERIALIZED mode: every call holds g_mpi, and nothing blocks
// inside MPI while holding it (sends and receives are polled), so a dead peer can stall
// neither the heartbeat thread nor the dispatcher.
#pragma once

#include <mpi.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench.hpp"
#include "parallel/bench_workers/cluster.hpp"

namespace cluster::mpi {

enum Tag : int { kHello = 1, kWork = 2, kAnswer = 3, kAlive = 4, kStop = 5 };

constexpr double kHeartbeat = 1.0;        // seconds between heartbeats, both ways
constexpr double kHelloWait = 120.0;      // how long rank 0 waits for a worker's hello
constexpr double kTrainerSilence = 300.0; // a worker that hears nothing this long stops

// ---- the job (messages.cpp) ----
extern std::mutex g_mpi;  // one MPI call at a time (MPI_THREAD_SERIALIZED)
extern bool g_on, g_stopped;
extern int g_rank, g_size;
// Ranks 0 .. g_trainers - 1 sample and train (parallel/trainer_ranks); the rest are workers.
extern int g_trainers;
extern int g_local_trainer;  // a trainer rank's index among the trainers of its node
extern bool g_shares_cores;  // rank 0 runs on cores a worker times kernels on
inline int worker_rank(size_t i) { return static_cast<int>(i) + g_trainers; }

void nap();
bool launched_by_mpi();

using Bytes = std::vector<std::uint8_t>;
// Sends and waits for completion until `deadline`; false when the peer never took it.
bool send(int to, int tag, const nlohmann::json& msg, double deadline);
// Sends without waiting for the send to complete: the buffer lives until the process ends.
void post(int to, int tag, const nlohmann::json& msg);
struct Message {
  int from = 0, tag = 0;
  nlohmann::json body;
};
// A message from `from` (MPI_ANY_SOURCE) with `tag` (MPI_ANY_TAG), if one has arrived;
// its body {"error": ...} when it could not be read, or was cut short by its sender's end.
std::optional<Message> poll(int from, int tag);
// MPI_Finalize, cut short when it hangs; then the process ends.
void finalize_and_exit(int status);

// ---- a worker rank (worker.cpp) ----
// Splits the node's cores between the workers on it (and rank 0's reserve).
void take_share_of_node(MPI_Comm node);
// A worker's whole life: evaluates what rank 0 sends until told to stop.
[[noreturn]] void serve();

// ---- rank 0 (rank0.cpp) ----
struct Roster {
  std::mutex mu;
  std::vector<Worker> workers;  // index rank - g_trainers
  std::vector<bool> greeted;
  std::vector<double> last_seen;
  double started = 0;
};
extern Roster g_roster;
extern std::thread g_heartbeat;
extern std::atomic<bool> g_heartbeat_done;
extern std::mutex g_dispatch;  // one batch at a time over the workers
void heartbeat_loop();
// Waits (once) until every worker said hello or kHelloWait passed; silent ones are dropped.
void await_hellos();
std::vector<size_t> alive_workers();
// The batch (or one reference) evaluated over the workers; records in order.
nlohmann::json spread(const std::vector<std::string>& sources, const bench::EvalOptions& opts, bool reference);

}  // namespace cluster::mpi
