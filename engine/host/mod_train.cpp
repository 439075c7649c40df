// engine.train: GRPO and SFT updates of a policy (engine/train) for scripts.
//
//   local trainer = train.grpo(pol, {lr = 5e-7, beta = 0, lora = {r = 32, alpha = 64}})
//   local stats = trainer:step{{prompt = text, completions = pol:sample(...)[1], rewards = rs}}
//   (completions as pol:sample returns them carry their prompt: `prompt` may be left out;
//   completions given as tables {tokens =, logprobs =} need it; `advantages`, one per
//   completion in every group, replace the group-normalised ones: multi-turn returns)
//   trainer:save(dir); trainer:load(dir); trainer:export(dir, {adapter = true})
#include "host/bind.hpp"
#include "host/mod_policy.hpp"
#include "parallel/trainer_ranks/replica.hpp"
#include "train/advantages.hpp"
#include "train/micro_batches.hpp"
#include "train/trainer.hpp"

namespace host {

template <>
const char* Class<train::Trainer>::name = "engine.train.Trainer";

static train::Trainer& self(lua_State* L, const char* where) {
  return check_object<train::Trainer>(L, 1, where);
}

// Options shared by GRPO and SFT trainers.
static void read_update_options(Options& o, lua_State* L, train::UpdateOptions& u, const char* where) {
  o.get("lr", u.lr);
  o.get("weight_decay", u.weight_decay);
  o.get("eps", u.eps);
  o.get("max_grad_norm", u.max_grad_norm);
  o.get("micro_batch", u.micro_batch);
  o.get("micro_tokens", u.micro_tokens);
  o.get("least_padding", u.least_padding);
  o.get("tf32", u.tf32);
  o.get("grad_checkpoint", u.grad_checkpoint);
  o.get("grad_checkpoint_layers", u.grad_checkpoint_layers);
  int64_t seed = 0;
  o.get("seed", seed);
  u.seed = static_cast<uint64_t>(seed);
  o.push("betas");
  if (!lua_isnil(L, -1)) {
    if (!lua_istable(L, -1) || luaL_len(L, -1) != 2)
      throw Error(std::string(where) + ": option 'betas' must be {beta1, beta2}");
    lua_geti(L, -1, 1);
    u.beta1 = check_number(L, -1, where, "betas[1]");
    lua_geti(L, -2, 2);
    u.beta2 = check_number(L, -1, where, "betas[2]");
    lua_pop(L, 2);
  }
  lua_pop(L, 1);
  o.push("lora");
  if (!lua_isnil(L, -1)) {
    train::LoraSettings lora;
    Options lo(L, -1, (std::string(where) + " lora").c_str());
    lo.get("r", lora.r);
    lo.get("alpha", lora.alpha);
    lo.get("dropout", lora.dropout);
    lo.get("targets", lora.targets);
    lo.done();
    u.lora = lora;
  }
  lua_pop(L, 1);
}

static std::shared_ptr<policy::Policy> check_policy(lua_State* L, const char* where) {
  return check_shared<policy::Policy>(L, 1, where);
}

static int train_grpo(lua_State* L) {
  auto pol = check_policy(L, "train.grpo");
  train::GrpoOptions g;
  Options o(L, 2, "train.grpo");
  read_update_options(o, L, g, "train.grpo");
  o.get("beta", g.beta);
  o.get("clip", g.clip);
  std::optional<double> clip_high;
  o.get("clip_high", clip_high);
  g.clip_high = clip_high;
  o.get("loss", g.loss, {"grpo", "bnpo", "dr_grpo", "dapo"});
  o.get("scale_rewards", g.scale_rewards, {"group", "batch", "none"});
  o.get("importance", g.importance, {"token", "sequence"});
  o.get("num_iterations", g.num_iterations);
  o.get("mask_truncated", g.mask_truncated);
  o.get("temperature", g.temperature);
  o.get("max_completion_length", g.max_completion_length);
  o.done();
  if (g.micro_tokens != 0)  // a GRPO step's micro-batches keep their groups' rows together
    throw Error("train.grpo: micro_tokens is an SFT option (use micro_batch)");
  push_object(L, replica::grpo(pol, g));
  // The trainer's policy, for ids <-> text when stepping.
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);
  return 1;
}

static int train_sft(lua_State* L) {
  auto pol = check_policy(L, "train.sft");
  train::UpdateOptions u;
  Options o(L, 2, "train.sft");
  read_update_options(o, L, u, "train.sft");
  o.done();
  push_object(L, replica::sft(pol, u));
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);
  return 1;
}

