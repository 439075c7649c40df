// Benchmark nodes as MPI ranks (engine/parallel/bench_workers).
//
// Under `mpirun -np N engine SCRIPT` (or srun), rank 0 runs the script: it samples,
// trains and sends the kernels out; every other rank is a benchmark worker that runs its
// node's evaluation process and evaluates what it is sent with its cores. Workers on one
// node split its cores between them, so timed runs of different workers never share a
// core. Evaluations keep their shape: the evaluation process's records travel from the
// worker to rank 0, tagged with the node that measured them.
//
// A worker that dies or goes silent (no heartbeat for `worker_timeout` seconds, or a
// batch past its deadline) is dropped: its kernels go to another worker, or are
// evaluated on rank 0 when none is left; a late answer is never counted. mpirun must be
// told to keep the job alive when a rank dies (`mpirun --enable-recovery`; with srun,
// `--no-kill`). Built without MPI, or not launched by it, the engine is one process and
// evaluates on its own node as always.
//
// ENGINE_TRAINERS=K makes ranks 0 .. K-1 trainer ranks instead (engine/parallel/trainer_ranks: they share
// rank 0's sampling and training, meeting at a TCP store on rank 0's host) and the rest
// benchmark workers: one mpirun starts both.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench.hpp"

namespace cluster {

// Called first thing in main. Under an MPI launcher, starts MPI; on a worker rank it
// serves rank 0 and exits, so it returns only on a trainer rank (rank 0 among them, with
// ENGINE_RANK and the rest of engine/parallel/trainer_ranks's environment set) or with no MPI at all. Throws
// when launched by mpirun with several processes but built without MPI.
void start(int& argc, char**& argv);
// Tells the workers to stop and ends MPI (at exit of rank 0; idempotent).
void stop();

int size();  // processes in the job: 1 without MPI
// Whether rank 0 shares its node's cores with a worker (no ENGINE_RANK0_CORES reserve, or
// a launcher's placement that overlaps): then whatever rank 0 runs while a batch is
// evaluated disturbs the timings.
bool rank0_shares_cores();

struct Worker {
  int rank = 0;
  std::string host;        // its node's name
  int pid = 0;
  nlohmann::json machine;  // bench.machine() as the worker sees it (its own cores)
  std::string kind;        // what makes GFLOPS comparable: CPU model, cores, ISA, target
  bool alive = true;
  std::string lost;        // why it was dropped
  int kernels = 0;         // evaluations it answered
  double busy_seconds = 0; // from a batch's dispatch to its answer
};
// The workers, once each has said hello (waits for them on first use).
std::vector<Worker> workers();

struct Settings {
  double worker_timeout = 30;  // seconds of silence after which a worker is dropped
  bool mixed_nodes = false;    // allow workers of different machine kinds in one run
};
void configure(const Settings& s);
Settings settings();

// The machine kind of this process's node (the same key as Worker::kind).
std::string local_kind();

// bench::evaluate_records / reference_record, spread over the workers when there are any
// (the records say which node measured each), else on this node. The records keep the
// evaluation process's shape all the way to the caller (the scripts see it as it is).
// Throws when the workers are of different kinds and mixed_nodes is off.
nlohmann::json evaluate_records(const std::vector<std::string>& sources, const bench::EvalOptions& opts);
nlohmann::json reference_record(const bench::EvalOptions& opts);

// A batch handed to the background: batches submitted are evaluated one after another
// in submission order (as evaluate_records, on the workers when there are any) while the
// caller goes on, for example sampling the next kernels.
class Submission {
 public:
  struct State;
  explicit Submission(std::shared_ptr<State> s) : state_(std::move(s)) {}
  bool ready() const;
  // Blocks until the batch is evaluated (its records); rethrows what evaluate_records threw.
  const nlohmann::json& wait() const;
  // Drops the batch: one not yet started is skipped; one under way is waited for, so
  // that nothing of it outlives the caller.
  void abandon() const;

 private:
  std::shared_ptr<State> state_;
};
Submission submit_batch(const std::vector<std::string>& sources, const bench::EvalOptions& opts);

}  // namespace cluster
