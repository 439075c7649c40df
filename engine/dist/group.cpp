#include "dist/group.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstring>
#include <map>
#include <stdexcept>
#include <utility>

#include "dist/tensors.hpp"

#if ENGINE_HAS_GLOO
#define USE_C10D_GLOO 1
#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#endif
#ifndef ENGINE_HAS_NCCL
#define ENGINE_HAS_NCCL 0
#endif
#if ENGINE_HAS_NCCL
#define USE_C10D_NCCL 1
#include <torch/csrc/distributed/c10d/HashStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace dist {

struct Group::Impl {
  int rank = 0, size = 1;
  std::string store, backend;
  std::map<std::string, int64_t> counters;  // a group of one keeps its counters here
#if ENGINE_HAS_GLOO
  c10::intrusive_ptr<c10d::Store> kv;
  c10::intrusive_ptr<c10d::ProcessGroupGloo> pg;  // null in a group of one
#endif
#if ENGINE_HAS_NCCL
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> nccl;  // GPU tensors, with "nccl"
#endif

  std::string who() const {
    return "dist: rank " + std::to_string(rank) + " of " + std::to_string(size);
  }
};

bool available() { return ENGINE_HAS_GLOO; }
bool nccl_available() { return ENGINE_HAS_NCCL; }

Group::Group(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Group::~Group() = default;

void Group::shutdown() {
#if ENGINE_HAS_NCCL
  if (!impl_->nccl) return;
  try {
    impl_->nccl->shutdown();
  } catch (const std::exception&) {
    // A peer already gone: its communicators are torn down all the same.
  }
  impl_->nccl.reset();
#endif
}
int Group::rank() const { return impl_->rank; }
int Group::size() const { return impl_->size; }
const std::string& Group::backend() const { return impl_->backend; }

#if ENGINE_HAS_GLOO
// c10d's messages carry a backtrace; the first line says what happened.
static std::string first_line(const c10::Error& e) {
  std::string s = e.what_without_backtrace();
  return s.substr(0, s.find('\n'));
}

// The host's gloo device. libtorch 2 added a flag (lazy initialisation) to the factory;
// the first overload is taken where it compiles.
template <class PG>
static auto default_device(int) -> decltype(PG::createDefaultDevice(false)) {
  return PG::createDefaultDevice(false);
}
template <class PG>
static auto default_device(long) {
  return PG::createDefaultDevice();
}

static c10::intrusive_ptr<c10d::Store> open_store(const Rendezvous& r,
                                                  std::chrono::milliseconds timeout) {
  const std::string& s = r.store;
  if (s.rfind("file:", 0) == 0 && s.size() > 5) {
    auto store = c10::make_intrusive<c10d::FileStore>(s.substr(5), r.size);
    store->setTimeout(timeout);
    return store;
  }
  if (s.rfind("tcp:", 0) == 0) {
    auto colon = s.rfind(':');
    std::string host = s.substr(4, colon - 4), port = s.substr(colon + 1);
    int p = 0;
    try { p = std::stoi(port); } catch (...) { p = 0; }
    if (colon <= 4 || host.empty() || p <= 0 || p > 65535)
      throw std::invalid_argument("the store '" + s + "' is not tcp:HOST:PORT");
    c10d::TCPStoreOptions o;
    o.port = static_cast<uint16_t>(p);
    o.isServer = r.rank == 0;
    o.numWorkers = r.size;
    o.timeout = timeout;
    return c10::make_intrusive<c10d::TCPStore>(host, o);
  }
  throw std::invalid_argument("the store '" + s + "' is neither file:PATH nor tcp:HOST:PORT");
}
#endif

#if ENGINE_HAS_NCCL
// NCCL on the ranks' GPUs, meeting through their own keys of the store. Communicators
// are made at the first collective, on the device of its tensors.
static c10::intrusive_ptr<c10d::ProcessGroupNCCL> join_nccl(const c10::intrusive_ptr<c10d::Store>& kv,
                                                            const Rendezvous& r,
                                                            std::chrono::milliseconds timeout) {
  auto opts = c10d::ProcessGroupNCCL::Options::create();
  opts->timeout = timeout;
  return c10::make_intrusive<c10d::ProcessGroupNCCL>(c10::make_intrusive<c10d::PrefixStore>("nccl", kv),
                                                     r.rank, r.size, opts);
}
#endif

std::shared_ptr<Group> Group::join(const Rendezvous& r) {
  if (r.size < 1 || r.rank < 0 || r.rank >= r.size)
    throw std::invalid_argument("dist: rank " + std::to_string(r.rank) + " is not one of " +
                                std::to_string(r.size) + " ranks");
  if (!(r.timeout_s > 0)) throw std::invalid_argument("dist: the timeout must be positive");
  if (r.backend != "gloo" && r.backend != "nccl")
    throw std::invalid_argument("dist: the backend '" + r.backend + "' is neither gloo nor nccl");
  auto impl = std::make_unique<Impl>();
  impl->rank = r.rank;
  impl->size = r.size;
  impl->store = r.store;
  impl->backend = r.backend;
  if (r.backend == "nccl" && !nccl_available())
    throw std::runtime_error(impl->who() + ": this engine was built without NCCL (its libtorch has no "
                             "c10d NCCL backend, or nccl.h was not found): use the gloo backend");
  if (r.size == 1 && r.backend == "gloo") return std::shared_ptr<Group>(new Group(std::move(impl)));
#if ENGINE_HAS_GLOO
  // A peer that stops closes its sockets; writing to one must fail the collective with an
  // error this rank reports, not kill the process with SIGPIPE.
  std::signal(SIGPIPE, SIG_IGN);
  auto timeout = std::chrono::milliseconds(static_cast<int64_t>(r.timeout_s * 1000));
  try {
#if ENGINE_HAS_NCCL
    if (r.size == 1) {  // an NCCL group of one: its store need not be shared
      impl->nccl = join_nccl(c10::make_intrusive<c10d::HashStore>(), r, timeout);
      return std::shared_ptr<Group>(new Group(std::move(impl)));
    }
#endif
    impl->kv = open_store(r, timeout);
    auto opts = c10d::ProcessGroupGloo::Options::create(timeout);
    opts->devices.push_back(default_device<c10d::ProcessGroupGloo>(0));
    impl->pg = c10::make_intrusive<c10d::ProcessGroupGloo>(impl->kv, r.rank, r.size, opts);
#if ENGINE_HAS_NCCL
    if (r.backend == "nccl") impl->nccl = join_nccl(impl->kv, r, timeout);
#endif
  } catch (const c10::Error& e) {
    throw std::runtime_error(impl->who() + " could not join through " + r.store + ": " + first_line(e));
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(impl->who() + ": " + e.what());
  } catch (const std::exception& e) {
    throw std::runtime_error(impl->who() + " could not join through " + r.store + ": " + e.what());
  }
  return std::shared_ptr<Group>(new Group(std::move(impl)));
#else
  throw std::runtime_error(impl->who() + ": this engine was built without gloo (libgloo-dev), "
                           "so it runs one rank only");
#endif
}

#if ENGINE_HAS_GLOO
// Runs one collective, turning c10d's failure into this rank's error.
template <class F>
static void collective(Group::Impl& g, const char* what, F&& f) {
  try {
    f()->wait();
  } catch (const c10::Error& e) {
    throw std::runtime_error(g.who() + ": " + what + " failed (did another rank stop?): " + first_line(e));
  } catch (const std::exception& e) {
    throw std::runtime_error(g.who() + ": " + what + " failed (did another rank stop?): " + e.what());
  }
}
#endif

void Group::barrier() {
#if ENGINE_HAS_GLOO
  if (impl_->size > 1) collective(*impl_, "barrier", [&] { return impl_->pg->barrier(); });
#endif
}

void Group::broadcast(std::string& msg, int root) {
#if ENGINE_HAS_GLOO
  if (impl_->size == 1) return;
  c10d::BroadcastOptions o;
  o.rootRank = root;
  std::vector<at::Tensor> length{at::tensor({static_cast<int64_t>(msg.size())}, at::kLong)};
  collective(*impl_, "a message", [&] { return impl_->pg->broadcast(length, o); });
  const int64_t n = length[0].item<int64_t>();
  if (n == 0) {
    msg.clear();
    return;
  }
  std::vector<at::Tensor> bytes{impl_->rank == root
                                    ? at::from_blob(msg.data(), {n}, at::kByte).clone()
                                    : at::empty({n}, at::kByte)};
  collective(*impl_, "a message", [&] { return impl_->pg->broadcast(bytes, o); });
  msg.assign(static_cast<const char*>(bytes[0].data_ptr()), static_cast<size_t>(n));
#else
  (void)msg;
  (void)root;
#endif
}

std::vector<std::string> Group::all_gather(const std::string& msg) {
  if (impl_->size == 1) return {msg};
#if ENGINE_HAS_GLOO
  auto gather = [&](at::Tensor mine) {
    std::vector<std::vector<at::Tensor>> out(1);
    for (int r = 0; r < impl_->size; ++r) out[0].push_back(at::empty_like(mine));
    std::vector<at::Tensor> in{mine};
    collective(*impl_, "gathering messages", [&] { return impl_->pg->allgather(out, in); });
    return out[0];
  };
  auto lengths = gather(at::tensor({static_cast<int64_t>(msg.size())}, at::kLong));
  int64_t longest = 0;
  for (auto& l : lengths) longest = std::max(longest, l.item<int64_t>());
  at::Tensor mine = at::zeros({std::max<int64_t>(longest, 1)}, at::kByte);
  if (!msg.empty()) std::memcpy(mine.data_ptr(), msg.data(), msg.size());
  auto bytes = gather(mine);
  std::vector<std::string> all;
  for (int r = 0; r < impl_->size; ++r)
    all.emplace_back(static_cast<const char*>(bytes[r].data_ptr()),
                     static_cast<size_t>(lengths[r].item<int64_t>()));
  return all;
#else
  return {msg};
#endif
}

int64_t Group::counter(const std::string& key, int64_t delta) {
#if ENGINE_HAS_GLOO
  if (impl_->kv) {
    try {
      return impl_->kv->add(key, delta);
    } catch (const c10::Error& e) {
      throw std::runtime_error(impl_->who() + ": the store " + impl_->store +
                               " failed (did rank 0 stop?): " + first_line(e));
    } catch (const std::exception& e) {
      throw std::runtime_error(impl_->who() + ": the store " + impl_->store +
                               " failed (did rank 0 stop?): " + e.what());
    }
  }
#endif
  auto& value = impl_->counters[key];
  value += delta;
  return value;
}

#if ENGINE_HAS_GLOO
// Tensors of one dtype and device travel as one flat buffer: one collective, not one per
// parameter. `op(process_group, buffer, what)` runs it: on the GPU under NCCL, else over
// gloo through host memory; a group of one without NCCL has nothing to do.
template <class Op>
static void flat(Group& g, std::vector<at::Tensor>& tensors, Op&& op) {
  auto& impl = g.impl();
  std::map<std::pair<int, std::string>, std::vector<at::Tensor*>> buckets;
  for (auto& t : tensors)
    buckets[{static_cast<int>(t.scalar_type()), t.device().str()}].push_back(&t);
  for (auto& [key, ts] : buckets) {
    std::vector<at::Tensor> views;
    for (auto* t : ts) views.push_back(t->reshape({-1}));
    at::Tensor buf = at::cat(views);
    bool on_device = false;
#if ENGINE_HAS_NCCL
    on_device = buf.is_cuda() && impl.nccl;
    if (on_device) op(*impl.nccl, buf, " (NCCL)");
#endif
    if (!on_device) {
      if (g.size() == 1) continue;
      if (!buf.is_cpu()) buf = buf.cpu();
      op(*impl.pg, buf, "");
    }
    int64_t offset = 0;
    for (auto* t : ts) {
      int64_t n = t->numel();
      t->copy_(buf.narrow(0, offset, n).view(t->sizes()));
      offset += n;
    }
  }
}
#endif

// A group of one without NCCL, or a build without gloo, has no process group at all.
static bool alone(Group& g) {
#if ENGINE_HAS_NCCL
  if (g.impl().nccl) return false;
#endif
  return g.size() == 1;
}

void sum(Group& g, std::vector<at::Tensor>& tensors) {
  if (alone(g) || tensors.empty()) return;
#if ENGINE_HAS_GLOO
  flat(g, tensors, [&](auto& pg, at::Tensor& buf, const std::string& how) {
    std::vector<at::Tensor> one{buf};
    collective(g.impl(), ("the sum of gradients" + how).c_str(), [&] { return pg.allreduce(one); });
  });
#endif
}

void broadcast(Group& g, std::vector<at::Tensor>& tensors, int root) {
  if (alone(g) || tensors.empty()) return;
#if ENGINE_HAS_GLOO
  c10d::BroadcastOptions o;
  o.rootRank = root;
  flat(g, tensors, [&](auto& pg, at::Tensor& buf, const std::string& how) {
    std::vector<at::Tensor> one{buf};
    collective(g.impl(), ("a broadcast" + how).c_str(), [&] { return pg.broadcast(one, o); });
  });
#endif
}

}  // namespace dist
