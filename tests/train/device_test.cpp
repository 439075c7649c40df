// Every CUDA device computes what cuda:0 computes. A model of a real checkpoint's shape
// (Qwen2.5-Coder-0.5B's, random weights, bf16) samples through its decode CUDA graphs and
// fused kernels, scores and takes a LoRA GRPO step on the last visible GPU while cuda:0 is
// the current device, and every figure must equal the same run on cuda:0. With one GPU
// the last is cuda:0 itself (the test says so); without CUDA the devices are refused.
#include "../catch_torch.hpp"

#include <torch/torch.h>

#include <string>
#include <vector>

#include "policy/policy.hpp"
#include "policy/torch_side.hpp"
#include "train/trainer.hpp"

namespace {

policy::ModelConfig qwen_half_billion() {
  policy::ModelConfig c;
  c.model_type = "qwen2";
  c.vocab_size = 151936;
  c.hidden_size = 896;
  c.intermediate_size = 4864;
  c.num_layers = 24;
  c.num_heads = 14;
  c.num_kv_heads = 2;
  c.head_dim = 64;
  c.max_position = 32768;
  c.rope_theta = 1000000.0;
  c.tie_embeddings = true;
  c.qkv_bias = true;
  c.eos_token_ids = {151643};
  return c;
}

struct Figures {
  std::vector<std::vector<int>> tokens;
  std::vector<std::vector<float>> sampled, scored, trained;
  double loss = 0, grad_norm = 0;
};

Figures run_on(const std::string& device) {
  policy::LoadOptions lo;
  lo.device = device;
  lo.dtype = "bf16";
  std::shared_ptr<policy::Policy> pol = policy::Policy::random(qwen_half_billion(), lo, 7);
  const std::vector<std::vector<int>> prompts = {{151644, 872, 198, 7985, 264, 729},
                                                 {151644, 872, 198, 3838, 374, 220, 17, 10, 17}};
  policy::SampleOptions so;
  so.n = 8;
  so.max_tokens = 40;
  so.ignore_eos = true;
  so.seed = 11;
  auto groups = pol->sample(prompts, so);
  Figures f;
  std::vector<train::Group> batch;
  for (size_t p = 0; p < groups.size(); ++p) {
    train::Group g{prompts[p], {}, {}};
    for (size_t i = 0; i < groups[p].size(); ++i) {
      const auto& c = groups[p][i];
      f.tokens.push_back(c.tokens);
      f.sampled.push_back(c.logprobs);
      if (i == 0) f.scored.push_back(pol->logprobs(prompts[p], c.tokens));
      g.completions.push_back(c);
      g.rewards.push_back(static_cast<double>(c.tokens.front() % 5) + static_cast<double>(i));
    }
    batch.push_back(std::move(g));
  }
  train::GrpoOptions o;
  o.lr = 1e-3;
  o.micro_batch = 4;
  o.lora = train::LoraSettings{8, 16, 0.0, {"q_proj", "v_proj", "down_proj"}};
  o.seed = 5;
  auto trainer = train::Trainer::grpo(pol, o);
  auto st = trainer->step(batch);
  f.loss = st.loss;
  f.grad_norm = st.grad_norm;
  for (size_t p = 0; p < prompts.size(); ++p) f.trained.push_back(pol->logprobs(prompts[p], f.tokens[p * 8]));
  return f;
}

void check_near(const std::vector<std::vector<float>>& a, const std::vector<std::vector<float>>& b,
                double tol, const char* what) {
  REQUIRE(a.size() == b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    REQUIRE(a[i].size() == b[i].size());
    for (size_t j = 0; j < a[i].size(); ++j) {
      INFO(what << "[" << i << "][" << j << "]");
      CHECK(std::abs(a[i][j] - b[i][j]) <= tol);
    }
  }
}

}  // namespace

TEST_CASE("every CUDA device samples, scores and trains as cuda:0 does") {
  if (!torch::cuda::is_available()) {
    policy::LoadOptions lo;
    for (const char* d : {"cuda", "cuda:0", "cuda:1"}) {
      lo.device = d;
      CHECK_THROWS_WITH(policy::Policy::random(qwen_half_billion(), lo, 7),
                        Catch::Contains(d) && Catch::Contains("no CUDA device"));
    }
    return;
  }
  const int devices = static_cast<int>(torch::cuda::device_count());
  const std::string last = "cuda:" + std::to_string(devices - 1);
  if (devices == 1) WARN("one CUDA device here: cuda:0 is compared with itself");
  Figures zero = run_on("cuda:0");
  Figures other;
  {
    // The caller's current device is another one: each entry point must switch itself.
    const policy::OnDevice current(torch::Device(torch::kCUDA, 0));
    other = run_on(last);
  }
  // Same GPU model, same kernels, same seeds: the same draws.
  REQUIRE(other.tokens == zero.tokens);
  check_near(other.sampled, zero.sampled, 1e-3, "sampled log-prob");
  check_near(other.scored, zero.scored, 1e-3, "scored log-prob");
  check_near(other.trained, zero.trained, 1e-3, "log-prob after the update");
  CHECK(other.loss == Approx(zero.loss).margin(1e-4));
  CHECK(other.grad_norm == Approx(zero.grad_norm).epsilon(1e-3));
  // and the update moved the policy, so the last comparison says something
  double moved = 0;
  for (size_t p = 0; p < zero.trained.size(); ++p)
    for (size_t j = 0; j < zero.trained[p].size(); ++j)
      moved = std::max(moved, static_cast<double>(std::abs(zero.trained[p][j] - zero.scored[p][j])));
  CHECK(moved > 1e-3);
}
