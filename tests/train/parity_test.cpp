// The trainer's losses and gradients against PyTorch + transformers on the same weights
// and batch (tests/train/fixture, made by scripts/device/train_reference.py): every loss
// normalisation, the KL term, both clip branches, sequence-level ratios, masked
// truncated completions, temperature, and SFT.
#include "../catch_torch.hpp"

#include <torch/torch.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "policy/torch_side.hpp"
#include "policy/safetensors.hpp"
#include "train/lora.hpp"
#include "train/trainer.hpp"

using nlohmann::json;

namespace {

const std::string kFixture = ENGINE_TRAIN_FIXTURE;

json reference() {
  std::ifstream in(kFixture + "/reference.json");
  REQUIRE(in);
  return json::parse(in);
}

std::vector<train::Group> groups_of(const json& ref) {
  std::vector<train::Group> out;
  for (const auto& g : ref["groups"]) {
    train::Group grp;
    grp.prompt = g["prompt"].get<std::vector<int>>();
    grp.rewards = g["rewards"].get<std::vector<double>>();
    for (const auto& c : g["completions"]) {
      policy::Completion comp;
      comp.tokens = c["tokens"].get<std::vector<int>>();
      comp.logprobs = c["logprobs"].get<std::vector<float>>();
      comp.finish_reason = c["finish_reason"];
      grp.completions.push_back(comp);
    }
    out.push_back(grp);
  }
  return out;
}

// The live policy is the reference with perturbed weights (so the KL term is not zero).
void load_perturbed(policy::Policy& pol) {
  policy::SafetensorsFile file(kFixture + "/perturbed.safetensors");
  auto params = policy::TorchSide::model(pol)->named_parameters();
  torch::NoGradGuard no_grad;
  for (const auto& [name, view] : file.tensors()) {
    std::string ours = name.rfind("model.", 0) == 0 ? name.substr(6) : name;
    auto* p = params.find(ours);
    REQUIRE(p != nullptr);
    p->copy_(torch::from_blob(const_cast<void*>(view.data), view.shape, torch::kFloat32));
  }
}

std::shared_ptr<policy::Policy> load_policy() {
  return std::shared_ptr<policy::Policy>(
      policy::Policy::load(kFixture + "/base", {.device = "cpu", .dtype = "fp32"}));
}

void check_gradients(policy::Policy& pol, const json& expected, const json& watch) {
  auto params = policy::TorchSide::model(pol)->named_parameters();
  double sq = 0;
  for (const auto& item : params)
    if (item.value().grad().defined()) sq += item.value().grad().pow(2).sum().item<double>();
  CHECK(std::sqrt(sq) == Approx(expected["grad_norm"].get<double>()).epsilon(2e-4));
  for (const auto& name : watch) {
    std::string ours = name.get<std::string>().substr(6);
    auto grad = params[ours].grad().reshape(-1);
    const auto& want = expected["grads"][name.get<std::string>()];
    REQUIRE(grad.numel() == static_cast<int64_t>(want.size()));
    double scale = 0, worst = 0;
    for (size_t i = 0; i < want.size(); ++i) scale = std::max(scale, std::abs(want[i].get<double>()));
    for (size_t i = 0; i < want.size(); ++i)
      worst = std::max(worst, std::abs(grad[i].item<double>() - want[i].get<double>()));
    INFO(name << ": largest gradient " << scale << ", largest difference " << worst);
    // fp32 forward against a float64 reference: differences stay around 1e-6 of the scale.
    CHECK(worst <= 1e-4 * scale + 1e-9);
  }
}

}  // namespace

