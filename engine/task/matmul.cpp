// The paper's task: row-major C = A x B with A MxK, B KxN, verified against OpenBLAS.
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <functional>
#include <limits>
#include <tuple>
#include <stdexcept>
#include <vector>

#include "task/between_calls.hpp"
#include "task/helper.hpp"
#include "task/keystream.hpp"
#include "task/spec.hpp"
#include "task/task.hpp"
#include "task/trusted.hpp"

namespace bench {

// ---- matmul -------------------------------------------------------------------

namespace {

// splitmix64 for the sampled points of "paper" mode, drawn from a secret the zygote holds
// (never the kernel's process). Inputs come from a Keystream instead: this generator's
// state can be recovered from two outputs.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
  double signed_unit() { return 2 * uniform() - 1; }                          // [-1, 1)
};

using MatmulFn = void (*)(double*, double*, double*, int, int, int);
using DgemmFn = void (*)(int, int, int, int, int, int, double, const double*, int, const double*,
                         int, double, double*, int);
constexpr int kRowMajor = 101, kNoTrans = 111;

DgemmFn g_dgemm = nullptr;
std::string g_openblas_version;
void openblas_matmul(double* A, double* B, double* C, int M, int N, int K) {
  g_dgemm(kRowMajor, kNoTrans, kNoTrans, M, N, K, 1.0, A, K, B, N, 0.0, C, N);
}

// Loads OpenBLAS into the calling process with `threads` threads; returns an error text.
std::string load_openblas(int threads) {
  if (g_dgemm) return {};
  setenv("OPENBLAS_NUM_THREADS", std::to_string(threads).c_str(), 1);
  void* h = dlopen("libopenblas.so.0", RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    const char* e = dlerror();
    return std::string("cannot load OpenBLAS: ") + (e ? e : "libopenblas.so.0 not found");
  }
  g_dgemm = reinterpret_cast<DgemmFn>(dlsym(h, "cblas_dgemm"));
  if (!g_dgemm) return "libopenblas.so.0 has no cblas_dgemm";
  using ConfigFn = const char* (*)();
  if (auto config = reinterpret_cast<ConfigFn>(dlsym(h, "openblas_get_config"))) g_openblas_version = config();
  return {};
}

// The error bound of a double-precision dot product of length K computed in any order,
// with or without FMA: |fl(a.b) - a.b| <= K u |a|.|b| (u = 2^-53), and the reference's
// own error is as large again; 4 K u leaves room for both with margin. A kernel that
// rounds through single precision (u = 2^-24) misses it by orders of magnitude.
constexpr double kUnitRoundoff = 0x1.0p-53;
constexpr double kPaperTolerance = 1e-6;

class Matmul final : public Task {
 public:
  // seed < 0: inputs from a key drawn from the operating system (the default); else the
  // same inputs for that seed everywhere (for debugging: a kernel can know them).
  Matmul(int M, int N, int K, int64_t seed, bool nan_init, std::vector<YardstickSource> yardsticks)
      : M_(M), N_(N), K_(K), seed_(seed), nan_init_(nan_init), yardsticks_(std::move(yardsticks)) {}

  std::string seed_text() const { return seed_ < 0 ? "random" : std::to_string(seed_); }
  std::string describe() const override {
    char b[160];
    std::snprintf(b, sizeof b, "matmul %dx%dx%d seed %s, C initialised to %s", M_, N_, K_,
                  seed_text().c_str(), nan_init_ ? "NaN" : "zero");
    return b;
  }
  std::string key() const override {
    return "matmul:" + std::to_string(M_) + "x" + std::to_string(N_) + "x" + std::to_string(K_) +
           ":" + seed_text() + (nan_init_ ? ":nan" : ":zero") +
           (yardsticks_.empty() ? "" : ":" + std::to_string(std::hash<std::string>{}(options().dump())));
  }
  std::string entry() const override { return "matmul_optimized"; }
  double flops() const override { return 2.0 * M_ * N_ * K_; }
  double bytes() const override { return 8.0 * (double(M_) * K_ + double(K_) * N_ + double(M_) * N_); }
  nlohmann::json options() const override {
    nlohmann::json o = {{"kind", "matmul"}, {"M", M_}, {"N", N_}, {"K", K_}, {"c_init", nan_init_ ? "nan" : "zero"}};
    if (seed_ >= 0) o["seed"] = seed_;
    if (!yardsticks_.empty()) {
      o["yardsticks"] = nlohmann::json::array();
      for (const auto& y : yardsticks_) o["yardsticks"].push_back({{"name", y.name}, {"link", y.link}, {"source", y.source}});
    }
    return o;
  }

