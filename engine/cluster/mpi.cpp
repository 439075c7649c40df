// cluster.hpp over MPI. Messages are CBOR: the evaluation process's own requests and
// records, unresolved options (a worker resolves them against its own machine).
//
// MPI is used in MPI_THREAD_SERIALIZED mode: every call holds g_mpi, and nothing blocks
// inside MPI while holding it (sends and receives are polled), so a dead peer can stall
// neither the heartbeat thread nor the dispatcher.
#include <arpa/inet.h>
#include <mpi.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include "bench/peak.hpp"
#include "cluster/cluster.hpp"
#include "cluster/internal.hpp"
#include "files/clock.hpp"

namespace cluster {

namespace {

enum Tag : int { kHello = 1, kWork = 2, kAnswer = 3, kAlive = 4, kStop = 5 };

constexpr double kHeartbeat = 1.0;        // seconds between heartbeats, both ways
constexpr double kHelloWait = 120.0;      // how long rank 0 waits for a worker's hello
constexpr double kTrainerSilence = 300.0; // a worker that hears nothing this long stops

std::mutex g_mpi;  // one MPI call at a time (MPI_THREAD_SERIALIZED)
bool g_on = false, g_stopped = false;
int g_rank = 0, g_size = 1;
// Ranks 0 .. g_trainers - 1 sample and train (engine/replica); the rest are workers.
int g_trainers = 1;
int g_local_trainer = 0;  // a trainer rank's index among the trainers of its node

int worker_rank(size_t i) { return static_cast<int>(i) + g_trainers; }
bool g_shares_cores = false;  // rank 0 runs on cores a worker times kernels on


void nap() { std::this_thread::sleep_for(std::chrono::milliseconds(1)); }

bool launched_by_mpi() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK"})
    if (std::getenv(name)) return true;
  return false;
}

using Bytes = std::vector<std::uint8_t>;

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

struct Message {
  int from = 0, tag = 0;
  nlohmann::json body;
};

// A message from `from` (MPI_ANY_SOURCE) with `tag` (MPI_ANY_TAG), if one has arrived.
std::optional<Message> poll(int from, int tag) {
  std::lock_guard lock(g_mpi);
  int flag = 0;
  MPI_Message handle;
  MPI_Status st;
  if (MPI_Improbe(from, tag, MPI_COMM_WORLD, &flag, &handle, &st) != MPI_SUCCESS || !flag) return std::nullopt;
  int count = 0;
  MPI_Get_count(&st, MPI_BYTE, &count);
  Bytes buf(static_cast<size_t>(count));
  MPI_Mrecv(buf.data(), count, MPI_BYTE, &handle, MPI_STATUS_IGNORE);
  Message m{st.MPI_SOURCE, st.MPI_TAG, nlohmann::json::object()};
  try {
    if (!buf.empty()) m.body = nlohmann::json::from_cbor(buf);
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

// --- worker ranks --------------------------------------------------------------------

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

// --- rank 0 ----------------------------------------------------------------------------

struct Roster {
  std::mutex mu;
  std::vector<Worker> workers;        // index rank - 1
  std::vector<bool> greeted;
  std::vector<double> last_seen;
  double started = 0;
};
Roster g_roster;

// Takes in heartbeats and hellos (called by the heartbeat thread and the dispatcher).
void take_in_control() {
  for (int tag : {kAlive, kHello}) {
    while (auto m = poll(MPI_ANY_SOURCE, tag)) {
      std::lock_guard lock(g_roster.mu);
      size_t i = static_cast<size_t>(m->from - g_trainers);
      if (m->from < g_trainers || i >= g_roster.workers.size()) continue;
      g_roster.last_seen[i] = files::monotonic_seconds();
      if (tag == kHello && !g_roster.greeted[i]) {
        auto& w = g_roster.workers[i];
        w.host = m->body.value("host", "");
        w.pid = m->body.value("pid", 0);
        w.machine = m->body.value("machine", nlohmann::json::object());
        w.kind = m->body.value("kind", "");
        g_roster.greeted[i] = true;
      }
    }
  }
}

void drop(size_t i, const std::string& why) {
  std::lock_guard lock(g_roster.mu);
  auto& w = g_roster.workers[i];
  if (!w.alive) return;
  w.alive = false;
  w.lost = why;
  std::fprintf(stderr, "engine: benchmark worker %d (%s) dropped: %s\n", w.rank, w.host.c_str(), why.c_str());
}

std::thread g_heartbeat;
std::atomic<bool> g_heartbeat_done{false};

void heartbeat_loop() {
  static const std::uint8_t beat = 0;
  while (!g_heartbeat_done) {
    std::vector<int> to;
    {
      std::lock_guard lock(g_roster.mu);
      for (const auto& w : g_roster.workers)
        if (w.alive) to.push_back(w.rank);
    }
    for (int r : to) {
      std::lock_guard lock(g_mpi);
      MPI_Request req;
      if (MPI_Isend(&beat, 1, MPI_BYTE, r, kAlive, MPI_COMM_WORLD, &req) == MPI_SUCCESS) MPI_Request_free(&req);
    }
    take_in_control();
    for (int i = 0; i < 10 && !g_heartbeat_done; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

// Waits (once) until every worker said hello or kHelloWait passed; silent ones are dropped.
void await_hellos() {
  for (;;) {
    take_in_control();
    std::vector<size_t> missing;
    {
      std::lock_guard lock(g_roster.mu);
      for (size_t i = 0; i < g_roster.workers.size(); ++i)
        if (g_roster.workers[i].alive && !g_roster.greeted[i]) missing.push_back(i);
    }
    if (missing.empty()) return;
    if (files::monotonic_seconds() - g_roster.started > kHelloWait) {
      for (size_t i : missing) drop(i, "no hello within " + std::to_string(int(kHelloWait)) + " s of the start");
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::vector<size_t> alive_workers() {
  std::lock_guard lock(g_roster.mu);
  std::vector<size_t> out;
  for (size_t i = 0; i < g_roster.workers.size(); ++i)
    if (g_roster.workers[i].alive) out.push_back(i);
  return out;
}

// Refuses to mix machine kinds unless told to; `local` adds this node's kind (rank 0
// evaluating because no worker is left).
void check_kinds(bool local) {
  if (settings().mixed_nodes) return;
  std::map<std::string, std::string> kinds;  // kind -> who
  {
    std::lock_guard lock(g_roster.mu);
    // Every worker that said hello, lost ones too: their kind is what the run measures on.
    for (const auto& w : g_roster.workers)
      if (!w.kind.empty()) kinds.emplace(w.kind, "worker " + std::to_string(w.rank) + " (" + w.host + ")");
  }
  if (local) kinds.emplace(local_kind(), "rank 0 (" + detail::host_name() + ")");
  if (kinds.size() <= 1) return;
  std::string list;
  for (const auto& [kind, who] : kinds) list += "\n  " + who + ": " + kind;
  throw std::runtime_error(
      "cluster: the benchmark nodes are different machines, whose GFLOPS are not comparable:" + list +
      "\n(pass --mixed_nodes, or cluster.configure{mixed_nodes = true}, to allow it)");
}

struct Chunk {
  int id = 0;
  std::vector<size_t> items;  // indices into the batch
  int tries = 0;
  std::string failures;
};

// How long a chunk may take on a worker before it is presumed lost.
double chunk_deadline(const Chunk& c, const bench::EvalOptions& o, int cores, bool reference) {
  double n = static_cast<double>(c.items.size());
  double compile = std::ceil(n / std::max(1, cores)) * o.compile_timeout;
  double runs = reference ? (std::log2(std::max(1, cores)) + 2) * (o.timeout + 5) : n * (o.timeout + 2);
  return files::monotonic_seconds() + compile + runs + settings().worker_timeout;
}

// Evaluates `n` items (the sources, or one reference) over the workers; records in order.
nlohmann::json dispatch(const std::vector<std::string>& sources, const bench::EvalOptions& opts, bool reference) {
  const size_t n = reference ? 1 : sources.size();
  std::vector<nlohmann::json> records(n);
  std::vector<bool> have(n, false);
  size_t remaining = n;
  std::deque<Chunk> queue;
  struct Assignment {
    Chunk chunk;
    double sent = 0, deadline = 0;  // when it went out; when it is presumed lost
  };
  std::map<size_t, Assignment> busy;  // worker index -> what it is evaluating
  static int next_id = 1;
  std::deque<size_t> pending;
  for (size_t i = 0; i < n; ++i) pending.push_back(i);
  auto opts_json = bench::options_to_json(opts);

  auto cores_of = [](size_t w) {
    std::lock_guard lock(g_roster.mu);
    return std::max(1, g_roster.workers[w].machine.value("cores", 1));
  };
  auto requeue = [&](size_t w, const std::string& why) {
    Chunk c = std::move(busy[w].chunk);
    busy.erase(w);
    c.tries++;
    c.failures += (c.failures.empty() ? "" : "; ") + why;
    queue.push_front(std::move(c));
  };

  while (remaining > 0) {
    take_in_control();
    auto alive = alive_workers();
    // Liveness: silence or a chunk past its deadline drops the worker; its chunk goes back.
    for (size_t w : alive) {
      if (!busy.count(w)) continue;
      double seen;
      {
        std::lock_guard lock(g_roster.mu);
        seen = g_roster.last_seen[w];
      }
      double limit = settings().worker_timeout;
      if (files::monotonic_seconds() - seen > limit) {
        drop(w, "no heartbeat for " + std::to_string(int(files::monotonic_seconds() - seen)) + " s");
        requeue(w, "worker " + std::to_string(worker_rank(w)) + " went silent");
      } else if (files::monotonic_seconds() > busy[w].deadline) {
        drop(w, "its batch took past its deadline");
        requeue(w, "worker " + std::to_string(worker_rank(w)) + " passed its deadline");
      }
    }
    alive = alive_workers();
    if (alive.empty()) {
      // Nobody left: what is outstanding is evaluated here.
      check_kinds(true);
      std::vector<size_t> left;
      for (size_t i = 0; i < n; ++i)
        if (!have[i]) left.push_back(i);
      std::vector<std::string> srcs;
      for (size_t i : left) srcs.push_back(reference ? std::string() : sources[i]);
      nlohmann::json recs = reference ? nlohmann::json::array({bench::reference_record(opts)})
                                      : bench::evaluate_records(srcs, opts);
      const std::string node = detail::host_name() + ":0";
      for (size_t k = 0; k < left.size(); ++k) {
        recs[k]["node"] = node;
        records[left[k]] = std::move(recs[k]);
      }
      break;
    }
    // Hand out work to idle workers: requeued chunks first, then fresh ones.
    for (size_t w : alive) {
      if (busy.count(w)) continue;
      Chunk c;
      if (!queue.empty()) {
        c = std::move(queue.front());
        queue.pop_front();
        if (c.tries >= 3)
          throw std::runtime_error("cluster: a batch failed on three workers (" + c.failures + ")");
      } else if (!pending.empty()) {
        // Guided: half a worker's share of what is left, at least twice its cores (never
        // more than the share itself). Large chunks early let a worker's evaluation
        // process overlap compiles with timed runs; small ones at the end keep the
        // workers finishing together.
        size_t cores = static_cast<size_t>(cores_of(w));
        size_t share = (pending.size() + alive.size() - 1) / alive.size();
        size_t take = std::min(share, std::max((share + 1) / 2, 2 * cores));
        c.id = next_id++;
        for (size_t k = 0; k < take && !pending.empty(); ++k) {
          c.items.push_back(pending.front());
          pending.pop_front();
        }
      } else {
        continue;
      }
      nlohmann::json req = {{"id", c.id}, {"op", reference ? "reference" : "evaluate"}, {"options", opts_json}};
      if (!reference) {
        std::vector<std::string> srcs;
        for (size_t i : c.items) srcs.push_back(sources[i]);
        req["sources"] = std::move(srcs);
      }
      int cores = cores_of(w);
      double limit = chunk_deadline(c, opts, cores, reference);
      busy[w] = {std::move(c), files::monotonic_seconds(), limit};
      if (!send(worker_rank(w), kWork, req, files::monotonic_seconds() + settings().worker_timeout)) {
        drop(w, "it did not take a batch");
        requeue(w, "worker " + std::to_string(worker_rank(w)) + " did not take it");
      }
    }
    // Answers.
    bool idle = true;
    while (auto m = poll(MPI_ANY_SOURCE, kAnswer)) {
      idle = false;
      size_t w = static_cast<size_t>(m->from - g_trainers);
      {
        std::lock_guard lock(g_roster.mu);
        if (w < g_roster.last_seen.size()) g_roster.last_seen[w] = files::monotonic_seconds();
      }
      auto it = busy.find(w);
      if (it == busy.end() || m->body.value("id", -1) != it->second.chunk.id) continue;  // late: never counted
      if (m->body.contains("error")) {
        std::string why = "worker " + std::to_string(worker_rank(w)) + ": " + m->body["error"].get<std::string>();
        drop(w, m->body["error"].get<std::string>());
        requeue(w, why);
        continue;
      }
      auto& recs = m->body["records"];
      const Chunk& c = it->second.chunk;
      if (!recs.is_array() || recs.size() != c.items.size()) {
        drop(w, "it answered with the wrong number of records");
        requeue(w, "worker " + std::to_string(worker_rank(w)) + " answered wrongly");
        continue;
      }
      for (size_t k = 0; k < c.items.size(); ++k) {
        size_t i = c.items[k];
        if (have[i]) continue;
        records[i] = std::move(recs[k]);
        have[i] = true;
        --remaining;
      }
      {
        std::lock_guard lock(g_roster.mu);
        auto& wk = g_roster.workers[w];
        wk.kernels += static_cast<int>(c.items.size());
        wk.busy_seconds += files::monotonic_seconds() - it->second.sent;
      }
      busy.erase(it);
    }
    if (idle) nap();
  }
  nlohmann::json out = nlohmann::json::array();
  for (auto& r : records) out.push_back(std::move(r));
  return out;
}

std::mutex g_dispatch;  // one batch at a time over the workers

nlohmann::json spread(const std::vector<std::string>& sources, const bench::EvalOptions& opts, bool reference) {
  std::lock_guard lock(g_dispatch);
  await_hellos();
  check_kinds(false);
  return dispatch(sources, opts, reference);
}

}  // namespace

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

// A free TCP port of this host (the store of the trainer ranks listens there).
static int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t len = sizeof a;
  int port = 0;
  if (fd >= 0 && bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  if (fd >= 0) close(fd);
  if (port == 0) throw std::runtime_error("cluster: no free TCP port for the trainer ranks' store");
  return port;
}

// The trainer ranks meet at rank 0's host (engine/replica reads the environment); a
// rendezvous set by the user wins.
static void share_rendezvous() {
  char where[512] = {};
  if (g_rank == 0) {
    std::string s = std::getenv("ENGINE_RENDEZVOUS")
                        ? std::getenv("ENGINE_RENDEZVOUS")
                        : "tcp:" + detail::host_name() + ":" + std::to_string(free_port());
    std::snprintf(where, sizeof where, "%s", s.c_str());
  }
  MPI_Bcast(where, sizeof where, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (g_rank >= g_trainers) return;
  setenv("ENGINE_RANK", std::to_string(g_rank).c_str(), 1);
  setenv("ENGINE_WORLD_SIZE", std::to_string(g_trainers).c_str(), 1);
  setenv("ENGINE_RENDEZVOUS", where, 1);
  setenv("ENGINE_LOCAL_RANK", std::to_string(g_local_trainer).c_str(), 1);
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
  if (g_rank != 0) return;  // a trainer rank: engine/replica takes it from here
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
