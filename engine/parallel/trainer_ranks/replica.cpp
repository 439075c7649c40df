#include "parallel/trainer_ranks/replica.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <stdexcept>
#include <thread>

#include "parallel/rendezvous/rendezvous.hpp"
#include "dist/group.hpp"
#include "parallel/trainer_ranks/wire.hpp"

namespace policy {
// The wire fields of what crosses ranks (wire.hpp finds these by argument type).
template <class IO>
void fields(IO& io, LoadOptions& o) {
  io(o.device), io(o.dtype), io(o.threads), io(o.cuda_graphs), io(o.random_weights);
}
template <class IO>
void fields(IO& io, SampleOptions& o) {
  io(o.n), io(o.temperature), io(o.top_p), io(o.top_k), io(o.max_tokens), io(o.stop);
  io(o.stop_tokens), io(o.ignore_eos), io(o.seed);
}
template <class IO>
void fields(IO& io, Completion& c) {
  io(c.tokens), io(c.logprobs), io(c.text), io(c.finish_reason);
}
}  // namespace policy

namespace train {
template <class IO>
void fields(IO& io, LoraSettings& l) {
  io(l.r), io(l.alpha), io(l.dropout), io(l.targets);
}
template <class IO>
void fields(IO& io, UpdateOptions& u) {
  io(u.lr), io(u.beta1), io(u.beta2), io(u.eps), io(u.weight_decay), io(u.max_grad_norm);
  io(u.micro_batch), io(u.micro_tokens), io(u.tf32), io(u.grad_checkpoint), io(u.grad_checkpoint_layers);
  io(u.lora), io(u.seed);
}
template <class IO>
void fields(IO& io, GrpoOptions& g) {
  fields(io, static_cast<UpdateOptions&>(g));
  io(g.beta), io(g.clip), io(g.clip_high), io(g.loss), io(g.scale_rewards), io(g.importance);
  io(g.num_iterations), io(g.mask_truncated), io(g.temperature), io(g.max_completion_length);
  io(g.adv_eps);
}
template <class IO>
void fields(IO& io, Group& g) {
  io(g.prompt), io(g.completions), io(g.rewards), io(g.advantages);
}
template <class IO>
void fields(IO& io, Example& e) {
  io(e.prompt), io(e.completion);
}
}  // namespace train

namespace replica {

namespace {

enum Op : uint8_t {
  kStop, kLoadPolicy, kSample, kGrpo, kSft, kStepGrpo, kStepSft, kLoad, kSetLr,
  kReleasePolicy, kReleaseTrainer
};

const char* const kCommands = "replica/commands";

struct Team {
  std::shared_ptr<dist::Group> group;  // null when alone
  int local_rank = 0;
  bool stopped = false;
  int64_t next_id = 1;
  // The leader's objects and the ids the followers know them by.
  std::map<const policy::Policy*, int64_t> policy_ids;
  std::map<const train::Trainer*, int64_t> trainer_ids;
  // A follower's copies.
  std::map<int64_t, std::shared_ptr<policy::Policy>> policies;
  std::map<int64_t, std::unique_ptr<train::Trainer>> trainers;