TEST_CASE("GRPO losses and gradients match the PyTorch reference", "[train][parity]") {
  json ref = reference();
  auto groups = groups_of(ref);
  for (const auto& [name, c] : ref["cases"].items()) {
    if (name == "sft") continue;
    SECTION(name) {
      const auto& o = c["options"];
      train::GrpoOptions opts;
      opts.beta = o["beta"];
      opts.clip = o["clip"];
      if (!o["clip_high"].is_null()) opts.clip_high = o["clip_high"].get<double>();
      opts.loss = o["loss"];
      opts.scale_rewards = o["scale_rewards"];
      opts.importance = o["importance"];
      opts.mask_truncated = o["mask_truncated"];
      opts.temperature = o["temperature"];
      opts.max_completion_length = ref["max_completion_length"];
      // Micro-batches of 4 over 6 rows: accumulation must give the whole batch's gradient
      // (bnpo normalises per micro-batch by definition, so it runs as one).
      opts.micro_batch = opts.loss == "bnpo" ? 8 : 4;
      auto pol = load_policy();
      auto trainer = train::Trainer::grpo(pol, opts);
      load_perturbed(*pol);
      auto st = trainer->gradients(groups);
      CHECK(st.loss == Approx(c["loss"].get<double>()).epsilon(1e-4).margin(1e-7));
      CHECK(st.kl == Approx(c["kl"].get<double>()).epsilon(1e-4).margin(1e-8));
      check_gradients(*pol, c, ref["watch"]);
    }
  }
}

TEST_CASE("SFT loss and gradients match the PyTorch reference", "[train][parity]") {
  json ref = reference();
  std::vector<train::Example> examples;
  for (const auto& g : ref["groups"])
    for (const auto& c : g["completions"])
      examples.push_back({g["prompt"].get<std::vector<int>>(), c["tokens"].get<std::vector<int>>()});
  auto pol = load_policy();
  train::UpdateOptions opts;
  opts.lr = 0;
  opts.micro_batch = 4;
  opts.max_grad_norm = 0;
  auto trainer = train::Trainer::sft(pol, opts);
  load_perturbed(*pol);
  auto st = trainer->gradients(examples);
  CHECK(st.loss == Approx(ref["cases"]["sft"]["loss"].get<double>()).epsilon(1e-5));
  check_gradients(*pol, ref["cases"]["sft"], ref["watch"]);
}

TEST_CASE("gradient checkpointing gives the same gradients as keeping activations", "[train][checkpointing]") {
  json ref = reference();
  auto groups = groups_of(ref);
  // layers: -1 keeps every block's activations, 0 recomputes all, N the first N.
  auto gradients_with = [&](int layers, bool lora) {
    train::GrpoOptions opts;
    opts.beta = 0.04;
    opts.micro_batch = 3;
    opts.grad_checkpoint = layers >= 0;
    opts.grad_checkpoint_layers = std::max(layers, 0);
    // q, k, v: a fused group (one dropout for the three); up without gate: each on its own.
    if (lora) opts.lora = train::LoraSettings{4, 8, 0.1, {"q_proj", "k_proj", "v_proj", "up_proj", "down_proj"}};
    opts.seed = 5;
    auto pol = load_policy();
    auto trainer = train::Trainer::grpo(pol, opts);
    load_perturbed(*pol);
    torch::manual_seed(11);  // the adapters' dropout draws the same masks in both runs
    auto st = trainer->gradients(groups);
    std::vector<torch::Tensor> grads;
    for (auto& p : policy::TorchSide::model(*pol)->parameters())
      if (p.grad().defined()) grads.push_back(p.grad().clone());
    for (auto& m : policy::TorchSide::model(*pol)->modules())
      if (auto lin = std::dynamic_pointer_cast<policy::LinearImpl>(m); lin && lin->adapter)
        for (auto& t : static_cast<train::LoraAdapter&>(*lin->adapter).parameters())
          grads.push_back(t.grad().clone());
    return std::make_pair(st.loss, grads);
  };
  for (bool lora : {false, true})
    for (int layers : {0, 1}) {
      auto [loss_a, a] = gradients_with(-1, lora);
      auto [loss_b, b] = gradients_with(layers, lora);
      INFO((lora ? "lora" : "full") << ", blocks recomputed: " << (layers ? "the first" : "all"));
      CHECK(loss_a == Approx(loss_b).epsilon(1e-6));
      REQUIRE(a.size() == b.size());
      REQUIRE(!a.empty());
      for (size_t i = 0; i < a.size(); ++i) CHECK(torch::allclose(a[i], b[i], 1e-5, 1e-7));
    }
}

