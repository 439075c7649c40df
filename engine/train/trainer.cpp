#include "train/trainer.hpp"

#include <torch/torch.h>

#include <chrono>

#include "dist/group.hpp"
#include "dist/tensors.hpp"
#include "policy/torch_side.hpp"
#include "train/checkpoint.hpp"
#include "train/lora.hpp"
#include "train/micro_batches.hpp"
#include "train/objective.hpp"
#include "train/token_logprobs.hpp"

namespace fs = std::filesystem;
using torch::Tensor;

namespace train {

// ---- sequences as tensors -------------------------------------------------

namespace {

// One training row: prompt then completion; only completion tokens are scored.
struct Row {
  const std::vector<int>* prompt;
  const std::vector<int>* completion;
  const std::vector<float>* old_logprobs;  // sampling-time log-probs (GRPO)
  double advantage = 0;
  bool counted = true;  // false: a masked truncated completion
};

struct Batch {
  Tensor ids, attention;   // [B, L]
  Tensor positions;        // [B, T]: the logits column predicting each completion token
  Tensor targets;          // [B, T]
  Tensor mask;             // [B, T]
};

Batch make_batch(const std::vector<const Row*>& rows, const torch::Device& device) {
  int64_t B = static_cast<int64_t>(rows.size()), L = 1, T = 1;
  for (const Row* r : rows) {
    L = std::max<int64_t>(L, r->prompt->size() + r->completion->size());
    T = std::max<int64_t>(T, r->completion->size());
  }
  auto i64 = torch::TensorOptions().dtype(torch::kInt64);
  Tensor ids = torch::zeros({B, L}, i64), att = torch::zeros({B, L}, i64);
  Tensor pos = torch::zeros({B, T}, i64), tgt = torch::zeros({B, T}, i64);
  Tensor mask = torch::zeros({B, T}, torch::kFloat32);
  auto a_ids = ids.accessor<int64_t, 2>(), a_att = att.accessor<int64_t, 2>();
  auto a_pos = pos.accessor<int64_t, 2>(), a_tgt = tgt.accessor<int64_t, 2>();
  auto a_mask = mask.accessor<float, 2>();
  for (int64_t b = 0; b < B; ++b) {
    const auto& p = *rows[b]->prompt;
    const auto& c = *rows[b]->completion;
    int64_t P = static_cast<int64_t>(p.size());
    if (P == 0) throw std::invalid_argument("train: a prompt has no tokens");
    for (int64_t j = 0; j < P; ++j) a_ids[b][j] = p[j], a_att[b][j] = 1;
    for (size_t t = 0; t < c.size(); ++t) {
      a_ids[b][P + t] = c[t];
      a_att[b][P + t] = 1;
      a_pos[b][t] = P + static_cast<int64_t>(t) - 1;
      a_tgt[b][t] = c[t];
      a_mask[b][t] = rows[b]->counted ? 1.f : 0.f;
    }
  }
  return {ids.to(device), att.to(device), pos.to(device), tgt.to(device), mask.to(device)};
}

// Rows of the output projection's logits held at once (token_logprobs.hpp), and the size
// of the whole logits from which chunks are taken: they recompute the logits in backward
// (2 H V FLOPs a token more, 8% of the default model's update), which is worth it where the
// logits' memory decides the micro-batch (the 14B model's 152k vocabulary), not below.
constexpr int64_t kLogitChunk = 1024;
constexpr int64_t kChunkedFrom = int64_t(1) << 26;  // 64M logits: 256 MB in fp32

// log pi(token) of every completion token under softmax(logits / temperature): [B, T].
Tensor completion_logprobs(policy::Transformer& model, const Batch& b, double temperature) {
  Tensor hidden = model->forward_hidden(b.ids, b.attention);  // [B, L, H]
  int64_t B = hidden.size(0), H = hidden.size(-1), T = b.targets.size(1);
  // Only the scored positions go through the output projection (the vocabulary is large).
  Tensor picked = hidden.gather(1, b.positions.unsqueeze(-1).expand({-1, -1, H}));
  auto& head = model->lm_head;
  if (B * T * model->cfg.vocab_size < kChunkedFrom ||
      (head && (head->bias.defined() || (head->adapter && head->adapter->enabled)))) {
    Tensor logp = torch::log_softmax(model->logits(picked).to(torch::kFloat32) / temperature, -1);
    return logp.gather(-1, b.targets.unsqueeze(-1)).squeeze(-1);
  }
  const Tensor weight = model->output_weight();
  return token_logprobs(picked.reshape({B * T, H}), weight, b.targets.reshape({B * T}), temperature,
                        kLogitChunk)
      .view({B, T});
}

Tensor old_logprobs(const std::vector<const Row*>& rows, int64_t T, const torch::Device& device) {
  Tensor out = torch::zeros({static_cast<int64_t>(rows.size()), T}, torch::kFloat32);
  auto a = out.accessor<float, 2>();
  for (size_t b = 0; b < rows.size(); ++b) {
    const auto& lp = *rows[b]->old_logprobs;
    if (lp.size() != rows[b]->completion->size())
      throw std::invalid_argument("grpo: a completion has " +
                                  std::to_string(rows[b]->completion->size()) + " tokens but " +
                                  std::to_string(lp.size()) + " log-probs");
    for (size_t t = 0; t < lp.size(); ++t) a[b][t] = lp[t];
  }
  return out.to(device);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

// ---- the trainer ----------------------------------------------------------

struct Trainer::Impl {
  std::shared_ptr<policy::Policy> pol;
  policy::Transformer model{nullptr};
  torch::Device device{torch::kCPU};
  bool grpo_mode = false;
  GrpoOptions o;  // SFT trainers use the UpdateOptions part
  std::unique_ptr<Lora> lora;
  policy::Transformer reference{nullptr};  // full fine-tuning with beta > 0
  std::vector<Tensor> params;
  std::unique_ptr<torch::optim::AdamW> optim;
  int64_t step = 0;
  std::shared_ptr<dist::Group> group;  // data-parallel replicas; null: this one alone

  // Micro-batch j is run by one rank of the group.
  bool runs(size_t j) const {
    return !group || static_cast<int>(j % static_cast<size_t>(group->size())) == group->rank();
  }

  // After a pass: every rank's gradients and totals become their sums over the ranks.
  void sum_over_ranks(std::vector<double*> totals) {
    if (!group) return;  // a group of one may still be an NCCL group: dist::sum decides
    std::vector<Tensor> grads;
    for (auto& p : params) {
      if (!p.grad().defined()) p.mutable_grad() = torch::zeros_like(p);
      grads.push_back(p.grad());
    }
    Tensor t = torch::zeros({static_cast<int64_t>(totals.size())}, torch::kFloat64);
    for (size_t i = 0; i < totals.size(); ++i) t[static_cast<int64_t>(i)] = *totals[i];
    grads.push_back(t);
    dist::sum(*group, grads);
    for (size_t i = 0; i < totals.size(); ++i) *totals[i] = t[static_cast<int64_t>(i)].item<double>();
  }

  void setup(std::shared_ptr<policy::Policy> p, const UpdateOptions& u) {
    pol = std::move(p);
    model = policy::TorchSide::model(*pol);
    // Full fine-tuning trains each projection's own weight, which a fused q/k/v or gate/up
    // GEMM would bypass. Under LoRA the base is frozen and the fused GEMMs stay: the
    // adapters of a fused group join it (policy::Adapter::add_group_to).
    if (!u.lora) model->unfuse();
    device = policy::TorchSide::device(*pol);
    if (u.micro_batch <= 0) throw std::invalid_argument("train: micro_batch must be positive");
    if (u.lr < 0) throw std::invalid_argument("train: lr must not be negative");
    if (u.lora) {
      lora = std::make_unique<Lora>(model, *u.lora, u.seed);
      params = lora->parameters();
    } else {
      for (auto& t : model->parameters()) {
        t.set_requires_grad(true);
        params.push_back(t);
      }
    }
    model->grad_checkpoint = u.grad_checkpoint;
    if (u.grad_checkpoint_layers < 0)
      throw std::invalid_argument("train: grad_checkpoint_layers must not be negative");
    model->grad_checkpoint_layers = u.grad_checkpoint_layers;
    optim = std::make_unique<torch::optim::AdamW>(
        params, torch::optim::AdamWOptions(u.lr)
                    .betas({u.beta1, u.beta2})
                    .eps(u.eps)
                    .weight_decay(u.weight_decay));
  }

  // The reference policy's log-probs: the adapters switched off, or a frozen copy.
  Tensor reference_logprobs(const Batch& b) {
    torch::NoGradGuard no_grad;
    if (lora) {
      lora->set_enabled(false);
      Tensor out = completion_logprobs(model, b, o.temperature);
      lora->set_enabled(true);
      return out;
    }
    return completion_logprobs(reference, b, o.temperature);
  }

  double clip_and_step() {
    double norm = 0;
    if (o.max_grad_norm > 0) {
      norm = torch::nn::utils::clip_grad_norm_(params, o.max_grad_norm);
    } else {
      torch::NoGradGuard no_grad;
      Tensor sq = torch::zeros({}, torch::kFloat64);
      for (auto& p : params)
        if (p.grad().defined()) sq += p.grad().to(torch::kFloat64).pow(2).sum().cpu();
      norm = std::sqrt(sq.item<double>());
    }
    optim->step();
    optim->zero_grad();
    ++step;
    return norm;
  }
};

Trainer::Trainer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Trainer::~Trainer() = default;
int64_t Trainer::steps() const { return impl_->step; }
bool Trainer::is_grpo() const { return impl_->grpo_mode; }

std::unique_ptr<Trainer> Trainer::grpo(std::shared_ptr<policy::Policy> pol, const GrpoOptions& o) {
  auto impl = std::make_unique<Impl>();
  loss_type_from(o.loss);  // reject unknown names before any work
  reward_scaling_from(o.scale_rewards);
  importance_from(o.importance);
  if (o.num_iterations < 1) throw std::invalid_argument("grpo: num_iterations must be >= 1");
  if (o.temperature <= 0) throw std::invalid_argument("grpo: temperature must be positive");
  if (o.beta < 0) throw std::invalid_argument("grpo: beta must not be negative");
  impl->o = o;
  impl->grpo_mode = true;
  impl->setup(std::move(pol), o);
  if (o.beta != 0 && !impl->lora) {
    auto& m = impl->model;
    impl->reference = policy::Transformer(m->cfg, m->opts);
    impl->reference->output_vocab = m->output_vocab;
    torch::NoGradGuard no_grad;
    auto src = m->named_parameters();
    for (auto& item : impl->reference->named_parameters()) {
      item.value().copy_(src[item.key()]);
      item.value().set_requires_grad(false);
    }
  }
  return std::unique_ptr<Trainer>(new Trainer(std::move(impl)));
}

std::unique_ptr<Trainer> Trainer::sft(std::shared_ptr<policy::Policy> pol, const UpdateOptions& o) {
  auto impl = std::make_unique<Impl>();
  static_cast<UpdateOptions&>(impl->o) = o;
  impl->setup(std::move(pol), o);
  return std::unique_ptr<Trainer>(new Trainer(std::move(impl)));
}

// A GRPO batch ready for passes: rows with advantages, and the whole step's totals.
struct GrpoBatch {
  std::vector<Row> rows;
  std::vector<const Row*> active;  // rows that are run
  ObjectiveOptions objective;
  StepStats stats;
  std::vector<Tensor> ref_cache;   // reference log-probs per micro-batch, computed once
};

static GrpoBatch prepare(const Trainer::Impl& m, const std::vector<Group>& groups);

struct PassTotals {
  double loss = 0, kl = 0, low = 0, high = 0, tokens = 0;
};

// Forward and backward over every micro-batch; gradients accumulate to the whole step's.
static PassTotals run_pass(Trainer::Impl& m, GrpoBatch& gb);

StepStats Trainer::gradients(const std::vector<Group>& groups) {
  Impl& m = *impl_;
  if (!m.grpo_mode) throw std::logic_error("train: an SFT trainer steps on examples, not groups");
  const policy::OnDevice on_device(m.device);
  GrpoBatch gb = prepare(m, groups);
  PassTotals t = run_pass(m, gb);
  StepStats st = gb.stats;
  st.loss = t.loss;
  if (t.tokens > 0) st.kl = t.kl / t.tokens, st.clip_low = t.low / t.tokens, st.clip_high = t.high / t.tokens;
  st.clip_fraction = st.clip_low + st.clip_high;
  return st;
}

StepStats Trainer::step(const std::vector<Group>& groups) {
  Impl& m = *impl_;
  if (!m.grpo_mode) throw std::logic_error("train: an SFT trainer steps on examples, not groups");
  auto t0 = std::chrono::steady_clock::now();
  const policy::OnDevice on_device(m.device);
  GrpoBatch gb = prepare(m, groups);
  PassTotals sum;
  StepStats st = gb.stats;
  for (int it = 0; it < m.o.num_iterations; ++it) {
    PassTotals t = run_pass(m, gb);
    sum.loss += t.loss, sum.kl += t.kl, sum.low += t.low, sum.high += t.high, sum.tokens += t.tokens;
    // Nothing to learn from (every group flat, beta = 0): no optimizer step.
    if (!gb.active.empty()) st.grad_norm = m.clip_and_step();
  }
  st.loss = sum.loss / m.o.num_iterations;
  if (sum.tokens > 0) {
    st.kl = sum.kl / sum.tokens;
    st.clip_low = sum.low / sum.tokens;
    st.clip_high = sum.high / sum.tokens;
  }
  st.clip_fraction = st.clip_low + st.clip_high;
  st.lr = m.o.lr;
  st.step = m.step;
  st.seconds = seconds_since(t0);
  return st;
}

static GrpoBatch prepare(const Trainer::Impl& m, const std::vector<Group>& groups) {
  GrpoBatch gb;
  StepStats& st = gb.stats;
  st.groups = static_cast<int64_t>(groups.size());
  if (groups.empty()) throw std::invalid_argument("grpo: no groups");
  std::vector<std::vector<double>> rewards, given;
  for (const auto& g : groups) {
    if (g.completions.size() != g.rewards.size())
      throw std::invalid_argument("grpo: a group has " + std::to_string(g.completions.size()) +
                                  " completions but " + std::to_string(g.rewards.size()) +
                                  " rewards");
    rewards.push_back(g.rewards);
    if (g.advantages) given.push_back(*g.advantages);
  }
  if (!given.empty() && given.size() != groups.size())
    throw std::invalid_argument("grpo: " + std::to_string(given.size()) + " of " + std::to_string(groups.size()) +
                                " groups give advantages: every group gives them or none does");
  Advantages adv = given.empty()
                       ? compute_advantages(rewards, reward_scaling_from(m.o.scale_rewards), m.o.adv_eps)
                       : given_advantages(rewards, given);
  st.reward_mean = adv.reward_mean;
  st.reward_std = adv.reward_std;
  st.zero_variance_groups = adv.zero_variance_groups;

  size_t k = 0;
  int64_t longest = 0;
  for (const auto& g : groups)
    for (const auto& c : g.completions) {
      bool truncated = c.finish_reason == "length";
      gb.rows.push_back({&g.prompt, &c.tokens, &c.logprobs, adv.values[k++],
                         !(m.o.mask_truncated && truncated)});
      longest = std::max<int64_t>(longest, c.tokens.size());
    }
  st.sequences = static_cast<int64_t>(gb.rows.size());
  for (const auto& r : gb.rows)
    if (r.counted) st.tokens += static_cast<int64_t>(r.completion->size());

  // With beta = 0 a zero-advantage row adds nothing but its share of the normaliser, which
  // uses whole-step totals; so it is not run at all. bnpo normalises per micro-batch, as
  // TRL does, and keeps every row.
  LossType loss = loss_type_from(m.o.loss);
  for (const auto& r : gb.rows)
    if (m.o.beta != 0 || r.advantage != 0 || loss == LossType::bnpo) gb.active.push_back(&r);

  ObjectiveOptions& oo = gb.objective;
  oo.beta = m.o.beta;
  oo.clip = m.o.clip;
  oo.clip_high = m.o.clip_high;
  oo.loss = loss;
  oo.importance = importance_from(m.o.importance);
  oo.max_completion_length = m.o.max_completion_length > 0 ? m.o.max_completion_length : longest;
  size_t mb = static_cast<size_t>(m.o.micro_batch);
  gb.ref_cache.resize((gb.active.size() + mb - 1) / mb);
  return gb;
}

// The adapters' dropout for the duration of a pass (forward and backward, recomputed
// blocks included), and off again after it, whatever ends the pass: the policy samples
// and scores with the adapters as they are, as a model in eval mode does.
struct AdapterDropout {
  explicit AdapterDropout(Lora* l) : lora(l) {
    if (lora) lora->set_training(true);
  }
  ~AdapterDropout() {
    if (lora) lora->set_training(false);
  }
  AdapterDropout(const AdapterDropout&) = delete;
  AdapterDropout& operator=(const AdapterDropout&) = delete;
  Lora* lora;
};

// TensorFloat-32 products on CUDA while it lives (UpdateOptions::tf32), as before afterwards.
class TF32Scope {
 public:
  explicit TF32Scope(bool on) : was_(at::globalContext().allowTF32CuBLAS()), on_(on) {
    if (on_) at::globalContext().setAllowTF32CuBLAS(true);
  }
  ~TF32Scope() {
    if (on_) at::globalContext().setAllowTF32CuBLAS(was_);
  }

 private:
  bool was_, on_;
};

static PassTotals run_pass(Trainer::Impl& m, GrpoBatch& gb) {
  const TF32Scope tf32(m.o.tf32 && m.device.is_cuda());
  PassTotals out;
  const size_t mb = static_cast<size_t>(m.o.micro_batch);
  const size_t n_micro = std::max<size_t>(1, gb.ref_cache.size());
  const double total_rows = static_cast<double>(std::max<int64_t>(1, gb.stats.sequences));
  AdapterDropout dropout_on(m.lora.get());
  m.model->train();
  for (size_t i = 0; i < gb.active.size(); i += mb) {
    if (!m.runs(i / mb)) continue;
    std::vector<const Row*> part(gb.active.begin() + i,
                                 gb.active.begin() + std::min(gb.active.size(), i + mb));
    Batch b = make_batch(part, m.device);
    Tensor old = old_logprobs(part, b.targets.size(1), m.device);
    std::optional<Tensor> ref;
    if (m.o.beta != 0) {
      Tensor& cached = gb.ref_cache[i / mb];
      if (!cached.defined()) cached = m.reference_logprobs(b);
      ref = cached;
    }
    std::vector<double> a;
    for (const Row* r : part) a.push_back(r->advantage);
    Tensor logp = completion_logprobs(m.model, b, m.o.temperature);
    ObjectiveTerms terms =
        grpo_objective(logp, old, ref, torch::tensor(a, torch::kFloat32).to(m.device), b.mask,
                       gb.objective, static_cast<double>(gb.stats.tokens));
    // Rescale each micro-batch's loss so the accumulated gradient is the whole step's.
    LossType loss = gb.objective.loss;
    double scale = loss == LossType::bnpo   ? 1.0 / static_cast<double>(n_micro)
                   : loss == LossType::dapo ? 1.0
                                            : static_cast<double>(part.size()) / total_rows;
    Tensor scaled = terms.loss * scale;
    scaled.backward();
    out.loss += scaled.item<double>();
    out.kl += terms.kl * terms.tokens;
    out.low += terms.clip_low * terms.tokens;
    out.high += terms.clip_high * terms.tokens;
    out.tokens += terms.tokens;
  }
  m.sum_over_ranks({&out.loss, &out.kl, &out.low, &out.high, &out.tokens});
  return out;
}

// The micro-batches of an SFT step: `micro_batch` rows each in the given order, or
// (micro_tokens > 0) the rows longest first, cut under the budget of rows x longest: each
// filled in order, or (least_padding) where the fewest padded tokens are computed.
static std::vector<std::vector<const Row*>> sft_micro_batches(const std::vector<Row>& rows,
                                                             const UpdateOptions& o) {
  std::vector<const Row*> order;
  for (const Row& r : rows) order.push_back(&r);
  auto length = [](const Row* r) { return static_cast<int64_t>(r->prompt->size() + r->completion->size()); };
  std::vector<size_t> sizes;
  if (o.micro_tokens > 0) {
    std::stable_sort(order.begin(), order.end(), [&](const Row* x, const Row* y) { return length(x) > length(y); });
    std::vector<int64_t> lengths;
    for (const Row* r : order) lengths.push_back(length(r));
    sizes = o.least_padding ? least_padding_cuts(lengths, o.micro_tokens) : fill_cuts(lengths, o.micro_tokens);
  } else {
    const size_t each = static_cast<size_t>(std::max(1, o.micro_batch));
    for (size_t i = 0; i < order.size(); i += each) sizes.push_back(std::min(order.size() - i, each));
  }
  std::vector<std::vector<const Row*>> out;
  size_t at = 0;
  for (size_t size : sizes) {
    out.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(at), order.begin() + static_cast<std::ptrdiff_t>(at + size));
    at += size;
  }
  return out;
}

static StepStats sft_pass(Trainer::Impl& m, const std::vector<Example>& examples) {
  const policy::OnDevice on_device(m.device);
  const TF32Scope tf32(m.o.tf32 && m.device.is_cuda());
  StepStats st;
  std::vector<Row> rows;
  for (const auto& e : examples) {
    if (e.completion.empty()) throw std::invalid_argument("sft: an example has no completion");
    rows.push_back({&e.prompt, &e.completion, nullptr});
    st.tokens += static_cast<int64_t>(e.completion.size());
  }
  st.sequences = static_cast<int64_t>(rows.size());
  if (rows.empty()) throw std::invalid_argument("sft: no examples");
  AdapterDropout dropout_on(m.lora.get());
  m.model->train();
  const auto micro = sft_micro_batches(rows, m.o);
  for (size_t j = 0; j < micro.size(); ++j) {
    if (!m.runs(j)) continue;
    Batch b = make_batch(micro[j], m.device);
    Tensor logp = completion_logprobs(m.model, b, 1.0);
    // Token-weighted: the step's loss is the mean over all its completion tokens.
    double tokens = b.mask.sum().item<double>();
    Tensor scaled = sft_objective(logp, b.mask) * (tokens / static_cast<double>(st.tokens));
    scaled.backward();
    st.loss += scaled.item<double>();
  }
  m.sum_over_ranks({&st.loss});
  return st;
}

StepStats Trainer::gradients(const std::vector<Example>& examples) {
  if (impl_->grpo_mode) throw std::logic_error("train: a GRPO trainer steps on groups, not examples");
  return sft_pass(*impl_, examples);
}

StepStats Trainer::step(const std::vector<Example>& examples) {
  Impl& m = *impl_;
  if (m.grpo_mode) throw std::logic_error("train: a GRPO trainer steps on groups, not examples");
  auto t0 = std::chrono::steady_clock::now();
  StepStats st = sft_pass(m, examples);
  st.grad_norm = m.clip_and_step();
  st.lr = m.o.lr;
  st.step = m.step;
  st.seconds = seconds_since(t0);
  return st;
}

// ---- checkpoints and exports (checkpoint.cpp) ----------------------------------

TrainedParts Trainer::parts() const {
  const Impl& m = *impl_;
  return {m.model, m.lora.get(), m.optim.get(), m.pol->dir()};
}

void Trainer::save(const fs::path& dir) const {
  const Impl& m = *impl_;
  save_checkpoint(dir, parts(), {m.grpo_mode ? "grpo" : "sft", m.step, m.o.lr});
}

void Trainer::load(const fs::path& dir) {
  Impl& m = *impl_;
  SavedState s = load_checkpoint(dir, parts(), m.grpo_mode ? "grpo" : "sft");
  m.step = s.step;
  if (s.lr) set_lr(*s.lr);
}

void Trainer::set_lr(double lr) {
  if (!(lr >= 0)) throw std::invalid_argument("train: lr must not be negative");
  Impl& m = *impl_;
  m.o.lr = lr;
  for (auto& group : m.optim->param_groups())
    static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
}

void Trainer::join(std::shared_ptr<dist::Group> group) {
  Impl& m = *impl_;
  if (!group) throw std::invalid_argument("train: join needs a group");
  if (m.step > 0) throw std::logic_error("train: a trainer joins its group before its first step");
  torch::NoGradGuard no_grad;
  std::vector<Tensor> weights(m.params.begin(), m.params.end());
  dist::broadcast(*group, weights, 0);
  m.group = std::move(group);
}

void Trainer::export_hf(const fs::path& dir, bool adapter_only, const std::string& dtype) const {
  train::export_hf(dir, parts(), adapter_only, dtype);
}

}  // namespace train