  // Call c's inputs, reference and |A|.|B| (for the error bound), side by side.
  size_t a_size() const { return size_t(M_) * K_; }
  size_t b_size() const { return size_t(K_) * N_; }
  size_t c_size() const { return size_t(M_) * N_; }
  size_t set_size() const { return a_size() + b_size() + 2 * c_size(); }
  const double* set(int c) const { return pool_.data() + size_t(c) * set_size(); }

  void prepare(int calls, int threads) override {
    if (calls <= calls_) return;
    const double bytes = double(calls) * double(set_size()) * sizeof(double);
    if (bytes > double(size_t(4) << 30))
      throw std::invalid_argument("warm-up and timed calls: " + std::to_string(calls) + " calls of " +
                                  describe() + " need " + std::to_string(int64_t(bytes / (1 << 20))) +
                                  " MB of reference data (at most 4096 MB): ask for fewer calls");
    // Made in shared memory by the library's helper process, inputs and references both,
    // so the inputs' key never exists in the zygote (whose memory every kernel's process
    // starts as a copy of); then copied into the pool, which children wipe and unmap.
    GuardedBuffer work(sizeof(double) * size_t(calls) * set_size(), true);
    make_calls(work.data(), calls, threads);
    SecretBuffer pool(size_t(calls) * set_size());
    std::memcpy(pool.data(), work.data(), sizeof(double) * size_t(calls) * set_size());
    pool_ = std::move(pool);
    calls_ = calls;
  }

  Stage make_stage() const override {
    Stage s;
    s.inputs.emplace_back(sizeof(double) * a_size(), true);
    s.inputs.emplace_back(sizeof(double) * b_size(), true);
    s.outputs.emplace_back(sizeof(double) * c_size(), true);
    s.input_names = {"A", "B"};
    s.output_names = {"C"};
    return s;
  }

  void load_call(Stage& s, int c) const override {
    const double* in = set(c);
    copy_in_parts(s.inputs[0].data(), in, sizeof(double) * a_size());
    copy_in_parts(s.inputs[1].data(), in + a_size(), sizeof(double) * b_size());
    fill_in_parts(s.outputs[0].data(), c_size(), nan_init_ ? std::numeric_limits<double>::quiet_NaN() : 0.0);
  }

  void invoke(void* entry, Stage& s) const override {
    reinterpret_cast<MatmulFn>(entry)(s.inputs[0].data(), s.inputs[1].data(), s.outputs[0].data(), M_, N_, K_);
  }

  std::vector<std::string> yardsticks() const override {
    std::vector<std::string> names = {"openblas"};
    for (const auto& y : yardsticks_) names.push_back(y.name);
    return names;
  }

  // OpenBLAS, loaded as the references are; any other library from the spec's source.
  Yardstick reference_entry(int threads, const std::string& name) override {
    if (!name.empty() && name != "openblas") {
      auto y = std::find_if(yardsticks_.begin(), yardsticks_.end(), [&](auto& s) { return s.name == name; });
      if (y == yardsticks_.end()) throw std::runtime_error("matmul has no yardstick '" + name + "'");
      scratch_.assign(size_t(M_) * size_t(N_), 0.0);
      return load_yardstick(*y, entry(), threads, "matmul");
    }
    std::string err = load_openblas(threads);
    if (!err.empty()) throw std::runtime_error(err);
    scratch_.assign(size_t(M_) * size_t(N_), 0.0);
    return {reinterpret_cast<void*>(&openblas_matmul), "openblas", g_openblas_version};
  }

