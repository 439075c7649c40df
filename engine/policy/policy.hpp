// The policy: a loaded checkpoint that samples completions and scores them. This header
// is free of torch so the Lua host (and anything else) can use it cheaply; the model
// itself is in model.hpp.
//
//   auto pol = policy::Policy::load("models/qwen", {.device = "cuda", .dtype = "bf16"});
//   auto groups = pol->sample({prompt_ids}, {.n = 64, .temperature = 1.0, .max_tokens = 512});
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "policy/codec.hpp"
#include "policy/config.hpp"

namespace policy {

// Whether this build of libtorch sees a CUDA device (the engine's --device=auto).
bool cuda_available();
int cuda_devices();  // how many it sees (0 without CUDA)
// The CPU intra-op threads a policy gets unless told: all cores when libtorch's BLAS shares
// its OpenMP pool (MKL), else 1, so that the BLAS's own pool does not meet a spinning one.
int default_threads();
int intra_op_threads();  // as set now (process-wide in libtorch)

struct LoadOptions {
  std::string device = "cpu";  // "cpu", "cuda", "cuda:N"
  std::string dtype = "fp32";  // "fp32", "bf16", "fp16"
  int threads = 0;             // CPU intra-op threads; 0 = default_threads()
  bool cuda_graphs = true;     // replay recorded decode steps on CUDA (same results, faster)
  // >= 0: the directory's config.json with random weights drawn from this seed, no
  // safetensors read (benchmarks at a model's real size without its weights).
  int64_t random_weights = -1;
};

struct SampleOptions {
  int n = 1;                   // completions per prompt (the group size G)
  double temperature = 1.0;    // 0 = greedy
  double top_p = 1.0;          // nucleus mass kept, (0, 1]
  int top_k = 0;               // 0 = no limit
  int max_tokens = 256;        // generated tokens per completion
  std::vector<std::string> stop;  // stop strings (need a codec); not part of the text
  // Tokens that end a completion; default: the config's eos ids and the codec's stop tokens.
  std::optional<std::vector<int>> stop_tokens;
  bool ignore_eos = false;     // generate max_tokens regardless (benchmarks, parity)
  std::optional<uint64_t> seed;  // same seed, same outputs on the same device
  // Called before each decode step with its index (0 = the step after the first token):
  // profiling or tracing a window of steps.
  std::function<void(int64_t)> on_step;
};

struct Completion {
  std::vector<int> tokens;     // generated ids, including the stop token that ended it
  std::vector<float> logprobs; // per token, under the sampling distribution (see sample)
  std::string text;            // decoded tokens, cut before a stop string (codec only)
  std::string finish_reason;   // "stop" (stop token or string), "length" (max_tokens or context)
};

struct SampleStats {
  double prefill_s = 0, decode_s = 0;
  int64_t prefill_tokens = 0, decode_steps = 0, generated_tokens = 0;
  // CUDA graphs recorded while decoding and the time that took (part of decode_s).
  int64_t graphs_recorded = 0;
  double graph_record_s = 0;
};

class Policy {
 public:
  // Reads config.json and the safetensors weights of dir (or draws the weights, see
  // LoadOptions::random_weights); the codec comes from the registered codec loader when
  // there is one (see codec.hpp).
  static std::unique_ptr<Policy> load(const std::string& dir, const LoadOptions& opts = {});
  // A model with random weights for a config (benchmarks): no checkpoint is read.
  static std::unique_ptr<Policy> random(const ModelConfig& cfg, const LoadOptions& opts,
                                        uint64_t seed = 0);
  ~Policy();

  // One list per prompt, each holding opts.n completions. Each prompt's prefix is
  // computed once and its keys/values shared by its n samples; finished sequences are
  // dropped from the batch. Log-probs are those of the distribution the token was drawn
  // from: softmax(logits / temperature) restricted to the top-k / top-p set; for greedy
  // decoding (temperature 0) the model's own log-softmax.
  std::vector<std::vector<Completion>> sample(const std::vector<std::vector<int>>& prompts,
                                              const SampleOptions& opts,
                                              SampleStats* stats = nullptr);

  // Log-probability of each completion token after the prompt, under softmax(logits / T).
  std::vector<float> logprobs(const std::vector<int>& prompt, const std::vector<int>& completion,
                              double temperature = 1.0);

  const ModelConfig& config() const;
  const std::string& dir() const { return dir_; }  // the checkpoint directory ("" if random)
  const std::string& device() const;
  const std::string& dtype() const;
  int64_t parameter_bytes() const;
  TextCodec* codec() const { return codec_.get(); }
  // Also narrows the output to the codec's ids where the checkpoint has more rows.
  void set_codec(std::shared_ptr<TextCodec> c);
  // Ids the policy samples and scores: the codec's, or the config's vocab_size.
  int64_t output_vocab() const;

  struct Impl;  // the torch side (policy.cpp, generate.cpp)

 private:
  friend struct TorchSide;  // torch_side.hpp: the model and device, for trainers
  Policy() = default;
  std::unique_ptr<Impl> impl_;
  std::shared_ptr<TextCodec> codec_;
  std::string dir_;
};

}  // namespace policy
