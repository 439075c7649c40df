// One GRPO step at a given scale, timed: G completions of T tokens after a prompt of P
// tokens, on a random model of a given config (e.g. Qwen2.5-Coder-14B), with LoRA and
// gradient checkpointing. Prints one JSON line; scripts/device/grpo_step_bench.py runs the
// same step in PyTorch in the same session for the comparison.
//
//   train_bench CONFIG.json [--device cuda] [--dtype bf16] [--completions 64]
//               [--tokens 1024] [--prompt 128] [--micro 4] [--lora 32] [--checkpoint 1]
//               [--checkpoint_layers 0] [--steps 2] [--profile TRACE.json]
//               [--fused_training 1]
//   train_bench --check_kernels CONFIG.json   (CUDA: the training kernels against ATen)
//
// On CUDA in bf16 it also measures cuBLAS's bf16 GEMM rate here (the step's own shapes and
// 8192^3) and reports the step's model FLOPs utilisation against the best of them. Model
// FLOPs are what the step needs, not what it executes: forward and the input gradients of
// every projection (the base is frozen under LoRA), the adapters' three products, causal
// attention's two products forward and twice that backward; recomputation is not counted
// (it is reported apart as executed FLOPs). --profile traces one more step with Kineto
// (CUDA builds; scripts/device/profile_summary.py TRACE.json 1 summarises it).
// --fused_training 0 runs RoPE and SwiGLU through ATen instead of the model's training
// kernels; --check_kernels compares the two on a 2-layer model of CONFIG's shape: the
// adapters' gradients of one GRPO step (no dropout) must agree to bf16's precision.
#include <torch/torch.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "../policy/flags.hpp"
#include "../policy/profile.hpp"
#include "policy/config.hpp"
#include "policy/cuda_ops.hpp"
#include "policy/torch_side.hpp"
#include "policy/policy.hpp"
#include "train/lora.hpp"
#include "train/trainer.hpp"

#ifdef ENGINE_HAVE_CUDA
#include <c10/cuda/CUDACachingAllocator.h>
#endif

