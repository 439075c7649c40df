// Safetensors and config.json reading: formats, sharding and the errors users will meet.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>

#include "policy/config.hpp"
#include "policy/safetensors.hpp"
#include "files/files.hpp"

using namespace policy;
namespace fs = std::filesystem;

static fs::path tmpdir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("policy_loader_" + name + "_" + std::to_string(::getpid()));
  files::remove_tree(std::filesystem::path(d).string());
  fs::create_directories(d);
  return d;
}

static void write_text(const fs::path& p, const std::string& s) { std::ofstream(p) << s; }

TEST_CASE("safetensors round-trips tensors of every weight dtype") {
  auto d = tmpdir("roundtrip");
  float f[6] = {1, 2, 3, 4, 5, 6};
  uint16_t h[3] = {0x3c00, 0x4000, 0x4200};  // fp16 1, 2, 3
  uint16_t b[2] = {0x3f80, 0xbf80};          // bf16 1, -1
  write_safetensors(d / "t.safetensors",
                    {{"a.weight", DType::F32, {2, 3}, f, sizeof f},
                     {"b", DType::F16, {3}, h, sizeof h},
                     {"c", DType::BF16, {1, 2}, b, sizeof b}},
                    {{"format", "pt"}});
  SafetensorsFile file(d / "t.safetensors");
  REQUIRE(file.tensors().size() == 3);
  CHECK(file.metadata().at("format") == "pt");
  auto& a = file.tensors().at("a.weight");
  CHECK(a.dtype == DType::F32);
  CHECK(a.shape == std::vector<int64_t>{2, 3});
  CHECK(std::memcmp(a.data, f, sizeof f) == 0);
  CHECK(reinterpret_cast<uintptr_t>(a.data) % 8 == 0);
  CHECK(file.tensors().at("b").dtype == DType::F16);
  CHECK(std::memcmp(file.tensors().at("c").data, b, sizeof b) == 0);
}

TEST_CASE("a truncated safetensors file is an error naming the tensor") {
  auto d = tmpdir("trunc");
  std::vector<float> w(100, 1.0f);
  write_safetensors(d / "model.safetensors", {{"model.w", DType::F32, {100}, w.data(), 400}});
  fs::resize_file(d / "model.safetensors", fs::file_size(d / "model.safetensors") - 10);
  try {
    SafetensorsFile f(d / "model.safetensors");
    FAIL("no error");
  } catch (const LoadError& e) {
    std::string m = e.what();
    CHECK(m.find("model.w") != std::string::npos);
    CHECK(m.find("truncated") != std::string::npos);
  }
  fs::resize_file(d / "model.safetensors", 5);
  CHECK_THROWS_WITH(SafetensorsFile(d / "model.safetensors"), Catch::Contains("truncated"));
}

TEST_CASE("a safetensors header whose offsets disagree with the shape is rejected") {
  auto d = tmpdir("badshape");
  std::string header = R"({"x":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})";
  std::string bytes(8, '\0');
  uint64_t n = header.size();
  std::memcpy(bytes.data(), &n, 8);
  bytes += header + std::string(8, '\0');
  write_text(d / "x.safetensors", bytes);
  CHECK_THROWS_WITH(SafetensorsFile(d / "x.safetensors"), Catch::Contains("'x'") && Catch::Contains("need 12"));
}

TEST_CASE("a sharded checkpoint is read through its index") {
  Checkpoint ck(fs::path(POLICY_FIXTURES) / "tiny_qwen2");
  CHECK(ck.files() == 4);
  CHECK(ck.has("model.embed_tokens.weight"));
  CHECK(ck.get("model.layers.1.self_attn.q_proj.bias").shape == std::vector<int64_t>{64});
  CHECK_THROWS_WITH(ck.get("lm_head.weight"), Catch::Contains("missing tensor 'lm_head.weight'"));
}

TEST_CASE("a directory without weights is a clear error") {
  auto d = tmpdir("empty");
  CHECK_THROWS_WITH(Checkpoint(d), Catch::Contains("model.safetensors"));
}

TEST_CASE("config.json is read as current transformers writes it") {
  auto c = load_config(fs::path(POLICY_FIXTURES) / "tiny_llama");
  CHECK(c.model_type == "llama");
  CHECK(c.num_kv_heads == 1);
  CHECK(c.head_dim == 16);
  CHECK(c.rope_theta == 500000.0);
  CHECK(c.rope_factor == 8.0);
  CHECK(c.rope_original_max == 32);
  CHECK_FALSE(c.tie_embeddings);
  CHECK_FALSE(c.qkv_bias);
  CHECK(c.eos_token_ids == std::vector<int64_t>{2});
  auto q = load_config(fs::path(POLICY_FIXTURES) / "tiny_qwen2");
  CHECK(q.qkv_bias);
  CHECK(q.tie_embeddings);
  CHECK(q.rope_theta == 10000.0);
}

TEST_CASE("config.json is read as older transformers wrote it") {
  auto c = parse_config(R"({"model_type":"qwen2","vocab_size":151936,"hidden_size":896,
    "intermediate_size":4864,"num_hidden_layers":24,"num_attention_heads":14,
    "num_key_value_heads":2,"rope_theta":1000000.0,"rope_scaling":null,
    "tie_word_embeddings":true,"eos_token_id":[151643,151645]})");
  CHECK(c.head_dim == 64);
  CHECK(c.rope_theta == 1000000.0);
  CHECK(c.eos_token_ids == std::vector<int64_t>{151643, 151645});
  CHECK(c.max_position == 32768);
}

TEST_CASE("unsupported configs are errors naming the field") {
  const std::string base = R"("vocab_size":10,"hidden_size":8,"intermediate_size":16,
    "num_hidden_layers":1,"num_attention_heads":2)";
  CHECK_THROWS_WITH(parse_config(R"({"model_type":"gpt2",)" + base + "}"),
                    Catch::Contains("model_type") && Catch::Contains("gpt2"));
  CHECK_THROWS_WITH(parse_config(R"({"model_type":"llama"})"), Catch::Contains("vocab_size"));
  CHECK_THROWS_WITH(parse_config(R"({"model_type":"llama",)" + base + R"(,"num_key_value_heads":3})"),
                    Catch::Contains("num_key_value_heads"));
  CHECK_THROWS_WITH(parse_config(R"({"model_type":"llama",)" + base +
                                 R"(,"rope_scaling":{"rope_type":"yarn","factor":4}})"),
                    Catch::Contains("rope_type") && Catch::Contains("yarn"));
  CHECK_THROWS_WITH(parse_config(R"({"model_type":"llama",)" + base + R"(,"hidden_act":"gelu"})"),
                    Catch::Contains("hidden_act"));
  CHECK_THROWS_WITH(parse_config(R"({"model_type":"qwen2",)" + base +
                                 R"(,"use_sliding_window":true,"sliding_window":4096})"),
                    Catch::Contains("use_sliding_window"));
  CHECK_NOTHROW(parse_config(R"({"model_type":"qwen2",)" + base +
                             R"(,"use_sliding_window":false,"sliding_window":4096})"));
  CHECK_THROWS_WITH(parse_config("{nope"), Catch::Contains("invalid JSON"));
}
