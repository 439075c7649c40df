// Logit parity with transformers on the committed tiny random models (fixtures/, made by
// scripts/device/make_reference.py), and the loader's errors on broken checkpoints.
#include <catch2/catch.hpp>
#include <sched.h>

#include <filesystem>
#include <fstream>

#include "policy/cpu_attention.hpp"
#include "policy/model.hpp"
#include "policy/policy.hpp"
#include "policy/safetensors.hpp"
#include "files/cores.hpp"
#include "files/files.hpp"

using namespace policy;
namespace fs = std::filesystem;
using torch::Tensor;

static const fs::path kFixtures = POLICY_FIXTURES;

// The reference file's tensors as torch tensors (copied out of the mapping).
static std::map<std::string, Tensor> reference(const std::string& model) {
  SafetensorsFile f(kFixtures / model / "reference.safetensors");
  std::map<std::string, Tensor> out;
  for (auto& [name, v] : f.tensors()) {
    auto dt = v.dtype == DType::I64 ? torch::kInt64 : torch::kFloat32;
    out[name] = torch::from_blob(const_cast<void*>(v.data), v.shape, dt).clone();
  }
  return out;
}

// Largest difference over the real (unpadded) positions.
static double max_diff(const Tensor& a, const Tensor& b, const Tensor& mask) {
  Tensor keep = mask.to(torch::kBool).unsqueeze(-1).expand_as(a);
  return (a - b).abs().masked_select(keep).max().item<double>();
}

static void check_parity(const std::string& name) {
  auto ref = reference(name);
  Tensor ids = ref["input_ids"], mask = ref["attention_mask"];
  Tensor want32 = ref["logits_fp32"], want16 = ref["logits_bf16"];
  const double scale = want32.abs().max().item<double>();
  // transformers' own bf16 logits differ from its fp32 ones by the rounding noise of bf16;
  // the engine in bf16 may differ from transformers in bf16 by about as much again.
  const double bf16_noise = max_diff(want16, want32, mask);

  c10::InferenceMode guard;
  auto m32 = load_transformer(kFixtures / name, torch::kCPU, torch::kFloat32);
  Tensor got32 = m32->forward(ids, mask).to(torch::kFloat32);
  double d32 = max_diff(got32, want32, mask);
  INFO(name << " fp32: max |diff| " << d32 << " of max |logit| " << scale);
  CHECK(d32 < 1e-4 * std::max(1.0, scale));

  auto m16 = load_transformer(kFixtures / name, torch::kCPU, torch::kBFloat16);
  Tensor got16 = m16->forward(ids, mask).to(torch::kFloat32);
  double d16 = max_diff(got16, want16, mask);
  INFO(name << " bf16: max |diff| " << d16 << ", bf16 noise " << bf16_noise);
  CHECK(d16 <= 2 * bf16_noise + 1e-3 * scale);
}

TEST_CASE("Qwen2 logits match transformers (tied embeddings and sharded bf16 weights)") {
  check_parity("tiny_qwen2");
}

TEST_CASE("Llama logits match transformers (llama3 rope scaling and fp16 weights)") {
  check_parity("tiny_llama");
}

TEST_CASE("the forward without a mask equals the forward with a full mask") {
  c10::InferenceMode guard;
  auto m = load_transformer(kFixtures / "tiny_qwen2", torch::kCPU, torch::kFloat32);
  Tensor ids = reference("tiny_qwen2")["input_ids"];
  Tensor a = m->forward(ids);
  Tensor b = m->forward(ids, torch::ones_like(ids));
  CHECK((a - b).abs().max().item<double>() < 1e-5);
}

TEST_CASE("right padding, run as causal attention alone, gives the logits of left padding") {
  // The fixture's second row is left-padded (the additive-mask path); the same tokens
  // right-padded in a batch take the path without a mask.
  c10::InferenceMode guard;
  auto m = load_transformer(kFixtures / "tiny_qwen2", torch::kCPU, torch::kFloat32);
  auto ref = reference("tiny_qwen2");
  Tensor ids = ref["input_ids"], mask = ref["attention_mask"];
  const int64_t T = ids.size(1), n = mask[1].sum().item<int64_t>();
  REQUIRE(n < T);
  Tensor pad_ids = torch::zeros({T - n}, ids.options()), pad_mask = torch::zeros({T - n}, mask.options());
  Tensor right_ids = torch::stack({ids[0], torch::cat({ids[1].narrow(0, T - n, n), pad_ids})});
  Tensor right_mask = torch::stack({mask[0], torch::cat({mask[1].narrow(0, T - n, n), pad_mask})});

  Tensor left = m->forward(ids, mask);
  Tensor right = m->forward(right_ids, right_mask);
  const double scale = std::max(1.0, left.abs().max().item<double>());
  CHECK((left[0] - right[0]).abs().max().item<double>() < 1e-4 * scale);
  CHECK((left[1].narrow(0, T - n, n) - right[1].narrow(0, 0, n)).abs().max().item<double>() <
        1e-4 * scale);
}