static policy::Policy& trainer_policy(lua_State* L, const char* where) {
  lua_getiuservalue(L, 1, 1);
  auto& pol = check_object<policy::Policy>(L, -1, where);
  lua_pop(L, 1);
  return pol;
}

// Calls item(what) with each element of the list at idx on top of the stack, `what`
// naming it ("groups[2]"); the stack is restored after each. `where` names the call.
template <class F>
static void each(lua_State* L, int idx, const char* where, const std::string& what, F&& item) {
  idx = lua_absindex(L, idx);
  if (!lua_istable(L, idx)) throw Error(std::string(where) + ": " + what + " must be a list");
  const lua_Integer n = luaL_len(L, idx);
  for (lua_Integer i = 1; i <= n; ++i) {
    const int top = lua_gettop(L);
    lua_geti(L, idx, i);
    item(what + "[" + std::to_string(i) + "]");
    lua_settop(L, top);
  }
}

// The field `key` of the table on top of the stack, pushed.
static void field(lua_State* L, const std::string& what, const char* key) {
  if (!lua_istable(L, -1)) throw Error("trainer:step: " + what + " must be a table");
  lua_getfield(L, -1, key);
}

// A completion given as a table: tokens, logprobs, finish_reason.
static policy::Completion read_completion(lua_State* L, const std::string& what) {
  policy::Completion c;
  field(L, what, "tokens");
  if (!lua_istable(L, -1)) throw Error("trainer:step: " + what + ".tokens must be a list of token ids");
  c.tokens = check_ids(L, -1, "trainer:step", what + ".tokens");
  lua_pop(L, 1);
  lua_getfield(L, -1, "logprobs");
  if (!lua_isnil(L, -1)) {
    if (!lua_istable(L, -1)) throw Error("trainer:step: " + what + ".logprobs must be a list of numbers");
    each(L, -1, "trainer:step", what + ".logprobs", [&](const std::string& w) {
      c.logprobs.push_back(static_cast<float>(check_number(L, -1, "trainer:step", w.c_str())));
    });
  }
  lua_pop(L, 1);
  lua_getfield(L, -1, "finish_reason");
  if (lua_isstring(L, -1)) c.finish_reason = lua_tostring(L, -1);
  lua_pop(L, 1);
  return c;
}

// The prompt of a group whose completions are all handles: the ids they were sampled
// after, read from C++ (the prompt need not be given again, and scripts leave it out). A
// `prompt` given too must encode to those ids. nullptr when some completion is a table:
// then `prompt` is required.
static const SampledCompletion* handles_prompt(lua_State* L, const std::string& what) {
  lua_getfield(L, -1, "completions");
  const SampledCompletion* first = nullptr;
  const lua_Integer n = lua_istable(L, -1) ? luaL_len(L, -1) : 0;
  bool all = n > 0;
  for (lua_Integer i = 1; all && i <= n; ++i) {
    lua_geti(L, -1, i);
    const SampledCompletion* c = test_completion(L, -1);
    lua_pop(L, 1);
    if (!c) all = false;
    else if (!first) first = c;
    else if (*c->prompt != *first->prompt)
      throw Error("trainer:step: " + what + ".completions were sampled from different prompts");
  }
  lua_pop(L, 1);
  return all ? first : nullptr;
}

static std::vector<int> group_prompt(lua_State* L, policy::Policy& pol, const std::string& what) {
  const SampledCompletion* sampled = handles_prompt(L, what);
  lua_getfield(L, -1, "prompt");
  std::vector<int> prompt;
  if (!sampled) {
    prompt = check_text_or_ids(L, -1, pol, "trainer:step", what + ".prompt");
  } else {
    prompt = *sampled->prompt;
    if (!lua_isnil(L, -1) && check_text_or_ids(L, -1, pol, "trainer:step", what + ".prompt") != prompt)
      throw Error("trainer:step: " + what + ".prompt is not the prompt its completions were sampled from");
  }
  lua_pop(L, 1);
  return prompt;
}

