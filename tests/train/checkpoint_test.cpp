// Checkpoints resume a run exactly, and exports load back as the same model.
#include "../catch_torch.hpp"

#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include "policy/torch_side.hpp"
#include "policy/safetensors.hpp"
#include "train/trainer.hpp"
#include "files/files.hpp"

namespace fs = std::filesystem;

namespace {

const fs::path kBase = fs::path(ENGINE_TRAIN_FIXTURE) / "base";

fs::path scratch(const std::string& name) {
  fs::path p = fs::temp_directory_path() / ("ckpt_test_" + std::to_string(getpid())) / name;
  files::remove_tree(std::filesystem::path(p).string());
  return p;
}

std::shared_ptr<policy::Policy> load(const fs::path& dir) {
  return std::shared_ptr<policy::Policy>(policy::Policy::load(dir.string()));
}

std::vector<train::Example> examples(int shift) {
  return {{{3, 4, 5}, {10 + shift, 11, 12, 2}}, {{7, 8}, {20, 21 + shift, 2}}};
}

torch::Tensor logits_of(policy::Policy& pol) {
  torch::NoGradGuard no_grad;
  auto ids = torch::tensor({3, 4, 5, 10, 11, 12}, torch::kInt64).unsqueeze(0);
  return policy::TorchSide::model(pol)->forward(ids);
}

train::UpdateOptions adam(bool lora) {
  train::UpdateOptions o;
  o.lr = 1e-2;
  o.micro_batch = 1;
  if (lora) o.lora = train::LoraSettings{4, 8, 0.0, {"q_proj", "v_proj", "down_proj"}};
  return o;
}

}  // namespace

TEST_CASE("a reloaded SFT checkpoint continues exactly like the run that saved it", "[train][checkpoint]") {
  for (bool lora : {false, true}) {
    SECTION(lora ? "lora" : "full") {
      fs::path ckpt = scratch(lora ? "lora" : "full");
      auto a = load(kBase);
      auto ta = train::Trainer::sft(a, adam(lora));
      ta->step(examples(0));
      ta->step(examples(1));
      ta->save(ckpt);
      ta->step(examples(2));

      auto b = load(kBase);
      auto tb = train::Trainer::sft(b, adam(lora));
      tb->load(ckpt);
      CHECK(tb->steps() == 2);
      tb->step(examples(2));
      CHECK(torch::equal(logits_of(*a), logits_of(*b)));
      // Sanity: training moved the model at all.
      auto c = load(kBase);
      CHECK_FALSE(torch::allclose(logits_of(*a), logits_of(*c)));
    }
  }
}

TEST_CASE("a checkpoint of the wrong kind is refused with a reason", "[train][checkpoint]") {
  fs::path ckpt = scratch("kind");
  auto a = load(kBase);
  train::Trainer::sft(a, adam(false))->save(ckpt);
  auto b = load(kBase);
  auto grpo = train::Trainer::grpo(b, train::GrpoOptions{});
  CHECK_THROWS_WITH(grpo->load(ckpt), Catch::Contains("holds a sft trainer's state"));
  auto lora = train::Trainer::sft(b, adam(true));
  CHECK_THROWS_WITH(lora->load(ckpt), Catch::Contains("holds full weights"));
  CHECK_THROWS_WITH(lora->load(scratch("nothing")), Catch::Contains("no trainer state"));
}

TEST_CASE("exported checkpoints load back as the trained model", "[train][export]") {
  auto a = load(kBase);
  auto t = train::Trainer::sft(a, adam(true));
  t->step(examples(0));
  t->step(examples(1));

  fs::path full = scratch("export_full");
  t->export_hf(full, false);
  CHECK(fs::exists(full / "config.json"));
  auto reloaded = load(full);  // adapters merged into plain weights
  CHECK(torch::allclose(logits_of(*a), logits_of(*reloaded), 1e-4, 1e-5));

  fs::path adapter = scratch("export_adapter");
  t->export_hf(adapter, true);
  std::ifstream in(adapter / "adapter_config.json");
  auto cfg = nlohmann::json::parse(in);
  CHECK(cfg["peft_type"] == "LORA");
  CHECK(cfg["r"] == 4);
  CHECK(cfg["lora_alpha"] == 8.0);
  policy::SafetensorsFile f(adapter / "adapter_model.safetensors");
  CHECK(f.tensors().count("base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight") == 1);
  CHECK(f.tensors().at("base_model.model.model.layers.1.mlp.down_proj.lora_B.weight").shape ==
        std::vector<int64_t>{32, 4});
  CHECK_THROWS_WITH(train::Trainer::sft(load(kBase), adam(false))->export_hf(adapter, true),
                    Catch::Contains("needs a LoRA trainer"));
}
