// Batched generation with a key/value cache.
//
// 1. Prefill: the P distinct prompts, left-padded to a common length Lp, run once.
// 2. Their keys/values are copied n times into a cache of P*n rows (the group shares the
//    prefix computation), and each row samples its first token from the prompt's logits.
// 3. Decode: one token per live row per step. Every row writes its key/value at the same
//    column, so padding is expressed by a per-row mask; positions count real tokens only.
//    When enough rows have finished, the batch (cache included) is compacted so that
//    finished sequences stop costing compute.
// 4. On CUDA each decode step is recorded once as a CUDA graph per (batch, span) and
//    replayed: the step then reads its inputs from fixed tensors, writes its key/value
//    at a column given as a tensor, and attends over a span rounded up to kSpanStep
//    columns. The fused attention kernel reads that column too and skips the keys past
//    it; other attention paths mask them with the bias. Recording a graph costs tens of
//    milliseconds, hence spans of several hundred columns.
#include <chrono>
#include <limits>
#include <map>
#include <optional>

#include "policy/cuda_graph.hpp"
#include "policy/cuda_ops.hpp"
#include "policy/policy_impl.hpp"
#include "policy/torch_side.hpp"

namespace policy {

using torch::Tensor;

namespace {

const float kNegInf = -std::numeric_limits<float>::infinity();
const int64_t kSpanStep = 512;

// Picks one token per row from logits [A,V]; returns tokens [A] and their log-probs
// under the distribution they were drawn from.
std::pair<Tensor, Tensor> choose(Tensor logits, const SampleOptions& o) {
  const int64_t V = logits.size(1);
  if (o.temperature > 0 && (o.top_k == 0 || o.top_k >= V) && o.top_p >= 1.0) {
    auto drawn = fused_sample(logits, o.temperature);  // one kernel on CUDA
    if (drawn.first.defined()) return drawn;
  }
  logits = logits.to(torch::kFloat32);
  if (o.temperature == 0) {
    Tensor tok = logits.argmax(-1);
    Tensor lp = torch::log_softmax(logits, -1).gather(1, tok.unsqueeze(1)).squeeze(1);
    return {tok, lp};
  }
  Tensor x = o.temperature == 1.0 ? logits : logits / o.temperature;
  if (o.top_k > 0 && o.top_k < V) {
    Tensor kth = std::get<0>(x.topk(o.top_k, -1)).narrow(1, o.top_k - 1, 1);
    x = x.masked_fill(x < kth, kNegInf);
  }
  if (o.top_p < 1.0) {
    auto [sorted, idx] = x.sort(-1, /*descending=*/true);
    Tensor probs = torch::softmax(sorted, -1);
    // Drop a token when the mass before it already reaches top_p (the first always stays).
    Tensor drop = (probs.cumsum(-1) - probs) >= o.top_p;
    sorted = sorted.masked_fill(drop, kNegInf);
    x = torch::full_like(x, kNegInf).scatter(1, idx, sorted);
  }
  Tensor lp_all = torch::log_softmax(x, -1);
  Tensor tok;
  if (lp_all.is_cuda()) {
    // One draw as multinomial makes it (argmax of p / Exp(1) noise, an exact sample of p),
    // without multinomial's check of p, which waits for the device every step.
    Tensor p = lp_all.exp();
    tok = p.div_(torch::empty_like(p).exponential_(1)).argmax(-1);
  } else {
    tok = torch::multinomial(lp_all.exp(), 1).squeeze(1);
  }
  return {tok, lp_all.gather(1, tok.unsqueeze(1)).squeeze(1)};
}

// cuBLASLt for the GEMMs of generation: for these skinny products (one row per sequence)
// it picked faster kernels than the classic cuBLAS path on an H100 (about 2% of a 14B
// decode step). Scoped to sampling: recorded graphs keep the kernels chosen at capture,
// and the rest of the process (training) keeps its own choice.
class PreferCublasLt {
 public:
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
  explicit PreferCublasLt(bool on) : on_(on) {
    if (!on_) return;
    saved_ = at::globalContext().blasPreferredBackend();
    at::globalContext().setBlasPreferredBackend(at::BlasBackend::Cublaslt);
  }
  ~PreferCublasLt() {
    if (on_) at::globalContext().setBlasPreferredBackend(saved_);
  }

