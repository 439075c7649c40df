// Where the trainer ranks of a job meet, and how each process learns its place: the one
// definition of ENGINE_RANK, ENGINE_WORLD_SIZE, ENGINE_LOCAL_RANK, ENGINE_LOCAL_WORLD_SIZE,
// ENGINE_RENDEZVOUS, ENGINE_DIST_BACKEND and ENGINE_DIST_TIMEOUT. Launchers publish them (engine --ranks in engine/host, an MPI
// job's first ranks in parallel/bench_workers); parallel/trainer_ranks reads them and
// joins its process group there (engine/dist).
#pragma once

#include <optional>
#include <string>

namespace rendezvous {

struct Place {
  int rank = 0, size = 1;              // this process among the job's trainer ranks
  int local_rank = 0, local_size = 0;  // among those of its machine (local_size 0: unknown)
  std::string store;                   // where they meet: "file:PATH" or "tcp:HOST:PORT"
  // The user's choices for the group they form (read, never published):
  std::string backend;                 // ENGINE_DIST_BACKEND: "gloo", "nccl", or "" (chosen)
  int timeout_s = 0;                   // ENGINE_DIST_TIMEOUT: seconds (0: the default)
};

// Sets the variables for this process (and what it starts).
void publish(const Place& place);

// This process's place, from the variables; nullopt when neither ENGINE_RANK nor
// ENGINE_WORLD_SIZE is set. Throws std::invalid_argument naming a variable that is
// malformed, or set without its partner, or a store missing where ranks are several.
std::optional<Place> read();

// ENGINE_RENDEZVOUS as the user set it ("" when unset): a user's store wins.
std::string user_store();
// A store at `host` on a TCP port free now ("tcp:HOST:PORT"; rank 0 listens there).
std::string tcp_store(const std::string& host);
// A store in `dir`, for ranks on one machine ("file:DIR/store").
std::string file_store(const std::string& dir);

}  // namespace rendezvous
