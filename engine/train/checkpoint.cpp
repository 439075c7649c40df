// A trainer's checkpoint (its weights or adapters, the optimizer, its counters) and the
// exports Hugging Face and peft load.
#include "train/checkpoint.hpp"

#include <fstream>
#include <map>
#include <optional>

#include <nlohmann/json.hpp>

#include "policy/safetensors.hpp"
#include "train/lora.hpp"

namespace fs = std::filesystem;
using torch::Tensor;

namespace train {

namespace {

policy::DType safetensors_dtype(torch::Dtype t) {
  switch (t) {
    case torch::kFloat32: return policy::DType::F32;
    case torch::kBFloat16: return policy::DType::BF16;
    case torch::kFloat16: return policy::DType::F16;
    default: throw std::runtime_error("train: cannot save tensors of this dtype");
  }
}

torch::Dtype torch_dtype(policy::DType t) {
  switch (t) {
    case policy::DType::F32: return torch::kFloat32;
    case policy::DType::BF16: return torch::kBFloat16;
    case policy::DType::F16: return torch::kFloat16;
    default: throw std::runtime_error(std::string("train: cannot load tensors of dtype ") +
                                      policy::dtype_name(t));
  }
}

void write_tensors(const fs::path& path,
                   const std::vector<std::pair<std::string, Tensor>>& named,
                   const std::map<std::string, std::string>& metadata = {}) {
  std::vector<Tensor> keep;
  std::vector<policy::TensorData> data;
  for (const auto& [name, t] : named) {
    Tensor c = t.detach().to(torch::kCPU).contiguous();
    keep.push_back(c);
    std::vector<int64_t> shape(c.sizes().begin(), c.sizes().end());
    data.push_back({name, safetensors_dtype(c.scalar_type()), shape, c.data_ptr(),
                    static_cast<size_t>(c.numel() * c.element_size())});
  }
  policy::write_safetensors(path, data, metadata);
}

std::vector<std::pair<std::string, Tensor>> read_tensors(const fs::path& path) {
  policy::SafetensorsFile file(path);
  std::vector<std::pair<std::string, Tensor>> out;
  for (const auto& [name, v] : file.tensors()) {
    auto opts = torch::TensorOptions().dtype(torch_dtype(v.dtype));
    Tensor t = torch::from_blob(const_cast<void*>(v.data), v.shape, opts).clone();
    out.emplace_back(name, t);
  }
  return out;
}

// The model's parameter names are Hugging Face's without the leading "model.".
std::string hf_name(const std::string& name) {
  return name.rfind("lm_head.", 0) == 0 ? name : "model." + name;
}

void copy_if_present(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  if (fs::exists(from, ec)) fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
}

}  // namespace

static std::optional<torch::Dtype> export_dtype(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (name == "fp32") return torch::kFloat32;
  if (name == "bf16") return torch::kBFloat16;
  if (name == "fp16") return torch::kFloat16;
  throw std::invalid_argument("train: export dtype must be fp32, bf16 or fp16, not '" + name + "'");
}

static const char* hf_dtype_name(torch::Dtype t) {
  return t == torch::kBFloat16 ? "bfloat16" : t == torch::kFloat16 ? "float16" : "float32";
}

void save_checkpoint(const fs::path& dir, const TrainedParts& p, const SavedState& s) {
  fs::create_directories(dir);
  std::vector<std::pair<std::string, Tensor>> weights;
  if (p.lora) weights = p.lora->named_tensors();
  else
    for (const auto& item : p.model->named_parameters()) weights.emplace_back(item.key(), item.value());
  write_tensors(dir / "weights.safetensors", weights);
  torch::save(*p.optim, (dir / "optimizer.pt").string());
  nlohmann::json state = {{"kind", s.kind}, {"step", s.step}, {"lora", p.lora != nullptr}};
  if (s.lr) state["lr"] = *s.lr;
  std::ofstream(dir / "trainer.json") << state.dump(2) << "\n";
}

SavedState load_checkpoint(const fs::path& dir, const TrainedParts& p, const std::string& kind) {
  // A malformed checkpoint is the user's to fix: one line that names it, never libtorch's
  // backtrace (c10::Error's what()).
  auto load_state = [&] {
    std::ifstream in(dir / "trainer.json");
    if (!in) throw std::runtime_error("train: no trainer state in " + dir.string());
    nlohmann::json state;
    try {
      state = nlohmann::json::parse(in);
    } catch (const nlohmann::json::parse_error& e) {
      // Its what() ends by quoting the input read last: in a damaged file, any number of
      // binary bytes. The reason and the position only.
      std::string why = e.what();
      why = why.substr(0, why.find("; last read"));  // npos: all of it
      throw std::runtime_error("train: corrupt " + (dir / "trainer.json").string() + ": " + why);
    } catch (const std::exception& e) {
      throw std::runtime_error("train: corrupt " + (dir / "trainer.json").string() + ": " + e.what());
    }
    if (!state.is_object())
      throw std::runtime_error("train: corrupt " + (dir / "trainer.json").string() + ": not a JSON object");
    std::string saved = state.value("kind", "");
    if (saved != kind)
      throw std::runtime_error("train: " + dir.string() + " holds a " + saved + " trainer's state, not a " + kind +
                               " one");
    if (state.value("lora", false) != (p.lora != nullptr))
      throw std::runtime_error("train: " + dir.string() +
                               (p.lora ? " holds full weights but this trainer uses LoRA"
                                       : " holds LoRA adapters but this trainer trains fully"));
    auto tensors = read_tensors(dir / "weights.safetensors");
    if (p.lora) {
      p.lora->load(tensors);
    } else {
      auto params = p.model->named_parameters();
      torch::NoGradGuard no_grad;
      for (const auto& [name, t] : tensors) {
        auto* param = params.find(name);
        if (!param) throw std::runtime_error("train: checkpoint tensor " + name + " is not in the model");
        if (param->sizes() != t.sizes())
          throw std::runtime_error("train: checkpoint tensor " + name + " has the wrong shape");
        param->copy_(t);
      }
      if (tensors.size() != params.size())
        throw std::runtime_error("train: the checkpoint lacks some of the model's weights");
    }
    torch::load(*p.optim, (dir / "optimizer.pt").string());
    SavedState s{saved, state.value("step", int64_t{0}), std::nullopt};
    if (state.contains("lr")) s.lr = state["lr"].get<double>();
    return s;
  };
  try {
    return load_state();
  } catch (const c10::Error& e) {
    std::string msg = e.what_without_backtrace();
    msg = msg.substr(0, msg.find('\n'));
    throw std::runtime_error("train: cannot load the checkpoint " + dir.string() + ": " + msg);
  }
}

void export_hf(const fs::path& dir, const TrainedParts& p, bool adapter_only, const std::string& dtype) {
  const auto cast = export_dtype(dtype);
  fs::create_directories(dir);
  if (adapter_only) {
    if (!p.lora) throw std::runtime_error("train: adapter_only export needs a LoRA trainer");
    const auto& lo = p.lora->options();
    write_tensors(dir / "adapter_model.safetensors", p.lora->named_tensors(), {{"format", "pt"}});
    nlohmann::json cfg = {{"peft_type", "LORA"},       {"task_type", "CAUSAL_LM"},
                          {"r", lo.r},                  {"lora_alpha", lo.alpha},
                          {"lora_dropout", lo.dropout}, {"target_modules", lo.targets},
                          {"bias", "none"},             {"fan_in_fan_out", false},
                          {"inference_mode", true},     {"base_model_name_or_path", p.base_dir}};
    std::ofstream(dir / "adapter_config.json") << cfg.dump(2) << "\n";
    return;
  }
  // Full weights: adapters merged in, so the export loads without peft.
  std::vector<std::pair<std::string, Tensor>> weights;
  {
    torch::NoGradGuard no_grad;
    std::map<std::string, Tensor> merged;
    if (p.lora)
      for (const auto& [name, t] : p.lora->merged_weights()) merged[name] = t;
    for (const auto& item : p.model->named_parameters()) {
      auto it = merged.find(item.key());
      Tensor w = it != merged.end() ? it->second : item.value();
      weights.emplace_back(hf_name(item.key()), cast ? w.to(*cast) : w);
    }
  }
  write_tensors(dir / "model.safetensors", weights, {{"format", "pt"}});
  fs::path src = p.base_dir;
  for (const char* f : {"config.json", "generation_config.json", "tokenizer.json",
                        "tokenizer_config.json", "special_tokens_map.json"})
    copy_if_present(src / f, dir / f);
  if (cast && fs::exists(dir / "config.json")) {  // the config names the stored dtype
    nlohmann::json config = nlohmann::json::parse(std::ifstream(dir / "config.json"));
    config["torch_dtype"] = hf_dtype_name(*cast);
    std::ofstream(dir / "config.json") << config.dump(2) << "\n";
  }
}

}  // namespace train