 private:
  bool on_;
  at::BlasBackend saved_ = at::BlasBackend::Cublas;
#else
  explicit PreferCublasLt(bool) {}
#endif
};

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

std::vector<std::vector<Completion>> Policy::sample(const std::vector<std::vector<int>>& prompts,
                                                    const SampleOptions& o, SampleStats* stats) {
  const ModelConfig& cfg = impl_->model->cfg;
  auto fail = [](const std::string& m) { return std::invalid_argument("policy:sample: " + m); };
  if (o.n < 1) throw fail("n must be at least 1");
  if (!(o.temperature >= 0)) throw fail("temperature must be >= 0");
  if (!(o.top_p > 0 && o.top_p <= 1)) throw fail("top_p must be in (0, 1]");
  if (o.top_k < 0) throw fail("top_k must be >= 0");
  if (o.max_tokens < 1) throw fail("max_tokens must be at least 1");
  if (!o.stop.empty() && !codec_) throw fail("stop strings need a tokenizer (none loaded)");
  for (auto& s : o.stop)
    if (s.empty()) throw fail("stop strings must not be empty");
  int64_t Lp = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    if (prompts[i].empty()) throw fail("prompt " + std::to_string(i + 1) + " is empty");
    for (int t : prompts[i])
      if (t < 0 || t >= cfg.vocab_size)
        throw fail("prompt " + std::to_string(i + 1) + " holds token " + std::to_string(t) +
                   ", outside the vocabulary of " + std::to_string(cfg.vocab_size));
    Lp = std::max<int64_t>(Lp, static_cast<int64_t>(prompts[i].size()));
  }
  const int64_t P = static_cast<int64_t>(prompts.size()), n = o.n, R = P * n;
  std::vector<std::vector<Completion>> out(P, std::vector<Completion>(n));
  if (P == 0) return out;
  if (Lp >= cfg.max_position)
    throw fail("a prompt of " + std::to_string(Lp) + " tokens leaves no room in the context of " +
               std::to_string(cfg.max_position));
  const int64_t cap = std::min<int64_t>(Lp + o.max_tokens, cfg.max_position);

  std::vector<int> stop_ids;
  if (o.stop_tokens) stop_ids = *o.stop_tokens;
  else if (!o.ignore_eos) {
    for (auto id : cfg.eos_token_ids) stop_ids.push_back(static_cast<int>(id));
    if (codec_)
      for (int id : codec_->stop_tokens()) stop_ids.push_back(id);
  }
  size_t stop_window = 0;  // tokens to decode when looking for a stop string
  for (auto& s : o.stop) stop_window = std::max(stop_window, s.size() + 2);

  c10::InferenceMode guard;
  const OnDevice on_device(impl_->device);
  if (o.seed) torch::manual_seed(*o.seed);
  auto& m = impl_->model;
  const auto dev = impl_->device;
  PreferCublasLt blas(dev.is_cuda());
  const auto i64 = torch::TensorOptions().dtype(torch::kInt64);
  const auto start = std::chrono::steady_clock::now();

  // 1. Prefill the distinct prompts, left-padded.
  Tensor ids = torch::zeros({P, Lp}, i64), mask = torch::zeros({P, Lp}, i64);
  for (int64_t i = 0; i < P; ++i) {
    int64_t L = static_cast<int64_t>(prompts[i].size());
    auto row = ids[i].narrow(0, Lp - L, L);
    row.copy_(torch::tensor(std::vector<int64_t>(prompts[i].begin(), prompts[i].end()), i64));
    mask[i].narrow(0, Lp - L, L).fill_(1);
  }
  ids = ids.to(dev);
  mask = mask.to(dev);
  Tensor pos = (mask.cumsum(1) - 1).clamp_min(0);
  auto fopts = torch::TensorOptions().dtype(torch::kFloat32).device(dev);
  auto bopts = torch::TensorOptions().dtype(torch::kBool).device(dev);
  Tensor allowed = torch::ones({Lp, Lp}, bopts).tril().unsqueeze(0).logical_and(
      mask.to(torch::kBool).unsqueeze(1));
  allowed = allowed.logical_or(torch::eye(Lp, bopts));
  Tensor bias = torch::zeros({P, 1, Lp, Lp}, fopts)
                    .masked_fill(allowed.logical_not().unsqueeze(1), kNegInf);
  // With one sample a prompt the prefill writes the decode cache itself: a separate
  // prefix cache would hold a second copy of every prompt (at batch 512 of the 14B
  // config, 9.6 GB).
  KVCache cache, prefix;
  KVCache& first = n == 1 ? cache : prefix;
  first.allocate(cfg, P, n == 1 ? cap : Lp, m->opts);
  Tensor h = m->hidden(ids, pos, bias, &first);
  Tensor logits = m->logits(h.select(1, Lp - 1));