static std::vector<train::Group> read_groups(lua_State* L, policy::Policy& pol) {
  check_table(L, 2, "trainer:step", "groups");
  std::vector<train::Group> groups;
  each(L, 2, "trainer:step", "groups", [&](const std::string& what) {
    train::Group grp;
    if (!lua_istable(L, -1)) throw Error("trainer:step: " + what + " must be a table");
    grp.prompt = group_prompt(L, pol, what);
    lua_getfield(L, -1, "completions");
    each(L, -1, "trainer:step", what + ".completions", [&](const std::string& w) {
      if (const SampledCompletion* c = test_completion(L, -1)) grp.completions.push_back(c->completion);
      else grp.completions.push_back(read_completion(L, w));
    });
    lua_pop(L, 1);
    lua_getfield(L, -1, "rewards");
    each(L, -1, "trainer:step", what + ".rewards", [&](const std::string& w) {
      grp.rewards.push_back(check_number(L, -1, "trainer:step", w.c_str()));
    });
    lua_pop(L, 1);
    lua_getfield(L, -1, "advantages");
    if (!lua_isnil(L, -1)) {
      grp.advantages.emplace();
      each(L, -1, "trainer:step", what + ".advantages", [&](const std::string& w) {
        grp.advantages->push_back(check_number(L, -1, "trainer:step", w.c_str()));
      });
    }
    for (const auto& c : grp.completions)
      if (c.logprobs.size() != c.tokens.size())
        throw Error("trainer:step: " + what +
                    " has a completion without per-token logprobs (pass what pol:sample returned)");
    groups.push_back(std::move(grp));
  });
  return groups;
}

static std::vector<train::Example> read_examples(lua_State* L, policy::Policy& pol) {
  check_table(L, 2, "trainer:step", "examples");
  std::vector<train::Example> out;
  each(L, 2, "trainer:step", "examples", [&](const std::string& what) {
    train::Example e;
    field(L, what, "prompt");
    e.prompt = check_text_or_ids(L, -1, pol, "trainer:step", what + ".prompt");
    lua_getfield(L, -2, "completion");
    const bool text = lua_type(L, -1) == LUA_TSTRING;
    e.completion = check_text_or_ids(L, -1, pol, "trainer:step", what + ".completion");
    // A text completion learns to stop: the tokenizer's end of turn follows it. Token ids
    // are taken as given.
    if (text && pol.codec() && !pol.codec()->stop_tokens().empty())
      e.completion.push_back(pol.codec()->stop_tokens().front());
    out.push_back(std::move(e));
  });
  return out;
}

static void push_stats(lua_State* L, const train::StepStats& s) {
  lua_createtable(L, 0, 16);
  auto num = [&](const char* k, double v) {
    lua_pushnumber(L, v);
    lua_setfield(L, -2, k);
  };
  auto integer = [&](const char* k, int64_t v) {
    lua_pushinteger(L, v);
    lua_setfield(L, -2, k);
  };
  num("loss", s.loss);
  num("reward_mean", s.reward_mean);
  num("reward_std", s.reward_std);
  num("kl", s.kl);
  num("clip_fraction", s.clip_fraction);
  num("clip_low", s.clip_low);
  num("clip_high", s.clip_high);
  num("grad_norm", s.grad_norm);
  num("lr", s.lr);
  num("seconds", s.seconds);
  integer("tokens", s.tokens);
  integer("sequences", s.sequences);
  integer("groups", s.groups);
  integer("zero_variance_groups", s.zero_variance_groups);
  integer("step", s.step);
}

// train.micro_cuts(lengths, budget, least_padding): the sizes of the micro-batches an SFT
// step with micro_tokens = budget cuts rows of these lengths (longest first) into, filled in
// order or (least_padding) where the fewest padded tokens are computed.
static int train_micro_cuts(lua_State* L) {
  std::vector<int64_t> lengths;
  int64_t previous = INT64_MAX;
  each(L, 1, "train.micro_cuts", "lengths", [&](const std::string& what) {
    const int64_t n = check_integer(L, -1, "train.micro_cuts", what.c_str());
    if (n < 1 || n > previous) throw Error("train.micro_cuts: " + what + " must be a length, longest first");
    lengths.push_back(previous = n);
  });
  const int64_t budget = check_integer(L, 2, "train.micro_cuts", "budget");
  if (budget < 1) throw Error("train.micro_cuts: budget must be at least 1");
  const bool least = !lua_isnoneornil(L, 3) && check_boolean(L, 3, "train.micro_cuts", "least_padding");
  const auto sizes = least ? train::least_padding_cuts(lengths, budget) : train::fill_cuts(lengths, budget);
  lua_createtable(L, static_cast<int>(sizes.size()), 0);
  for (size_t i = 0; i < sizes.size(); ++i) {
    lua_pushinteger(L, static_cast<lua_Integer>(sizes[i]));
    lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
  }
  return 1;
}