  int rank() const { return group ? group->rank() : 0; }
  int ranks() const { return group ? group->size() : 1; }
  bool leading() const { return group && group->rank() == 0 && !stopped; }
};

Team& team() {
  static Team t;
  return t;
}

// The leader sends a command: the counter wakes the followers, the broadcast carries it.
void send(Op op, const std::string& body) {
  auto& t = team();
  std::string msg(1, static_cast<char>(op));
  msg += body;
  try {
    t.group->counter(kCommands, 1);
    t.group->broadcast(msg, 0);
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string(e.what()) +
                             "; the run is as its last write left it (--resume continues it)");
  }
}

// Every rank's failure (empty: none), gathered; throws the first one on every rank.
void settle(const std::string& mine, const char* what) {
  auto all = team().group->all_gather(mine);
  for (size_t r = 0; r < all.size(); ++r)
    if (!all[r].empty())
      throw std::runtime_error("replica: " + std::string(what) + " failed on rank " + std::to_string(r) +
                               ": " + all[r]);
}

template <class F>
std::string attempt(F&& f) {
  try {
    f();
    return "";
  } catch (const std::exception& e) {
    return e.what();
  }
}

template <class T>
std::string encode(const T& v) {
  Writer w;
  w(v);
  return w.take();
}

policy::LoadOptions local_options(policy::LoadOptions o) {
  if (team().ranks() > 1 && o.device.rfind("cuda", 0) == 0)
    o.device = device_for(o.device, team().local_rank, policy::cuda_devices());
  return o;
}

using Groups = std::vector<std::vector<policy::Completion>>;

bool split_samples(const policy::SampleOptions& o, int ranks) { return o.n >= ranks; }

// This rank's part of a sample call.
Groups sample_share(policy::Policy& pol, const std::vector<std::vector<int>>& prompts,
                    policy::SampleOptions o, int rank, int ranks) {
  if (split_samples(o, ranks)) {
    o.n = o.n / ranks + (rank < o.n % ranks ? 1 : 0);
    if (o.seed) *o.seed += static_cast<uint64_t>(rank);
    return pol.sample(prompts, o);
  }
  std::vector<std::vector<int>> mine;
  for (size_t i = rank; i < prompts.size(); i += ranks) mine.push_back(prompts[i]);
  if (mine.empty()) return {};
  return pol.sample(mine, o);
}

// The ranks' parts, back in the order of one call.
Groups merge(const std::vector<Groups>& parts, size_t prompts, bool split) {
  Groups out(prompts);
  for (size_t i = 0; i < prompts; ++i) {
    if (split) {
      for (const auto& part : parts)
        out[i].insert(out[i].end(), part.at(i).begin(), part.at(i).end());
    } else {
      out[i] = parts.at(i % parts.size()).at(i / parts.size());
    }
  }
  return out;
}

// A part travels as "O" and its groups, or "E" and what went wrong.
std::string sample_answer(policy::Policy& pol, const std::vector<std::vector<int>>& prompts,
                          const policy::SampleOptions& o, int rank, int ranks) {
  try {
    return "O" + encode(sample_share(pol, prompts, o, rank, ranks));
  } catch (const std::exception& e) {
    return std::string("E") + e.what();
  }
}

template <class Map, class Key>
auto& find(Map& m, const Key& id, const char* what) {
  auto it = m.find(id);
  if (it == m.end()) throw std::runtime_error(std::string("replica: no ") + what + " " + std::to_string(id));
  return it->second;
}

// --- the follower --------------------------------------------------------------------

void serve_one(Op op, Reader& in) {
  auto& t = team();
  switch (op) {
    case kLoadPolicy: {
      auto id = in.read<int64_t>();
      auto dir = in.read<std::string>();
      auto o = in.read<policy::LoadOptions>();
      std::shared_ptr<policy::Policy> pol;
      auto err = attempt([&] { pol = policy::Policy::load(dir, local_options(o)); });
      settle(err, "loading the policy");
      t.policies[id] = std::move(pol);
      break;
    }
    case kSample: {
      auto id = in.read<int64_t>();
      auto prompts = in.read<std::vector<std::vector<int>>>();
      auto o = in.read<policy::SampleOptions>();
      auto& pol = *find(t.policies, id, "policy");
      t.group->all_gather(sample_answer(pol, prompts, o, t.rank(), t.ranks()));
      break;
    }
    case kGrpo:
    case kSft: {
      auto id = in.read<int64_t>();
      auto pol = find(t.policies, in.read<int64_t>(), "policy");
      std::unique_ptr<train::Trainer> trainer;
      std::string err;
      if (op == kGrpo) {
        auto o = in.read<train::GrpoOptions>();
        err = attempt([&] { trainer = train::Trainer::grpo(pol, o); });
      } else {
        auto o = in.read<train::UpdateOptions>();
        err = attempt([&] { trainer = train::Trainer::sft(pol, o); });
      }
      settle(err, "building the trainer");
      trainer->join(t.group);
      t.trainers[id] = std::move(trainer);
      break;
    }
    case kStepGrpo: {
      auto& trainer = *find(t.trainers, in.read<int64_t>(), "trainer");
      trainer.step(in.read<std::vector<train::Group>>());
      break;
    }
    case kStepSft: {
      auto& trainer = *find(t.trainers, in.read<int64_t>(), "trainer");
      trainer.step(in.read<std::vector<train::Example>>());
      break;
    }
    case kLoad: {
      auto& trainer = *find(t.trainers, in.read<int64_t>(), "trainer");
      auto dir = in.read<std::string>();
      settle(attempt([&] { trainer.load(dir); }), "loading the checkpoint");
      break;
    }
    case kSetLr: {
      auto& trainer = *find(t.trainers, in.read<int64_t>(), "trainer");
      trainer.set_lr(in.read<double>());
      break;
    }
    case kReleasePolicy: t.policies.erase(in.read<int64_t>()); break;
    case kReleaseTrainer: t.trainers.erase(in.read<int64_t>()); break;
    default: throw std::runtime_error("replica: unknown command " + std::to_string(op));
  }
}

// Waits for the leader's next command without a collective (the leader may think, or
// evaluate, for longer than any timeout), then takes it.
std::string next_command(int64_t taken) {
  auto& t = team();
  auto pause = std::chrono::microseconds(200);
  while (t.group->counter(kCommands, 0) <= taken) {
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::microseconds(20000));
  }
  std::string msg;
  t.group->broadcast(msg, 0);
  return msg;
}