  // 2. Share the prefix with the n samples of each prompt.
  Tensor rep = torch::arange(P, i64.device(dev)).repeat_interleave(n);
  if (n > 1) {
    cache.allocate(cfg, R, cap, m->opts);
    for (size_t l = 0; l < prefix.k.size(); ++l) {
      cache.k[l].narrow(2, 0, Lp).copy_(prefix.k[l].index_select(0, rep));
      cache.v[l].narrow(2, 0, Lp).copy_(prefix.v[l].index_select(0, rep));
    }
    prefix = KVCache{};
  }
  cache.len = Lp;
  Tensor key_bias = torch::full({R, cap}, kNegInf, fopts);  // 0 where a row may attend
  key_bias.narrow(1, 0, Lp).masked_fill_(mask.index_select(0, rep).to(torch::kBool), 0.0f);
  Tensor next_pos = mask.sum(1).index_select(0, rep);  // [R] position of the next token
  logits = logits.index_select(0, rep);

  // 3. Decode. The device holds the batch's newest tokens and positions (tok_in, pos_in);
  // a step runs the model on them, samples, and updates them in place, so with CUDA
  // graphs the next step can be launched before the host has read this one's tokens:
  // the host's bookkeeping then overlaps the device's work instead of idling it.
  std::vector<int64_t> live(R);  // batch row -> completion index (prompt * n + sample)
  for (int64_t r = 0; r < R; ++r) live[r] = r;
  std::vector<char> done(R, 0);
  std::vector<size_t> stop_at(R, std::string::npos);  // byte offset of a matched stop string
  int64_t finished_in_batch = 0, steps = 0, generated = 0;
  // Every live row holds the same number of tokens; a row ends by length at `last`.
  const int64_t last = cap - Lp;
  int64_t produced = 0;  // tokens per row taken or in flight
  int64_t graphs_recorded = 0;
  double graph_record_s = 0;
  const bool graphs = dev.is_cuda() && impl_->cuda_graphs && GraphedStep::supported();
  const bool ahead = graphs && decode_kernels().pipelined_sampling;
  std::map<int64_t, std::unique_ptr<GraphedStep>> recorded;  // by span, for this batch
  Tensor tok_in, pos_in = next_pos.view({R, 1}).clone(), slot = torch::zeros({1}, i64.device(dev));

