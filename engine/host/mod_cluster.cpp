// engine.cluster: the benchmark workers of an MPI launch (engine/parallel/bench_workers) for scripts.
//
//   cluster.size()                 -- processes in the job (1 without mpirun)
//   cluster.shares_cores()         -- true: a worker times kernels on this process's cores
//   for _, w in ipairs(cluster.workers()) do print(w.rank, w.host, w.kind, w.alive) end
//   cluster.configure{worker_timeout = 30, mixed_nodes = false}
//
// bench.evaluate, bench.evaluate_batch and bench.reference go to the workers when there
// are any; each result's `node` says which one measured it.
#include "parallel/bench_workers/cluster.hpp"
#include "host/bind.hpp"
#include "host/luajson.hpp"

namespace host {

static int cluster_size(lua_State* L) {
  lua_pushinteger(L, cluster::size());
  return 1;
}

// cluster.shares_cores(): whether this process (rank 0) runs on cores a worker times
// kernels on (ENGINE_RANK0_CORES reserves some for it).
static int cluster_shares_cores(lua_State* L) {
  lua_pushboolean(L, cluster::rank0_shares_cores());
  return 1;
}

// {rank, host, pid, machine, kind, alive, lost, kernels, busy_seconds} for each worker.
static int cluster_workers(lua_State* L) {
  auto ws = cluster::workers();
  lua_createtable(L, static_cast<int>(ws.size()), 0);
  for (size_t i = 0; i < ws.size(); ++i) {
    const auto& w = ws[i];
    lua_createtable(L, 0, 9);
    lua_pushinteger(L, w.rank);
    lua_setfield(L, -2, "rank");
    set_string(L, "host", w.host);
    lua_pushinteger(L, w.pid);
    lua_setfield(L, -2, "pid");
    push_json(L, w.machine);
    lua_setfield(L, -2, "machine");
    set_string(L, "kind", w.kind);
    lua_pushboolean(L, w.alive);
    lua_setfield(L, -2, "alive");
    if (!w.lost.empty()) set_string(L, "lost", w.lost);
    lua_pushinteger(L, w.kernels);
    lua_setfield(L, -2, "kernels");
    set_number(L, "busy_seconds", w.busy_seconds);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

static void push_settings(lua_State* L, const cluster::Settings& s) {
  lua_createtable(L, 0, 2);
  set_number(L, "worker_timeout", s.worker_timeout);
  lua_pushboolean(L, s.mixed_nodes);
  lua_setfield(L, -2, "mixed_nodes");
}

// cluster.configure{worker_timeout =, mixed_nodes =}: changes the given settings and
// returns them all.
static int cluster_configure(lua_State* L) {
  auto s = cluster::settings();
  Options t(L, 1, "cluster.configure");
  t.get("worker_timeout", s.worker_timeout);
  t.get("mixed_nodes", s.mixed_nodes);
  t.done();
  try {
    cluster::configure(s);
  } catch (const std::invalid_argument& e) {
    throw Error(std::string("cluster.configure: ") + e.what());
  }
  push_settings(L, s);
  return 1;
}

static int cluster_settings(lua_State* L) {
  push_settings(L, cluster::settings());
  return 1;
}

static int cluster_local_kind(lua_State* L) {
  lua_pushstring(L, cluster::local_kind().c_str());
  return 1;
}

int open_cluster(lua_State* L) {
  lua_newtable(L);
  set_functions(L, {HOST_FN("size", cluster_size), HOST_FN("shares_cores", cluster_shares_cores), HOST_FN("workers", cluster_workers),
                    HOST_FN("configure", cluster_configure), HOST_FN("settings", cluster_settings),
                    HOST_FN("local_kind", cluster_local_kind)});
#ifdef ENGINE_WITH_MPI
  lua_pushboolean(L, 1);
#else
  lua_pushboolean(L, 0);
#endif
  lua_setfield(L, -2, "mpi");  // whether this engine was built with MPI
  return 1;
}

}  // namespace host