int serve() {
  auto& t = team();
  const std::string who = "engine: rank " + std::to_string(t.rank()) + " of " + std::to_string(t.ranks());
  for (int64_t taken = 0;; ++taken) {
    std::string msg;
    try {
      msg = next_command(taken);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "%s: stopping: %s\n", who.c_str(), e.what());
      return 1;
    }
    if (msg.empty()) continue;
    const auto op = static_cast<Op>(msg[0]);
    if (op == kStop) return 0;
    const std::string body = msg.substr(1);
    Reader in(body);
    try {
      serve_one(op, in);
    } catch (const std::exception& e) {
      // The leader fails the same call and reports it; a broken team shows at the next
      // command.
      std::fprintf(stderr, "%s: %s\n", who.c_str(), e.what());
    }
  }
}

template <class T>
std::shared_ptr<T> with_release(std::unique_ptr<T> obj) {
  return std::shared_ptr<T>(obj.release(), [](T* p) {
    release(p);
    delete p;
  });
}

}  // namespace

std::string device_for(const std::string& device, int local_rank, int cuda_devices) {
  if (device.rfind("cuda", 0) != 0 || cuda_devices <= 0) return device;
  int first = 0;
  if (device.size() > 5 && device[4] == ':') first = std::atoi(device.c_str() + 5);
  return "cuda:" + std::to_string((first + local_rank) % cuda_devices);
}

// NCCL needs a GPU of its own per rank: chosen by itself only where this node's ranks
// are known to have one each.
static std::string backend_for(const std::string& asked, int local_ranks) {
  if (!asked.empty()) return asked;
  if (!dist::nccl_available() || local_ranks == 0) return "gloo";
  return policy::cuda_devices() >= local_ranks ? "nccl" : "gloo";
}

std::optional<int> start() {
  const auto place = rendezvous::read();
  if (!place) return std::nullopt;
  dist::Rendezvous r;
  r.rank = place->rank;
  r.size = place->size;
  r.store = place->store;
  if (place->timeout_s > 0) r.timeout_s = place->timeout_s;
  auto& t = team();
  t.local_rank = place->local_rank;
  if (r.size == 1) return std::nullopt;
  r.backend = backend_for(place->backend, place->local_size);
  t.group = dist::Group::join(r);
  if (r.rank == 0) return std::nullopt;
  const int status = serve();
  t.group->shutdown();
  return status;
}

void stop() {
  auto& t = team();
  if (!t.leading()) return;
  try {
    send(kStop, "");
  } catch (const std::exception&) {
    // A follower already gone has nothing left to stop.
  }
  t.stopped = true;
  t.group->shutdown();
}

int size() { return team().ranks(); }

std::shared_ptr<policy::Policy> load_policy(const std::string& dir, const policy::LoadOptions& o) {
  auto& t = team();
  if (!t.leading()) return policy::Policy::load(dir, local_options(o));
  const int64_t id = t.next_id++;
  Writer w;
  w(id), w(dir), w(o);
  send(kLoadPolicy, w.take());
  std::unique_ptr<policy::Policy> pol;
  // A failure on any rank fails the call on all: no rank keeps the policy.
  settle(attempt([&] { pol = policy::Policy::load(dir, local_options(o)); }), "loading the policy");
  auto shared = with_release(std::move(pol));
  t.policy_ids[shared.get()] = id;
  return shared;
}

