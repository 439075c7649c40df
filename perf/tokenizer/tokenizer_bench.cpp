// Tokenizer throughput on a corpus of code, prose and Unicode: full encoding with the
// word cache (steady state), without it (every word through the rank-merge loop), and the
// pre-tokenizer alone (NFC + regex split, the floor of any BPE over this pattern);
// decoding; training. Prints tokens/s, MB/s and ratios measured in this run.
//
//   tokenizer_bench [TOKENIZER_DIR] [FILES...]
// Without files the corpus is this repository's sources plus the parity corpus texts.
#include "tokenizer/tokenizer.hpp"
#include "tokenizer/tokenizer_impl.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

static double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Repeats fn until at least min_s have passed; returns seconds per call.
template <class F>
static double time_it(F&& fn, double min_s = 1.0) {
  int reps = 0;
  auto t0 = Clock::now();
  do {
    fn();
    ++reps;
  } while (seconds_since(t0) < min_s);
  return seconds_since(t0) / reps;
}

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : QWEN3_TOKENIZER_DIR;
  std::vector<std::string> docs;
  if (argc > 2) {
    for (int i = 2; i < argc; ++i) docs.push_back(tokenizer::read_text_file(argv[i]));
  } else {
    fs::path root = ENGINE_SOURCE_DIR;
    for (const char* sub : {"engine", "stdlib", "tests", "scripts", "perf"})
      for (auto& e : fs::recursive_directory_iterator(root / sub)) {
        auto ext = e.path().extension().string();
        if (e.is_regular_file() && (ext == ".cpp" || ext == ".hpp" || ext == ".lua" ||
                                    ext == ".md" || ext == ".py" || ext == ".sh"))
          docs.push_back(tokenizer::read_text_file(e.path()));
      }
    std::ifstream in(root / "tests/tokenizer/tokenizer_corpus.json");
    for (auto& t : nlohmann::json::parse(in)) docs.push_back(t.get<std::string>());
  }
  size_t bytes = 0;
  for (auto& d : docs) bytes += d.size();

  auto t_load = Clock::now();
  tokenizer::Tokenizer tok = tokenizer::Tokenizer::load(dir);
  double load_s = seconds_since(t_load);

  size_t tokens = 0;
  std::vector<std::vector<int>> encoded;
  auto encode_all = [&] {
    tokens = 0;
    encoded.clear();
    for (auto& d : docs) {
      encoded.push_back(tok.encode(d));
      tokens += encoded.back().size();
    }
  };
  tok.clear_cache();
  auto t_cold = Clock::now();
  encode_all();  // first pass: cache empty
  double cold_s = seconds_since(t_cold);
  double warm_s = time_it(encode_all);
  tok.set_cache_enabled(false);
  double nocache_s = time_it(encode_all);
  tok.set_cache_enabled(true);

  size_t pieces = 0;
  const auto* im = tok.impl();
  double pretok_s = time_it([&] {
    pieces = 0;
    for (auto& d : docs) im->walk(d, [&](int) { ++pieces; }, [&](std::string_view) { ++pieces; });
  });
  // The same split through PCRE2's JIT instead of the direct matcher.
  tokenizer::SplitRegex pcre(tokenizer::kQwen2Pattern, false);
  size_t pcre_pieces = 0;
  double pcre_s = time_it([&] {
    pcre_pieces = 0;
    for (auto& d : docs) pcre.split(d, [&](std::string_view) { ++pcre_pieces; });
  });
  tokenizer::SplitRegex direct(tokenizer::kQwen2Pattern);
  double direct_s = time_it([&] {
    for (auto& d : docs) direct.split(d, [&](std::string_view) {});
  });
  size_t decoded = 0;
  double decode_s = time_it([&] {
    decoded = 0;
    for (auto& ids : encoded) decoded += tok.decode(ids).size();
  });

  tokenizer::TrainOptions o;
  o.vocab_size = 4096;
  o.special_tokens = {"<|endoftext|>", "<|im_start|>", "<|im_end|>"};
  auto t_train = Clock::now();
  tokenizer::Tokenizer trained = tokenizer::train_bpe(docs, o);
  double train_s = seconds_since(t_train);
  size_t trained_tokens = 0;
  for (auto& d : docs) trained_tokens += trained.encode(d).size();

  auto mb = [&](double s) { return bytes / s / 1e6; };
  std::printf("tokenizer: %s (vocab %d), loaded in %.2f s\n", dir.c_str(), tok.vocab_size(), load_s);
  std::printf("corpus: %zu documents, %.2f MB, %zu tokens (%.2f bytes/token), %zu pre-tokens\n",
              docs.size(), bytes / 1e6, tokens, double(bytes) / tokens, pieces);
  std::printf("%-34s %12s %9s %8s\n", "", "tokens/s", "MB/s", "ratio");
  std::printf("%-34s %12.0f %9.2f %8.2f\n", "encode, warm word cache", tokens / warm_s, mb(warm_s), nocache_s / warm_s);
  std::printf("%-34s %12.0f %9.2f %8.2f\n", "encode, first pass (cache filling)", tokens / cold_s, mb(cold_s), nocache_s / cold_s);
  std::printf("%-34s %12.0f %9.2f %8.2f\n", "encode, no cache (baseline)", tokens / nocache_s, mb(nocache_s), 1.0);
  std::printf("%-34s %12.0f %9.2f %8.2f\n", "pre-tokenize only (NFC + split)", tokens / pretok_s, mb(pretok_s), nocache_s / pretok_s);
  std::printf("%-34s %12.0f %9.2f %8.2f\n", "split only, direct Qwen2 matcher", tokens / direct_s, mb(direct_s), nocache_s / direct_s);
  std::printf("%-34s %12.0f %9.2f %8.2f\n", "split only, PCRE2 JIT", tokens / pcre_s, mb(pcre_s), nocache_s / pcre_s);
  std::printf("%-34s %12.0f %9.2f\n", "decode", tokens / decode_s, decoded / decode_s / 1e6);
  std::printf("train vocab %d: %.2f s (%.2f MB/s), %zu tokens on the corpus (%.2f bytes/token)\n",
              trained.vocab_size(), train_s, mb(train_s), trained_tokens, double(bytes) / trained_tokens);
  return 0;
}
