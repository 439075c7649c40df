// Rank 0's side of the benchmark workers: the roster (hellos, heartbeats, workers dropped
// when silent), the machine kinds checked, and a batch spread over the live workers in
// chunks, each with a deadline, lost chunks sent again.

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <deque>
#include <map>
#include <stdexcept>

#include "files/clock.hpp"
#include "parallel/bench_workers/internal.hpp"
#include "parallel/bench_workers/mpi_job.hpp"

namespace cluster::mpi {

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

// A record's same_code_as counts within the request that measured it: `items` says where
// that request's kernels stand in the whole batch.
void to_batch_index(nlohmann::json& record, const std::vector<size_t>& items) {
  if (record.contains("same_code_as")) record["same_code_as"] = items.at(record["same_code_as"].get<size_t>());
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
        to_batch_index(recs[k], left);
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
        to_batch_index(recs[k], c.items);
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

std::mutex g_dispatch;

nlohmann::json spread(const std::vector<std::string>& sources, const bench::EvalOptions& opts, bool reference) {
  std::lock_guard lock(g_dispatch);
  await_hellos();
  check_kinds(false);
  return dispatch(sources, opts, reference);
}

}  // namespace cluster::mpi