namespace {

using policy_bench::flags;
using policy_bench::get;

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

// FLOPs of one step: `model` (what the update needs) and `executed` (with the forward of
// the recomputed blocks added).
struct StepFlops {
  double model = 0, executed = 0;
};

StepFlops step_flops(const policy::ModelConfig& c, int G, int P, int T, int r, int recomputed_layers) {
  const double H = c.hidden_size, I = c.intermediate_size, q = c.num_heads * c.head_dim,
               kv = c.num_kv_heads * c.head_dim, L = P + T, V = c.vocab_size;
  const double proj = H * q + 2 * H * kv + q * H + 3 * H * I;  // weights a token meets per block
  const double adapters = r * ((H + q) + 2 * (H + kv) + (q + H) + 2 * (H + I) + (I + H));
  const double frozen = r > 0 ? 4 : 6;  // forward + input gradients (+ weight gradients)
  const double attn_fwd = 2 * q * L * (L + 1);  // QK^T and PV over the causal half, per sequence
  double per_block = L * (frozen * proj + 6 * adapters) + 3 * attn_fwd;
  double head = T * frozen * H * V;  // only completion positions are scored
  StepFlops f;
  f.model = G * (c.num_layers * per_block + head);
  f.executed = f.model + G * recomputed_layers * (L * 2 * (proj + adapters) + attn_fwd);
  return f;
}

#ifdef ENGINE_HAVE_CUDA
// cuBLAS's bf16 rate for x [m, k] times w [n, k]^T, best of a few calls after a warm-up.
double gemm_rate(int64_t m, int64_t k, int64_t n) {
  auto bf = torch::TensorOptions().dtype(torch::kBFloat16).device(torch::kCUDA);
  torch::Tensor x = torch::randn({m, k}, bf), w = torch::randn({n, k}, bf);
  for (int i = 0; i < 3; ++i) torch::matmul(x, w.t());
  torch::cuda::synchronize();
  double best = 1e30;
  for (int i = 0; i < 10; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    torch::matmul(x, w.t());
    torch::cuda::synchronize();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return 2.0 * m * k * n / best;
}
#endif

// One group of G completions of exactly T tokens with spread rewards; the sampling
// log-probs are set near the model's so ratios stay close to 1.
train::Group random_group(const policy::ModelConfig& cfg, int G, int T, int P) {
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
  return g;
}

// The adapters' gradients of one GRPO step with the training kernels on or off.
std::vector<torch::Tensor> adapter_gradients(const policy::ModelConfig& cfg, bool fused) {
  policy::decode_kernels().fused_training = fused;
  policy::LoadOptions lo;
  lo.device = "cuda";
  lo.dtype = "bf16";
  auto pol = std::shared_ptr<policy::Policy>(policy::Policy::random(cfg, lo, 1));
  train::GrpoOptions o;
  o.micro_batch = 2;
  o.lora = train::LoraSettings{8, 16, 0.0};
  auto trainer = train::Trainer::grpo(pol, o);
  std::vector<torch::Tensor> grads;
  std::vector<std::shared_ptr<train::LoraAdapter>> adapters;
  for (auto& m : policy::TorchSide::model(*pol)->modules())
    if (auto lin = std::dynamic_pointer_cast<policy::LinearImpl>(m); lin && lin->adapter)
      adapters.push_back(std::static_pointer_cast<train::LoraAdapter>(lin->adapter));
  {
    torch::NoGradGuard no_grad;
    torch::manual_seed(3);
    for (auto& a : adapters) a->B.uniform_(-0.05, 0.05);
  }
  trainer->gradients({random_group(cfg, 4, 96, 32)});
  for (auto& a : adapters)
    for (auto& t : a->parameters()) grads.push_back(t.grad().to(torch::kFloat32).clone());
  policy::decode_kernels().fused_training = true;
  return grads;
}

int check_kernels(const char* config_path) {
  std::ifstream in(config_path);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  policy::ModelConfig cfg = policy::parse_config(text, config_path);
  cfg.num_layers = 2;
  auto fused = adapter_gradients(cfg, true), plain = adapter_gradients(cfg, false);
  double worst = 0;
  for (size_t i = 0; i < fused.size(); ++i) {
    double scale = plain[i].abs().max().item<double>();
    worst = std::max(worst, (fused[i] - plain[i]).abs().max().item<double>() / std::max(scale, 1e-30));
  }
  // bf16 keeps 8 bits: two layers of roundings taken in another order stay within a few %.
  const bool ok = !fused.empty() && worst < 0.05;
  std::cout << nlohmann::json{{"check_kernels", config_path}, {"tensors", fused.size()},
                              {"worst_relative_difference", worst}, {"ok", ok}}.dump()
            << std::endl;
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) try {
  if (argc < 2) {
    std::cerr << "usage: train_bench CONFIG.json [--device cuda] [--dtype bf16] ...\n";
    return 2;
  }
  if (std::string(argv[1]) == "--check_kernels") {
    if (argc < 3) throw std::invalid_argument("--check_kernels needs CONFIG.json");
    return check_kernels(argv[2]);
  }
  auto f = flags(argc, argv, 2);
  policy::decode_kernels().fused_training = get(f, "fused_training", "1") == "1";
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
  o.grad_checkpoint_layers = std::stoi(get(f, "checkpoint_layers", "0"));
  int r = std::stoi(get(f, "lora", "32"));
  if (r > 0) o.lora = train::LoraSettings{r, 2.0 * r, 0.1};
  auto trainer = train::Trainer::grpo(pol, o);

  train::Group g = random_group(cfg, G, T, P);
  std::vector<double> seconds;
  train::StepStats st;
  for (int s = 0; s < steps; ++s) {
    st = trainer->step({g});  // the statistics read back .item(), which synchronises
    seconds.push_back(st.seconds);
  }
  double best = *std::min_element(seconds.begin(), seconds.end());
  if (const std::string trace = get(f, "profile", ""); !trace.empty()) {
    if (!policy_bench::profiler_available()) throw std::runtime_error("--profile needs a CUDA build of libtorch");
    policy_bench::profiler_start();
    trainer->step({g});
    policy_bench::profiler_stop(trace);
  }
  int recomputed = !o.grad_checkpoint ? 0
                   : o.grad_checkpoint_layers > 0 ? std::min<int>(o.grad_checkpoint_layers, cfg.num_layers)
                                                  : static_cast<int>(cfg.num_layers);
  StepFlops flops = step_flops(cfg, G, P, T, r, recomputed);
  nlohmann::json gemm = nlohmann::json::object();
  double rate = 0;
#ifdef ENGINE_HAVE_CUDA
  if (lo.device.rfind("cuda", 0) == 0 && lo.dtype == "bf16") {
    const int64_t M = static_cast<int64_t>(o.micro_batch) * (P + T), H = cfg.hidden_size;
    gemm["qo"] = gemm_rate(M, H, cfg.num_heads * cfg.head_dim) / 1e12;
    gemm["kv"] = gemm_rate(M, H, cfg.num_kv_heads * cfg.head_dim) / 1e12;
    gemm["gate_up"] = gemm_rate(M, H, cfg.intermediate_size) / 1e12;
    gemm["down"] = gemm_rate(M, cfg.intermediate_size, H) / 1e12;
    gemm["square_8192"] = gemm_rate(8192, 8192, 8192) / 1e12;
    for (auto& [k, v] : gemm.items()) rate = std::max(rate, v.get<double>());
  }
#endif
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
                        {"fused_training", policy::decode_kernels().fused_training},
                        {"recomputed_layers", recomputed},
                        {"model_TFLOP", flops.model / 1e12},
                        {"executed_TFLOP", flops.executed / 1e12},
                        {"model_TFLOPS", flops.model / best / 1e12},
                        {"cublas_bf16_TFLOPS", gemm},
                        {"mfu", rate > 0 ? nlohmann::json(flops.model / best / 1e12 / rate) : nlohmann::json()},
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