// train.advantages(groups, {scale =, baseline =, eps =}): the advantages of groups of
// rewards (a list of lists), the one place they are computed (the GRPO trainer uses the
// same function on its groups); returns them in the groups' shape.
static int train_advantages(lua_State* L) {
  std::vector<std::vector<double>> groups;
  each(L, 1, "train.advantages", "groups", [&](const std::string& what) {
    auto& group = groups.emplace_back();
    each(L, -1, "train.advantages", what, [&](const std::string& w) {
      group.push_back(check_number(L, -1, "train.advantages", w.c_str()));
    });
  });
  std::string scale = "group", baseline = "mean";
  double eps = 1e-4;
  if (!lua_isnoneornil(L, 2)) {
    Options o(L, 2, "train.advantages");
    o.get("scale", scale, {"group", "batch", "none"});
    o.get("baseline", baseline, {"mean", "leave_one_out"});
    o.get("eps", eps);
    o.done();
  }
  train::Advantages a;
  try {
    a = train::compute_advantages(groups, train::reward_scaling_from(scale), eps, train::baseline_from(baseline));
  } catch (const std::invalid_argument& e) {
    throw Error(std::string("train.advantages: ") + e.what());
  }
  lua_createtable(L, static_cast<int>(groups.size()), 0);
  size_t k = 0;
  for (size_t g = 0; g < groups.size(); ++g) {
    lua_createtable(L, static_cast<int>(groups[g].size()), 0);
    for (size_t i = 0; i < groups[g].size(); ++i) {
      lua_pushnumber(L, a.values[k++]);
      lua_rawseti(L, -2, static_cast<lua_Integer>(i + 1));
    }
    lua_rawseti(L, -2, static_cast<lua_Integer>(g + 1));
  }
  return 1;
}

static int trainer_step(lua_State* L) {
  auto& t = self(L, "trainer:step");
  auto& pol = trainer_policy(L, "trainer:step");
  if (t.is_grpo()) push_stats(L, replica::step(t, read_groups(L, pol)));
  else push_stats(L, replica::step(t, read_examples(L, pol)));
  return 1;
}

static int trainer_save(lua_State* L) {
  self(L, "trainer:save").save(check_string(L, 2, "trainer:save", "directory"));
  return 0;
}

static int trainer_load(lua_State* L) {
  replica::load(self(L, "trainer:load"), check_string(L, 2, "trainer:load", "directory"));
  return 0;
}

static int trainer_export(lua_State* L) {
  auto& t = self(L, "trainer:export");
  std::string dir = check_string(L, 2, "trainer:export", "directory");
  bool adapter = false;
  std::string dtype;
  Options o(L, 3, "trainer:export");
  o.get("adapter", adapter);
  o.get("dtype", dtype, {"fp32", "bf16", "fp16"});
  o.done();
  t.export_hf(dir, adapter, dtype);
  return 0;
}

static int trainer_set_lr(lua_State* L) {
  replica::set_lr(self(L, "trainer:set_lr"), check_number(L, 2, "trainer:set_lr", "lr"));
  return 0;
}

static int trainer_steps(lua_State* L) {
  lua_pushinteger(L, self(L, "trainer:steps").steps());
  return 1;
}

static int trainer_tostring(lua_State* L) {
  auto* t = test_object<train::Trainer>(L, 1);
  if (t) lua_pushfstring(L, "trainer(%s, step %d)", t->is_grpo() ? "grpo" : "sft", (int)t->steps());
  else lua_pushliteral(L, "trainer(closed)");
  return 1;
}

int open_train(lua_State* L) {
  define_class<train::Trainer>(
      L,
      {HOST_FN("step", trainer_step), HOST_FN("save", trainer_save), HOST_FN("load", trainer_load),
       HOST_FN("export", trainer_export), HOST_FN("steps", trainer_steps),
       HOST_FN("set_lr", trainer_set_lr)},
      {HOST_FN("__tostring", trainer_tostring)});
  lua_newtable(L);
  set_functions(L, {HOST_FN("grpo", train_grpo), HOST_FN("sft", train_sft),
                    HOST_FN("advantages", train_advantages), HOST_FN("micro_cuts", train_micro_cuts)});
  return 1;
}

}  // namespace host