TEST_CASE("weights in the checkpoint's own dtype on the CPU are used in place") {
  auto m = load_transformer(kFixtures / "tiny_llama", torch::kCPU, torch::kFloat16);
  Checkpoint ck(kFixtures / "tiny_llama");
  CHECK(m->mapped != nullptr);
  auto w = m->layers[0]->as<BlockImpl>()->self_attn->q_proj->weight;
  CHECK(w.scalar_type() == torch::kFloat16);
  CHECK(w.requires_grad() == false);
}

TEST_CASE("every projection is its own Linear module for adapters to wrap") {
  auto m = load_transformer(kFixtures / "tiny_qwen2", torch::kCPU, torch::kFloat32);
  int linears = 0;
  for (auto& item : m->named_modules())
    if (dynamic_cast<LinearImpl*>(item.value().get())) ++linears;
  CHECK(linears == 2 * 7);  // q k v o gate up down per layer; lm_head tied
}

static fs::path copy_fixture(const std::string& name, const std::string& tag) {
  fs::path d = fs::temp_directory_path() / ("policy_model_" + tag + "_" + std::to_string(::getpid()));
  files::remove_tree(std::filesystem::path(d).string());
  fs::copy(kFixtures / name, d);
  return d;
}

// Replaces the text `from` in the copy's config.json by `to`.
static void edit_config(const fs::path& d, const std::string& from, const std::string& to) {
  std::ifstream in(d / "config.json");
  std::string cfg((std::istreambuf_iterator<char>(in)), {});
  cfg.replace(cfg.find(from), from.size(), to);
  std::ofstream(d / "config.json") << cfg;
}

TEST_CASE("a config that disagrees with the weights names the tensor and both shapes") {
  auto d = copy_fixture("tiny_llama", "shape");
  edit_config(d, "\"intermediate_size\": 96", "\"intermediate_size\": 80");
  CHECK_THROWS_WITH(load_transformer(d, torch::kCPU, torch::kFloat32),
                    Catch::Contains("shape mismatch") && Catch::Contains("mlp.gate_proj.weight") &&
                        Catch::Contains("[96, 64]") && Catch::Contains("[80, 64]"));
}

TEST_CASE("untied embeddings without lm_head is a missing-tensor error") {
  auto d = copy_fixture("tiny_qwen2", "untied");
  edit_config(d, "\"tie_word_embeddings\": true", "\"tie_word_embeddings\": false");
  CHECK_THROWS_WITH(load_transformer(d, torch::kCPU, torch::kFloat32),
                    Catch::Contains("missing tensor 'lm_head.weight'"));
}

TEST_CASE("a truncated shard is an error naming the file and tensor") {
  auto d = copy_fixture("tiny_qwen2", "trunc");
  fs::path shard = d / "model-00002-of-00004.safetensors";
  fs::resize_file(shard, fs::file_size(shard) / 2);
  CHECK_THROWS_WITH(load_transformer(d, torch::kCPU, torch::kFloat32),
                    Catch::Contains("model-00002-of-00004.safetensors") && Catch::Contains("truncated"));
}

TEST_CASE("bad devices and dtypes are named") {
  CHECK_THROWS_WITH(parse_dtype("int8"), Catch::Contains("int8"));
  CHECK_THROWS_WITH(parse_device("tpu"), Catch::Contains("tpu"));
  if (!torch::cuda::is_available())
    CHECK_THROWS_WITH(parse_device("cuda:0"), Catch::Contains("CUDA"));
}

TEST_CASE("fused and separate projections give the same logits and share weights") {
  c10::InferenceMode guard;
  auto m = load_transformer(kFixtures / "tiny_qwen2", torch::kCPU, torch::kFloat32);
  Tensor ids = reference("tiny_qwen2")["input_ids"];
  Tensor fused = m->forward(ids);
  auto* attn = m->layers[1]->as<BlockImpl>()->self_attn.get();
  REQUIRE(attn->qkv_weight.defined());
  CHECK(attn->k_proj->weight.data_ptr() ==
        static_cast<char*>(attn->qkv_weight.data_ptr()) + 64 * 64 * sizeof(float));
  m->unfuse();
  Tensor apart = m->forward(ids);
  CHECK((fused - apart).abs().max().item<double>() < 1e-5);
}