TEST_CASE("LoRA on fused projections gives the gradients of each projection's own adapter", "[train][lora]") {
  json ref = reference();
  auto groups = groups_of(ref);
  // Without dropout the fused groups (q/k/v, gate/up: one GEMM by the stacked A's, one by
  // the block-diagonal B's) must compute exactly what the adapters compute one by one.
  auto gradients_with = [&](bool fused) {
    train::GrpoOptions opts;
    opts.micro_batch = 3;
    opts.lora = train::LoraSettings{4, 8, 0.0};
    auto pol = load_policy();
    auto trainer = train::Trainer::grpo(pol, opts);
    load_perturbed(*pol);
    auto model = policy::TorchSide::model(*pol);
    auto* block = model->layers[0]->as<policy::BlockImpl>();
    REQUIRE(block->self_attn->qkv_weight.defined() == true);  // LoRA keeps the fused GEMMs
    if (!fused) model->unfuse();
    std::vector<torch::Tensor> grads;
    std::vector<std::shared_ptr<train::LoraAdapter>> adapters;
    for (auto& m : model->modules())
      if (auto lin = std::dynamic_pointer_cast<policy::LinearImpl>(m); lin && lin->adapter)
        adapters.push_back(std::static_pointer_cast<train::LoraAdapter>(lin->adapter));
    REQUIRE(adapters.size() == 14);
    {
      torch::NoGradGuard no_grad;  // B starts at zero: give every term a size
      torch::manual_seed(3);
      for (auto& a : adapters) a->B.uniform_(-0.5, 0.5);
    }
    auto st = trainer->gradients(groups);
    for (auto& a : adapters)
      for (auto& t : a->parameters()) grads.push_back(t.grad().clone());
    return std::make_pair(st.loss, grads);
  };
  auto [loss_fused, fused] = gradients_with(true);
  auto [loss_apart, apart] = gradients_with(false);
  CHECK(loss_fused == Approx(loss_apart).epsilon(1e-5));  // fp32 sums in another order
  REQUIRE(fused.size() == apart.size());
  for (size_t i = 0; i < fused.size(); ++i) {
    INFO("tensor " << i);
    CHECK(fused[i].abs().max().item<double>() > 0);
    // fp32 sums in another order: an entry near zero is off by a few ulps of the tensor's
    // largest (1.5e-7 where the largest is 0.22 on a 2-core EPYC), so the absolute
    // tolerance is the tensor's scale; another adapter's gradient would be off by all of it
    double scale = apart[i].abs().max().item<double>();
    INFO("max |fused - apart| " << (fused[i] - apart[i]).abs().max().item<double>() << ", max |apart| " << scale);
    CHECK(torch::allclose(fused[i], apart[i], 1e-5, 1e-5 * scale));
  }
}

TEST_CASE("a LoRA policy samples and scores without its adapters' dropout", "[train][lora]") {
  json ref = reference();
  train::GrpoOptions opts;
  opts.lr = 1e-2;
  opts.micro_batch = 3;
  opts.lora = train::LoraSettings{4, 8, 0.5};
  auto pol = load_policy();
  auto trainer = train::Trainer::grpo(pol, opts);
  trainer->step(groups_of(ref));  // B leaves zero: the adapters' terms now count
  const auto& g = ref["groups"][0];
  auto prompt = g["prompt"].get<std::vector<int>>();
  auto completion = g["completions"][0]["tokens"].get<std::vector<int>>();
  auto once = pol->logprobs(prompt, completion), again = pol->logprobs(prompt, completion);
  CHECK(once == again);  // with dropout on, two scorings would draw two masks
  CHECK(once != load_policy()->logprobs(prompt, completion));
  // Sampling goes through the fused q/k/v and gate/up groups with their adapters: the same
  // seed draws the same tokens, and the log-probs it reports are the scoring's.
  policy::SampleOptions so;
  so.n = 2, so.max_tokens = 6, so.seed = 4, so.ignore_eos = true;
  auto a = pol->sample({prompt}, so), b = pol->sample({prompt}, so);
  REQUIRE(a[0].size() == 2);
  for (int i = 0; i < 2; ++i) {
    CHECK(a[0][i].tokens == b[0][i].tokens);
    auto scored = pol->logprobs(prompt, a[0][i].tokens);
    for (size_t k = 0; k < scored.size(); ++k) CHECK(scored[k] == Approx(a[0][i].logprobs[k]).margin(1e-4));
  }
}
