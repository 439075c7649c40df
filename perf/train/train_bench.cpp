// One GRPO step at a given scale, timed: G completions of T tokens after a prompt of P
// tokens, on a random model of a given config (e.g. Qwen2.5-Coder-14B), with LoRA and
// gradient checkpointing. Prints one JSON line; scripts/device/grpo_step_bench.py runs the
// same step in plain PyTorch in the same session for the comparison.
//
//   train_bench CONFIG.json [--device cuda] [--dtype bf16] [--completions 64]
//               [--tokens 1024] [--prompt 128] [--micro 4] [--lora 32] [--checkpoint 1]
//               [--steps 2]
#include <torch/torch.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "policy/config.hpp"
#include "policy/policy.hpp"
#include "train/trainer.hpp"

#ifdef ENGINE_HAVE_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace {

std::map<std::string, std::string> flags(int argc, char** argv, int from) {
  std::map<std::string, std::string> f;
  for (int i = from; i + 1 < argc; i += 2) {
    std::string k = argv[i];
    if (k.rfind("--", 0) != 0) throw std::invalid_argument("expected --flag value, got " + k);
    f[k.substr(2)] = argv[i + 1];
  }
  return f;
}

std::string get(const std::map<std::string, std::string>& f, const std::string& k,
                const std::string& dflt) {
  auto it = f.find(k);
  return it == f.end() ? dflt : it->second;
}

double peak_gib(const std::string& device) {
#ifdef ENGINE_HAVE_CUDA
  if (device.rfind("cuda", 0) == 0) {
    auto stats = c10::cuda::CUDACachingAllocator::getDeviceStats(0);
    return static_cast<double>(stats.allocated_bytes[0].peak) / (1 << 30);
  }
#endif
  (void)device;
  return -1;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) {
    std::cerr << "usage: train_bench CONFIG.json [--device cuda] [--dtype bf16] ...\n";
    return 2;
  }
  auto f = flags(argc, argv, 2);
  std::ifstream in(argv[1]);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  policy::ModelConfig cfg = policy::parse_config(text, argv[1]);
  policy::LoadOptions lo;
  lo.device = get(f, "device", "cuda");
  lo.dtype = get(f, "dtype", "bf16");
  int G = std::stoi(get(f, "completions", "64"));
  int T = std::stoi(get(f, "tokens", "1024"));
  int P = std::stoi(get(f, "prompt", "128"));
  int steps = std::stoi(get(f, "steps", "2"));

  auto pol = std::shared_ptr<policy::Policy>(policy::Policy::random(cfg, lo, 1));
  train::GrpoOptions o;
  o.lr = 5e-7;
  o.micro_batch = std::stoi(get(f, "micro", "4"));
  o.grad_checkpoint = get(f, "checkpoint", "1") == "1";
  int r = std::stoi(get(f, "lora", "32"));
  if (r > 0) o.lora = train::LoraSettings{r, 2.0 * r, 0.1};
  auto trainer = train::Trainer::grpo(pol, o);

  // One group of G completions of exactly T tokens with spread rewards; the sampling
  // log-probs are set near the model's so ratios stay close to 1.
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> tok(0, static_cast<int>(cfg.vocab_size) - 1);
  train::Group g;
  for (int i = 0; i < P; ++i) g.prompt.push_back(tok(rng));
  for (int i = 0; i < G; ++i) {
    policy::Completion c;
    for (int t = 0; t < T; ++t) c.tokens.push_back(tok(rng));
    c.logprobs.assign(T, -std::log(static_cast<float>(cfg.vocab_size)));
    c.finish_reason = "length";
    g.completions.push_back(c);
    g.rewards.push_back(static_cast<double>(i % 8));
  }
  std::vector<double> seconds;
  train::StepStats st;
  for (int s = 0; s < steps; ++s) {
    st = trainer->step({g});  // the statistics read back .item(), which synchronises
    seconds.push_back(st.seconds);
  }
  double best = *std::min_element(seconds.begin(), seconds.end());
  nlohmann::json out = {{"impl", "engine"},
                        {"config", argv[1]},
                        {"device", lo.device},
                        {"dtype", lo.dtype},
                        {"completions", G},
                        {"tokens", T},
                        {"prompt", P},
                        {"micro_batch", o.micro_batch},
                        {"lora_r", r},
                        {"grad_checkpoint", o.grad_checkpoint},
                        {"step_seconds", seconds},
                        {"best_seconds", best},
                        {"tokens_per_second", static_cast<double>(G) * (T + P) / best},
                        {"peak_gib", peak_gib(lo.device)},
                        {"loss", st.loss}};
  std::cout << out.dump() << std::endl;
  return 0;
} catch (const std::exception& e) {
  std::cerr << "train_bench: " << e.what() << "\n";
  return 1;
}