  void wake_reference(void* entry, Stage& s) override {
    // The same product into a scratch output: the pool awake and the inputs in the
    // caches, as in a user's loop over the same buffers (the library is trusted to
    // compute the timed call afresh).
    reinterpret_cast<MatmulFn>(entry)(s.inputs[0].data(), s.inputs[1].data(), scratch_.data(), M_, N_, K_);
  }

  Check verify(const Stage& s, int call, const std::string& mode, uint64_t secret) const override {
    const double* out = s.outputs[0].data();
    const double* want = set(call) + a_size() + b_size();
    const double* magnitude = want + c_size();
    const bool paper = mode == "paper";
    auto point = [&](Check& c, size_t i, size_t j) {
      const size_t at = i * N_ + j;
      const double got = out[at], expect = want[at];
      const double err = std::fabs(got - expect);
      double rel = expect != 0 ? err / std::fabs(expect) : err;
      if (std::isnan(rel)) rel = std::numeric_limits<double>::infinity();
      c.max_rel_error = std::max(c.max_rel_error, rel);
      const double bound = paper ? kPaperTolerance : 4 * K_ * kUnitRoundoff * magnitude[at];
      const double measured = paper ? rel : err;
      if (!(measured <= bound) && c.passed) {  // NaN never passes
        c.passed = false;
        char b[240];
        std::snprintf(b, sizeof b, "C[%zu][%zu] = %.17g, expected %.17g (%s %.3g > %.3g%s)", i, j, got, expect,
                      paper ? "relative error" : "error", measured, bound,
                      paper ? "" : ", the double-precision bound 4 K u (|A||B|)[i][j]");
        c.message = b;
      }
    };
    if (!paper) {  // every element, rows in parts
      return check_in_parts(size_t(M_), kGrain / size_t(N_) + 1, [&](size_t from, size_t to) {
        Check part;
        part.passed = true;
        for (size_t i = from; i < to; ++i)
          for (size_t j = 0; j < size_t(N_); ++j) point(part, i, j);
        return part;
      });
    }
    Check c;
    c.passed = true;
    // The paper's 105 points: four corners, the centre, 100 drawn from the secret.
    point(c, 0, 0);
    point(c, 0, N_ - 1);
    point(c, M_ - 1, 0);
    point(c, M_ - 1, N_ - 1);
    point(c, M_ / 2, N_ / 2);
    Rng rng{secret};
    for (int p = 0; p < 100; ++p) point(c, rng.next() % M_, rng.next() % N_);
    return c;
  }

  std::string locate(const Stage& s, uintptr_t addr, bool write) const override {
    char b[160];
    for (auto [buf, name, cols] : {std::tuple{&s.inputs[0], "A", K_}, std::tuple{&s.inputs[1], "B", N_}}) {
      if (buf->contains(addr)) {
        size_t idx = (addr - reinterpret_cast<uintptr_t>(buf->data())) / sizeof(double);
        std::snprintf(b, sizeof b, "%s the read-only input %s at %s[%zu][%zu]",
                      write ? "wrote to" : "accessed", name, name, idx / cols, idx % cols);
        return b;
      }
      if (buf->in_guard(addr)) {
        auto d = reinterpret_cast<uintptr_t>(buf->data());
        if (addr < d)
          std::snprintf(b, sizeof b, "accessed %zu bytes before the start of %s", size_t(d - addr), name);
        else
          std::snprintf(b, sizeof b, "accessed %zu bytes past the end of %s",
                        size_t(addr - d - buf->bytes()), name);
        return b;
      }
    }
    return {};
  }

  void forget_secrets() override { pool_.forget(); }

 private:
  // A short-lived child draws every call's A and B from a Keystream and computes C and
  // |A|.|B| with OpenBLAS (with all its threads, so the zygote never loads it and stays
  // single-threaded), all into the shared `sets`.
  void make_calls(double* sets, int calls, int threads) {
    run_in_helper([&] { compute_sets(sets, calls, threads); }, "make the inputs and the reference with OpenBLAS");
  }

