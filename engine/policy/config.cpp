#include "policy/config.hpp"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "policy/safetensors.hpp"  // LoadError

namespace policy {

using Json = nlohmann::json;

namespace {

struct Reader {
  const Json& j;
  std::string where;
  LoadError error(const std::string& field, const std::string& why) const {
    return LoadError(where + ": field '" + field + "' " + why);
  }
  bool has(const char* k) const { return j.contains(k) && !j[k].is_null(); }
  int64_t integer(const char* k) const {
    if (!has(k)) throw error(k, "is missing");
    if (!j[k].is_number_integer()) throw error(k, "must be an integer");
    int64_t v = j[k].get<int64_t>();
    if (v <= 0) throw error(k, "must be positive, got " + std::to_string(v));
    return v;
  }
  int64_t integer(const char* k, int64_t dflt) const { return has(k) ? integer(k) : dflt; }
  double number(const Json& obj, const char* k, double dflt) const {
    if (!obj.contains(k) || obj[k].is_null()) return dflt;
    if (!obj[k].is_number()) throw error(k, "must be a number");
    return obj[k].get<double>();
  }
  bool boolean(const char* k, bool dflt) const {
    if (!has(k)) return dflt;
    if (!j[k].is_boolean()) throw error(k, "must be true or false");
    return j[k].get<bool>();
  }
};

void add_eos(std::vector<int64_t>& out, const Json& v) {
  auto add = [&](const Json& x) {
    if (!x.is_number_integer()) return;
    int64_t id = x.get<int64_t>();
    for (auto e : out)
      if (e == id) return;
    out.push_back(id);
  };
  if (v.is_array())
    for (auto& x : v) add(x);
  else
    add(v);
}

// rope_scaling (older) or rope_parameters (current): theta and the scaling type.
void read_rope(const Reader& r, ModelConfig& c) {
  c.rope_theta = r.number(r.j, "rope_theta", 10000.0);
  for (const char* key : {"rope_scaling", "rope_parameters"}) {
    if (!r.has(key)) continue;
    const Json& p = r.j[key];
    if (!p.is_object()) throw r.error(key, "must be an object");
    c.rope_theta = r.number(p, "rope_theta", c.rope_theta);
    std::string type = "default";
    if (p.contains("rope_type") && p["rope_type"].is_string()) type = p["rope_type"];
    else if (p.contains("type") && p["type"].is_string()) type = p["type"];
    if (type == "default") continue;
    if (type == "llama3") {
      c.rope_factor = r.number(p, "factor", 8.0);
      c.rope_low_freq = r.number(p, "low_freq_factor", 1.0);
      c.rope_high_freq = r.number(p, "high_freq_factor", 4.0);
      c.rope_original_max =
          static_cast<int64_t>(r.number(p, "original_max_position_embeddings", 8192));
      continue;
    }
    throw r.error(std::string(key) + ".rope_type",
                  "is '" + type + "', which the engine does not support (default, llama3)");
  }
}

}  // namespace

ModelConfig parse_config(const std::string& text, const std::string& where) {
  Json j;
  try {
    j = Json::parse(text);
  } catch (const std::exception& e) {
    throw LoadError(where + ": invalid JSON: " + e.what());
  }
  if (!j.is_object()) throw LoadError(where + ": not a JSON object");
  // Multimodal-style configs nest the language model's fields.
  if (j.contains("text_config") && j["text_config"].is_object() && !j.contains("hidden_size")) {
    Json inner = j["text_config"];
    if (!inner.contains("model_type") && j.contains("model_type")) inner["model_type"] = j["model_type"];
    j = inner;
  }
  Reader r{j, where};
  ModelConfig c;
  if (!r.has("model_type") || !j["model_type"].is_string())
    throw r.error("model_type", "is missing");
  c.model_type = j["model_type"].get<std::string>();
  if (c.model_type != "qwen2" && c.model_type != "llama")
    throw r.error("model_type", "is '" + c.model_type +
                                    "'; supported architectures: qwen2, llama");
  c.vocab_size = r.integer("vocab_size");
  c.hidden_size = r.integer("hidden_size");
  c.intermediate_size = r.integer("intermediate_size");
  c.num_layers = r.integer("num_hidden_layers");
  c.num_heads = r.integer("num_attention_heads");
  c.num_kv_heads = r.integer("num_key_value_heads", c.num_heads);
  c.head_dim = r.integer("head_dim", c.hidden_size / c.num_heads);
  if (!r.has("head_dim") && c.hidden_size % c.num_heads)
    throw r.error("num_attention_heads", "does not divide hidden_size");
  if (c.num_heads % c.num_kv_heads)
    throw r.error("num_key_value_heads", "must divide num_attention_heads (" +
                                             std::to_string(c.num_heads) + ")");
  if (c.head_dim % 2) throw r.error("head_dim", "must be even for rotary embeddings");
  c.max_position = r.integer("max_position_embeddings", 32768);
  c.rms_eps = r.number(j, "rms_norm_eps", 1e-6);
  if (r.has("hidden_act") && j["hidden_act"] != "silu")
    throw r.error("hidden_act", "is '" + j["hidden_act"].get<std::string>() +
                                    "'; the engine supports silu");
  read_rope(r, c);
  // Sliding-window attention (some Qwen2 configs) would need a different mask.
  if (r.boolean("use_sliding_window", false) && r.has("sliding_window") &&
      j["sliding_window"].is_number_integer() &&
      j["sliding_window"].get<int64_t>() < c.max_position)
    throw r.error("use_sliding_window", "is true; the engine supports full attention only");
  c.tie_embeddings = r.boolean("tie_word_embeddings", false);
  if (c.model_type == "qwen2") {
    c.qkv_bias = true;
  } else {
    c.qkv_bias = c.o_bias = r.boolean("attention_bias", false);
    c.mlp_bias = r.boolean("mlp_bias", false);
  }
  if (r.has("eos_token_id")) add_eos(c.eos_token_ids, j["eos_token_id"]);
  for (const char* k : {"torch_dtype", "dtype"})
    if (r.has(k) && j[k].is_string()) c.torch_dtype = j[k].get<std::string>();
  return c;
}

ModelConfig load_config(const std::filesystem::path& dir) {
  auto read = [](const std::filesystem::path& p) {
    std::ifstream in(p);
    if (!in) throw LoadError(p.string() + ": cannot open");
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  };
  if (!std::filesystem::is_directory(dir))
    throw LoadError(dir.string() + ": no such checkpoint directory");
  if (!std::filesystem::exists(dir / "config.json"))
    throw LoadError(dir.string() + ": no config.json (not a Hugging Face checkpoint directory)");
  ModelConfig c = parse_config(read(dir / "config.json"), (dir / "config.json").string());
  auto gen = dir / "generation_config.json";
  if (std::filesystem::exists(gen)) {
    try {
      Json g = Json::parse(read(gen));
      if (g.contains("eos_token_id")) add_eos(c.eos_token_ids, g["eos_token_id"]);
    } catch (const nlohmann::json::exception& e) {
      throw LoadError(gen.string() + ": invalid JSON: " + e.what());
    }
  }
  return c;
}

}  // namespace policy
