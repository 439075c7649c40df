// Data-parallel ranks: one engine process per device, each holding a replica of the policy
// and its trainer. The ranks of a step split its micro-batches and sum their gradients, so
// every replica takes the same optimizer step (libtorch's process groups: gloo, and NCCL
// for GPU tensors where libtorch carries it). Torch-free; tensors cross ranks through
// dist/tensors.hpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace dist {

struct Rendezvous {
  int rank = 0;
  int size = 1;
  // Where the ranks meet: "file:PATH" (a file every rank can reach; a fresh one per job)
  // or "tcp:HOST:PORT" (rank 0 listens there).
  std::string store;
  // How long a collective waits for a missing rank before it fails.
  double timeout_s = 300;
  // "gloo": every tensor crosses through host memory. "nccl": GPU tensors are summed on
  // their devices by NCCL (one GPU per rank), the rest still through gloo. Under NCCL a
  // stopped peer is not an error of the next collective: NCCL's watchdog ends the
  // waiting ranks after timeout_s.
  std::string backend = "gloo";
};

class Group {
 public:
  // Blocks until all `size` ranks have joined; throws std::runtime_error naming the
  // rendezvous when the address is malformed, the backend is missing or a rank never
  // comes. A group of one needs no store; with "nccl" it still forms a (1-rank) NCCL
  // communicator, so the device path runs on a machine with one GPU. A process that joins a group of several ignores SIGPIPE from then on: a peer
  // that stops becomes an error of the next collective.
  static std::shared_ptr<Group> join(const Rendezvous& r);
  ~Group();

  int rank() const;
  int size() const;
  const std::string& backend() const;
  // Every rank waits for the others (throws when one has stopped).
  void barrier();
  // Ends the NCCL communicators while CUDA is still up: torn down at process exit, after
  // the CUDA runtime, they abort the process. GPU tensors then go over gloo, if at all.
  void shutdown();

  // Byte messages (commands and their answers; tensors go through tensors.hpp).
  // root's msg, on every rank.
  void broadcast(std::string& msg, int root);
  // Every rank's msg, in rank order, on every rank.
  std::vector<std::string> all_gather(const std::string& msg);
  // A counter in the rendezvous store, shared by the ranks: adds delta and returns the
  // sum. Unlike a collective it never waits for another rank, so a rank can poll it
  // while another is busy for longer than any timeout (add 0 to read it).
  int64_t counter(const std::string& key, int64_t delta);

  struct Impl;
  Impl& impl() { return *impl_; }

 private:
  explicit Group(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Whether this build can form groups (it was built against gloo's headers).
bool available();
// Whether it can form NCCL groups (its libtorch carries c10d's NCCL backend).
bool nccl_available();

}  // namespace dist