// libtorch's ops for what cpu_decode_attention computes: the model's path without it.
static Tensor attention_by_ops(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& bias, double scale) {
  const int64_t B = q.size(0), heads = q.size(1), d = q.size(3), kv = k.size(1);
  Tensor raw = torch::matmul(q.reshape({B, kv, heads / kv, d}), k.transpose(-1, -2));
  Tensor scores = bias.defined() ? torch::add(bias, raw, scale) : raw * scale;
  return torch::matmul(torch::softmax(scores, -1), v).reshape({B, 1, heads * d});
}

TEST_CASE("the CPU decode attention equals libtorch's ops, on cache views, with and without a mask") {
  torch::manual_seed(7);
  struct Shape { int64_t B, heads, kv, S, d; };
  for (Shape s : {Shape{3, 4, 2, 37, 64}, Shape{2, 2, 2, 5, 8}, Shape{1, 8, 1, 260, 16}}) {
    // Keys and values as the model reads them: the first S columns of a larger cache.
    Tensor k = torch::randn({s.B, s.kv, s.S + 9, s.d}).narrow(2, 0, s.S);
    Tensor v = torch::randn({s.B, s.kv, s.S + 9, s.d}).narrow(2, 0, s.S);
    Tensor q = torch::randn({s.B, 1, s.heads, s.d}).transpose(1, 2);  // [B, heads, 1, d], strided
    Tensor mask = torch::zeros({s.B, 1, 1, s.S});
    mask.index_put_({0, 0, 0, torch::indexing::Slice(0, s.S / 2)}, -std::numeric_limits<float>::infinity());
    const double scale = 1.0 / std::sqrt(double(s.d));
    for (const Tensor& bias : {Tensor(), mask}) {
      Tensor want = attention_by_ops(q, k, v, bias, scale);
      // The baseline code on every machine, the AVX2 code where the CPU has it.
      for (bool avx2 : {false, true}) {
        if (avx2 && !policy::detail::cpu_attention_avx2()) continue;
        Tensor got = policy::detail::cpu_decode_attention(q, k, v, bias, scale, avx2);
        REQUIRE(got.defined());
        CHECK((got - want).abs().max().item<double>() < 1e-5);
      }
      CHECK(cpu_decode_attention(q, k, v, bias, scale).equal(
          policy::detail::cpu_decode_attention(q, k, v, bias, scale, policy::detail::cpu_attention_avx2())));
    }
  }
  // What it does not cover, it declines: another dtype, two queries, a head size of 6.
  Tensor k = torch::randn({1, 1, 4, 8}), v = torch::randn({1, 1, 4, 8});
  CHECK(!cpu_decode_attention(torch::randn({1, 1, 1, 8}, torch::kFloat64), k.to(torch::kFloat64),
                              v.to(torch::kFloat64), {}, 1.0).defined());
  CHECK(!cpu_decode_attention(torch::randn({1, 1, 2, 8}), k, v, {}, 1.0).defined());
  CHECK(!cpu_decode_attention(torch::randn({1, 1, 1, 6}), torch::randn({1, 1, 4, 6}), torch::randn({1, 1, 4, 6}),
                              {}, 1.0).defined());
}

// Under taskset or a cpuset the pools are sized by the cores the process may use. With
// MKL (PyTorch's own builds) the default is all of them, and a default of the machine's
// count would fail the one-core check on any machine of more than one core.
TEST_CASE("a policy's default CPU threads are the cores this process may run on") {
  cpu_set_t all;
  REQUIRE(sched_getaffinity(0, sizeof all, &all) == 0);
  const int cores = CPU_COUNT(&all);
  CHECK(files::usable_cores() == cores);
  CHECK(default_threads() == (at::hasMKL() ? cores : 1));
  int first = 0;
  while (!CPU_ISSET(first, &all)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  REQUIRE(sched_setaffinity(0, sizeof one, &one) == 0);
  const int usable = files::usable_cores(), threads = default_threads();
  sched_setaffinity(0, sizeof all, &all);
  CHECK(usable == 1);
  CHECK(threads == 1);
}
