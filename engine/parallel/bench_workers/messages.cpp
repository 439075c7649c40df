// The job and its messages: CBOR over MPI point-to-point, every call under g_mpi and
// polled, never blocking inside MPI (a receive too: a peer may die mid-message).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "files/clock.hpp"
#include "parallel/bench_workers/mpi_job.hpp"

namespace cluster::mpi {

std::mutex g_mpi;  // one MPI call at a time (MPI_THREAD_SERIALIZED)
bool g_on = false, g_stopped = false;
int g_rank = 0, g_size = 1;
int g_trainers = 1;
int g_local_trainer = 0;  // a trainer rank's index among the trainers of its node
bool g_shares_cores = false;  // rank 0 runs on cores a worker times kernels on

void nap() { std::this_thread::sleep_for(std::chrono::milliseconds(1)); }

bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (std::getenv(name)) return true;
  return false;
}

// Sends that never completed (their peer died) keep their buffers: MPI may still read them.
std::vector<std::shared_ptr<Bytes>> g_abandoned;

// Sends and waits for completion until `deadline`; false when the peer never took it.
bool send(int to, int tag, const nlohmann::json& msg, double deadline) {
  auto buf = std::make_shared<Bytes>(nlohmann::json::to_cbor(msg));
  MPI_Request req;
  {
    std::lock_guard lock(g_mpi);
    if (MPI_Isend(buf->data(), static_cast<int>(buf->size()), MPI_BYTE, to, tag, MPI_COMM_WORLD, &req) !=
        MPI_SUCCESS)
      return false;
  }
  for (;;) {
    int done = 0;
    {
      std::lock_guard lock(g_mpi);
      if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) done = -1;
      if (!done && files::monotonic_seconds() > deadline) {
        MPI_Request_free(&req);
        g_abandoned.push_back(buf);
        return false;
      }
    }
    if (done) return done > 0;
    nap();
  }
}

// Sends without waiting for the send to complete: the buffer lives until the process ends.
// For a message whose receipt nobody waits on (a worker's hello: rank 0 may have ended
// before it takes it in, and the worker must still hear a stop).
void post(int to, int tag, const nlohmann::json& msg) {
  auto buf = std::make_shared<Bytes>(nlohmann::json::to_cbor(msg));
  std::lock_guard lock(g_mpi);
  MPI_Request req;
  if (MPI_Isend(buf->data(), static_cast<int>(buf->size()), MPI_BYTE, to, tag, MPI_COMM_WORLD, &req) == MPI_SUCCESS)
    MPI_Request_free(&req);
  g_abandoned.push_back(buf);
}

// A message matched but never wholly received (its sender died while sending it) is given
// up after this long; a live peer's message of megabytes arrives in milliseconds.
constexpr double kReceiveSeconds = 10;

// A message from `from` (MPI_ANY_SOURCE) with `tag` (MPI_ANY_TAG), if one has arrived.
// Its body is {"error": ...} when it cannot be read or was cut short.
std::optional<Message> poll(int from, int tag) {
  MPI_Message handle;
  MPI_Status st;
  MPI_Request req;
  auto buf = std::make_shared<Bytes>();
  {
    std::lock_guard lock(g_mpi);
    int flag = 0;
    if (MPI_Improbe(from, tag, MPI_COMM_WORLD, &flag, &handle, &st) != MPI_SUCCESS || !flag) return std::nullopt;
    int count = 0;
    MPI_Get_count(&st, MPI_BYTE, &count);
    buf->resize(static_cast<size_t>(count));
    // never MPI_Mrecv: a sender killed mid-message leaves it spinning inside MPI for good
    if (MPI_Imrecv(buf->data(), count, MPI_BYTE, &handle, &req) != MPI_SUCCESS)
      return Message{st.MPI_SOURCE, st.MPI_TAG, {{"error", "a message that could not be received"}}};
  }
  Message m{st.MPI_SOURCE, st.MPI_TAG, nlohmann::json::object()};
  const double deadline = files::monotonic_seconds() + kReceiveSeconds;
  for (;;) {
    int done = 0;
    {
      std::lock_guard lock(g_mpi);
      if (MPI_Test(&req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS) {
        m.body = {{"error", "a message that could not be received"}};
        return m;
      }
      if (!done && files::monotonic_seconds() > deadline) {
        // not cancelled: a cancelled matched message is unmatched again, and the next
        // probe would take it up and wait once more
        MPI_Request_free(&req);
        g_abandoned.push_back(buf);  // MPI may still write into it
        m.body = {{"error", "a message cut short (its sender stopped while sending it)"}};
        return m;
      }
    }
    if (done) break;
    nap();
  }
  try {
    if (!buf->empty()) m.body = nlohmann::json::from_cbor(*buf);
  } catch (const std::exception&) {
    m.body = {{"error", "an unreadable message"}};
  }
  return m;
}

// MPI_Finalize waits for every process of the job by default, a dead worker included
// (seen: Open MPI 4.1 hangs there now and then). Open MPI is told not to wait, and a
// finalize that still hangs is cut short: everything worth keeping is written by then.
void finalize_and_exit(int status) {
  std::thread([status] {
    std::this_thread::sleep_for(std::chrono::seconds(20));
    std::fprintf(stderr, "engine: MPI_Finalize did not return within 20 s; exiting without it\n");
    std::fflush(nullptr);
    _exit(status);
  }).detach();
  {
    std::lock_guard lock(g_mpi);
    MPI_Finalize();
  }
}

}  // namespace cluster::mpi