std::vector<std::vector<policy::Completion>> sample(policy::Policy& pol,
                                                    const std::vector<std::vector<int>>& prompts,
                                                    const policy::SampleOptions& o) {
  auto& t = team();
  auto it = t.policy_ids.find(&pol);
  if (!t.leading() || it == t.policy_ids.end()) return pol.sample(prompts, o);
  Writer w;
  w(it->second), w(prompts), w(o);
  send(kSample, w.take());
  auto answers = t.group->all_gather(sample_answer(pol, prompts, o, 0, t.ranks()));
  std::vector<Groups> parts;
  for (size_t r = 0; r < answers.size(); ++r) {
    const std::string& a = answers[r];
    if (a.empty() || a[0] != 'O')
      throw std::runtime_error("pol:sample failed on rank " + std::to_string(r) + ": " +
                               (a.empty() ? std::string("no answer") : a.substr(1)));
    const std::string body = a.substr(1);
    Reader in(body);
    parts.push_back(in.read<Groups>());
  }
  return merge(parts, prompts.size(), split_samples(o, t.ranks()));
}

template <class Options>
static std::shared_ptr<train::Trainer> build(Op op, std::shared_ptr<policy::Policy> pol, const Options& o) {
  auto& t = team();
  auto make = [&] {
    if constexpr (std::is_same_v<Options, train::GrpoOptions>) return train::Trainer::grpo(pol, o);
    else return train::Trainer::sft(pol, o);
  };
  auto it = t.policy_ids.find(pol.get());
  if (!t.leading() || it == t.policy_ids.end()) return make();
  const int64_t id = t.next_id++;
  Writer w;
  w(id), w(it->second), w(o);
  send(op, w.take());
  std::unique_ptr<train::Trainer> trainer;
  settle(attempt([&] { trainer = make(); }), "building the trainer");
  trainer->join(t.group);
  auto shared = with_release(std::move(trainer));
  t.trainer_ids[shared.get()] = id;
  return shared;
}

std::shared_ptr<train::Trainer> grpo(std::shared_ptr<policy::Policy> pol, const train::GrpoOptions& o) {
  return build(kGrpo, std::move(pol), o);
}

std::shared_ptr<train::Trainer> sft(std::shared_ptr<policy::Policy> pol, const train::UpdateOptions& o) {
  return build(kSft, std::move(pol), o);
}

// The id of a trainer the followers mirror, or nullopt (alone, or a trainer of its own).
static std::optional<int64_t> mirrored(const train::Trainer& tr) {
  auto& t = team();
  auto it = t.trainer_ids.find(&tr);
  if (!t.leading() || it == t.trainer_ids.end()) return std::nullopt;
  return it->second;
}

train::StepStats step(train::Trainer& tr, const std::vector<train::Group>& groups) {
  if (auto id = mirrored(tr)) {
    Writer w;
    w(*id), w(groups);
    send(kStepGrpo, w.take());
  }
  return tr.step(groups);
}

train::StepStats step(train::Trainer& tr, const std::vector<train::Example>& examples) {
  if (auto id = mirrored(tr)) {
    Writer w;
    w(*id), w(examples);
    send(kStepSft, w.take());
  }
  return tr.step(examples);
}

void load(train::Trainer& tr, const std::filesystem::path& dir) {
  auto id = mirrored(tr);
  if (!id) return tr.load(dir);
  Writer w;
  w(*id), w(dir.string());
  send(kLoad, w.take());
  settle(attempt([&] { tr.load(dir); }), "loading the checkpoint");
}

void set_lr(train::Trainer& tr, double lr) {
  if (auto id = mirrored(tr)) {
    Writer w;
    w(*id), w(lr);
    send(kSetLr, w.take());
  }
  tr.set_lr(lr);
}

// The leader forgets an object's id and tells the followers to drop their copy.
template <class T>
static void forget(std::map<const T*, int64_t>& ids, const T* obj, Op op) {
  auto it = ids.find(obj);
  if (it == ids.end()) return;
  const int64_t id = it->second;
  ids.erase(it);
  if (!team().leading()) return;
  try {
    send(op, encode(id));
  } catch (const std::exception&) {
    // A broken team shows at the next command that matters.
  }
}

void release(const policy::Policy* pol) { forget(team().policy_ids, pol, kReleasePolicy); }
void release(const train::Trainer* tr) { forget(team().trainer_ids, tr, kReleaseTrainer); }

}  // namespace replica