  // Samples from a step's logits, advances the device's inputs, starts the tokens' copy.
  auto sample_step = [&](const Tensor& step_logits) {
    auto [tok, lp] = choose(step_logits, o);
    const int64_t rows = tok.size(0);
    if (!tok_in.defined()) tok_in = torch::zeros({rows, 1}, i64.device(dev));
    tok_in.copy_(tok.view({rows, 1}));
    ++produced;
    return PendingCopy(torch::stack({tok.to(torch::kFloat64), lp.to(torch::kFloat64)}));
  };
  // Records a step's tokens; true once every row of the batch has finished.
  auto take = [&](const Tensor& both) {
    auto acc = both.accessor<double, 2>();
    const int64_t A = static_cast<int64_t>(live.size());
    for (int64_t b = 0; b < A; ++b) {
      int64_t c = live[b];
      if (done[c]) continue;
      Completion& comp = out[c / n][c % n];
      int id = static_cast<int>(acc[0][b]);
      comp.tokens.push_back(id);
      comp.logprobs.push_back(static_cast<float>(acc[1][b]));
      ++generated;
      bool stop = false;
      for (int s : stop_ids) stop = stop || s == id;
      if (!stop && stop_window) {
        size_t from = comp.tokens.size() > stop_window ? comp.tokens.size() - stop_window : 0;
        std::string tail = codec_->decode(std::vector<int>(comp.tokens.begin() + from, comp.tokens.end()));
        for (auto& s : o.stop) stop = stop || tail.find(s) != std::string::npos;
        if (stop) stop_at[c] = 0;  // located precisely on the full text below
      }
      if (stop) comp.finish_reason = "stop";
      else if (static_cast<int64_t>(comp.tokens.size()) >= last) comp.finish_reason = "length";
      if (!comp.finish_reason.empty()) done[c] = 1, ++finished_in_batch;
    }
    return finished_in_batch == A;
  };
  // Drops the finished rows (cache included); the copy costs about one step, so it waits
  // until an eighth of the batch is finished.
  auto compact = [&] {
    const int64_t A = static_cast<int64_t>(live.size());
    std::vector<int64_t> keep_rows, keep_live;
    for (int64_t b = 0; b < A; ++b)
      if (!done[live[b]]) keep_rows.push_back(b), keep_live.push_back(live[b]);
    Tensor keep = torch::tensor(keep_rows, i64).to(dev);
    cache.select_rows(keep);
    key_bias = key_bias.index_select(0, keep);
    tok_in = tok_in.index_select(0, keep);
    pos_in = pos_in.index_select(0, keep);
    recorded.clear();  // new inputs, new graphs
    live = std::move(keep_live);
    finished_in_batch = 0;
  };
  // Runs one decode step on tok_in/pos_in and samples its tokens.
  auto launch = [&] {
    key_bias.select(1, cache.len).fill_(0.0f);
    Tensor step_logits;
    if (graphs) {
      slot.fill_(cache.len);
      const int64_t span = std::min(cap, (cache.len + 1 + kSpanStep - 1) / kSpanStep * kSpanStep);
      auto& g = recorded[span];
      if (!g) {
        const auto record_start = std::chrono::steady_clock::now();
        cache.slot = slot;
        cache.span = span;
        g = std::make_unique<GraphedStep>([&] {
          Tensor b = key_bias.narrow(1, 0, span).unsqueeze(1).unsqueeze(1);
          return m->logits(m->hidden(tok_in, pos_in, b, &cache).select(1, 0));
        }, dev);
        cache.slot = Tensor();
        ++graphs_recorded;
        graph_record_s += seconds_since(record_start);
      }
      step_logits = g->replay();
    } else {
      Tensor step_bias = key_bias.narrow(1, 0, cache.len + 1).unsqueeze(1).unsqueeze(1);  // [A,1,1,S]
      step_logits = m->logits(m->hidden(tok_in, pos_in, step_bias, &cache).select(1, 0));
    }
    cache.len += 1;
    pos_in.add_(1);
    return sample_step(step_logits);
  };

  bool all_done = take(sample_step(logits).wait());
  const double prefill_s = seconds_since(start);
  std::optional<PendingCopy> in_flight;
  while (!all_done) {
    const bool compact_now =
        finished_in_batch > 0 && finished_in_batch * 8 >= static_cast<int64_t>(live.size());
    if (in_flight && (compact_now || produced == last)) {
      all_done = take(in_flight->wait());  // nothing to launch before these tokens are known
      in_flight.reset();
      continue;
    }
    if (compact_now) compact();
    if (produced == last) break;  // cannot happen: every row ended by length in take
    if (o.on_step) o.on_step(steps);
    ++steps;
    PendingCopy next = launch();
    if (!ahead) {
      all_done = take(next.wait());
      continue;
    }
    if (in_flight) all_done = take(in_flight->wait());
    in_flight = std::move(next);
  }
  if (in_flight) in_flight->wait();  // a step past the end: let the device finish it
  if (stats) {
    stats->prefill_s = prefill_s;
    stats->decode_s = seconds_since(start) - prefill_s;
    stats->prefill_tokens = P * Lp;
    stats->decode_steps = steps;
    stats->generated_tokens = generated;
    stats->graphs_recorded = graphs_recorded;
    stats->graph_record_s = graph_record_s;
  }

  // Text: the stop token is not text; a stop string and what follows it are cut.
  if (codec_) {
    for (int64_t c = 0; c < R; ++c) {
      Completion& comp = out[c / n][c % n];
      std::vector<int> toks = comp.tokens;
      if (comp.finish_reason == "stop" && stop_at[c] == std::string::npos && !toks.empty())
        toks.pop_back();
      comp.text = codec_->decode(toks);
      if (stop_at[c] != std::string::npos) {
        size_t cut = std::string::npos;
        for (auto& s : o.stop) cut = std::min(cut, comp.text.find(s));
        if (cut != std::string::npos) comp.text.resize(cut);
      }
    }
  }
  return out;
}

}  // namespace policy