  void compute_sets(double* sets, int calls, int threads) const {
    std::string e = load_openblas(threads);
    if (!e.empty()) throw std::runtime_error(e);
    std::vector<double> abs_a(a_size()), abs_b(b_size());
    {
      Keystream key = seed_ < 0 ? Keystream::random() : Keystream::seeded(static_cast<uint64_t>(seed_));
      for (int c = 0; c < calls; ++c) {
        double* a = sets + size_t(c) * set_size();
        key.fill_signed_unit(static_cast<uint32_t>(c), 0, a, a_size());
        key.fill_signed_unit(static_cast<uint32_t>(c), 1, a + a_size(), b_size());
      }
    }
    for (int c = 0; c < calls; ++c) {
      double* a = sets + size_t(c) * set_size();
      double* b = a + a_size();
      double* result = b + b_size();
      openblas_matmul(a, b, result, M_, N_, K_);
      for (size_t i = 0; i < a_size(); ++i) abs_a[i] = std::fabs(a[i]);
      for (size_t i = 0; i < b_size(); ++i) abs_b[i] = std::fabs(b[i]);
      openblas_matmul(abs_a.data(), abs_b.data(), result + c_size(), M_, N_, K_);
    }
  }

  int M_, N_, K_;
  int64_t seed_;
  bool nan_init_;
  SecretBuffer pool_;  // per call: A, B, reference C, |A|.|B|
  int calls_ = 0;
  std::vector<double> scratch_;  // the reference child's untimed output
  std::vector<YardstickSource> yardsticks_;  // besides OpenBLAS (problem.yardsticks)
};

}  // namespace

std::unique_ptr<Task> make_matmul(const nlohmann::json& p) {
  if (!p.is_object() && !p.is_null()) throw std::invalid_argument("problem must be a table");
  auto get_int = [&](const char* k, int64_t dflt, int64_t lo, int64_t hi) -> int64_t {
    if (p.is_null() || !p.contains(k)) return dflt;
    const auto& v = p[k];
    if (!v.is_number_integer()) throw std::invalid_argument(std::string("problem.") + k + " must be an integer");
    int64_t x = v.get<int64_t>();
    if (x < lo || x > hi)
      throw std::invalid_argument(std::string("problem.") + k + " must be between " + std::to_string(lo) +
                                  " and " + std::to_string(hi) + ", got " + std::to_string(x));
    return x;
  };
  std::string kind = "matmul", c_init = "nan";
  if (p.is_object()) {
    for (auto it = p.begin(); it != p.end(); ++it)
      if (it.key() != "kind" && it.key() != "M" && it.key() != "N" && it.key() != "K" &&
          it.key() != "seed" && it.key() != "c_init" && it.key() != "yardsticks")
        throw std::invalid_argument("problem: unknown field '" + it.key() +
                                    "' (expected kind, M, N, K, seed, c_init, yardsticks)");
    if (p.contains("kind")) {
      if (!p["kind"].is_string()) throw std::invalid_argument("problem.kind must be a string");
      kind = p["kind"].get<std::string>();
    }
    if (p.contains("c_init")) {
      if (!p["c_init"].is_string()) throw std::invalid_argument("problem.c_init must be \"zero\" or \"nan\"");
      c_init = p["c_init"].get<std::string>();
    }
  }
  if (kind != "matmul") throw std::invalid_argument("problem.kind: unknown task '" + kind + "' (known: matmul)");
  if (c_init != "zero" && c_init != "nan")
    throw std::invalid_argument("problem.c_init must be \"zero\" or \"nan\", got \"" + c_init + "\"");
  const int64_t max_dim = 16384;
  int M = static_cast<int>(get_int("M", 256, 1, max_dim));
  int N = static_cast<int>(get_int("N", 256, 1, max_dim));
  int K = static_cast<int>(get_int("K", 256, 1, max_dim));
  int64_t seed = get_int("seed", -1, 0, std::numeric_limits<int64_t>::max());
  std::vector<YardstickSource> yardsticks;
  if (p.is_object() && p.contains("yardsticks")) yardsticks = yardsticks_from_json(p["yardsticks"], "problem.yardsticks");
  return std::make_unique<Matmul>(M, N, K, seed, c_init == "nan", std::move(yardsticks));
}

}  // namespace bench
