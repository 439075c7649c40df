// The architecture of a Hugging Face Qwen2/Llama-family checkpoint, from its config.json.
// Fields are read as both older and current `transformers` write them (e.g. rope_theta
// at the top level or inside rope_parameters); anything unsupported is a LoadError that
// names the field.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace policy {

struct ModelConfig {
  std::string model_type;       // "qwen2" or "llama"
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;     // GQA: num_heads % num_kv_heads == 0
  int64_t head_dim = 0;
  int64_t max_position = 0;
  double rms_eps = 1e-6;
  double rope_theta = 10000.0;
  // Llama 3 frequency scaling (rope_type "llama3"); factor 0 means none.
  double rope_factor = 0, rope_low_freq = 1, rope_high_freq = 4;
  int64_t rope_original_max = 8192;
  bool tie_embeddings = false;
  bool qkv_bias = false;        // Qwen2: always; Llama: attention_bias
  bool o_bias = false;          // Llama attention_bias also covers o_proj
  bool mlp_bias = false;
  std::vector<int64_t> eos_token_ids;  // config.json and generation_config.json
  std::string torch_dtype;      // as saved ("bfloat16", ...), informational
};

ModelConfig parse_config(const std::string& json_text, const std::string& where = "config.json");
ModelConfig load_config(const std::filesystem::path& dir);

}  // namespace policy
