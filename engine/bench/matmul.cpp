// The paper's task: row-major C = A x B with A MxK, B KxN, verified against OpenBLAS.
#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <vector>

#include "bench/task.hpp"

namespace bench {

// ---- guarded buffers ------------------------------------------------------------

static size_t page_size() {
  static const size_t p = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return p;
}

GuardedBuffer::GuardedBuffer(size_t bytes, bool shared) : bytes_(bytes) {
  const size_t page = page_size();
  const size_t body = (bytes + 64 + page - 1) / page * page;  // room for the alignment slack
  map_len_ = body + 2 * page;
  base_ = mmap(nullptr, map_len_, PROT_NONE, (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS, -1, 0);
  if (base_ == MAP_FAILED) {
    base_ = nullptr;
    throw std::runtime_error("cannot map " + std::to_string(bytes) + " bytes: " + std::strerror(errno));
  }
  auto* body_start = static_cast<char*>(base_) + page;
  if (mprotect(body_start, body, PROT_READ | PROT_WRITE) != 0)
    throw std::runtime_error(std::string("mprotect: ") + std::strerror(errno));
  uintptr_t end = reinterpret_cast<uintptr_t>(body_start + body);
  data_ = reinterpret_cast<double*>((end - bytes) & ~uintptr_t(63));
}

GuardedBuffer::~GuardedBuffer() { unmap(); }

GuardedBuffer& GuardedBuffer::operator=(GuardedBuffer&& o) noexcept {
  if (this != &o) {
    unmap();
    std::swap(base_, o.base_);
    std::swap(map_len_, o.map_len_);
    std::swap(data_, o.data_);
    std::swap(bytes_, o.bytes_);
  }
  return *this;
}

void GuardedBuffer::protect_read_only() {
  const size_t page = page_size();
  mprotect(static_cast<char*>(base_) + page, map_len_ - 2 * page, PROT_READ);
}

void GuardedBuffer::unmap() {
  if (base_) munmap(base_, map_len_);
  base_ = nullptr;
  data_ = nullptr;
  map_len_ = bytes_ = 0;
}

bool GuardedBuffer::contains(uintptr_t a) const {
  auto d = reinterpret_cast<uintptr_t>(data_);
  return data_ && a >= d && a < d + bytes_;
}

bool GuardedBuffer::in_guard(uintptr_t a) const {
  auto b = reinterpret_cast<uintptr_t>(base_);
  return base_ && a >= b && a < b + map_len_ && !contains(a);
}

// ---- matmul -------------------------------------------------------------------

namespace {

// splitmix64: the same inputs for a seed on every machine and build.
struct Rng {
  uint64_t s;
  uint64_t next() {
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

using MatmulFn = void (*)(double*, double*, double*, int, int, int);
using DgemmFn = void (*)(int, int, int, int, int, int, double, const double*, int, const double*,
                         int, double, double*, int);
constexpr int kRowMajor = 101, kNoTrans = 111;

DgemmFn g_dgemm = nullptr;
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
  return {};
}

class Matmul final : public Task {
 public:
  Matmul(int M, int N, int K, uint64_t seed, bool nan_init)
      : M_(M), N_(N), K_(K), seed_(seed), nan_init_(nan_init) {}

  std::string describe() const override {
    char b[160];
    std::snprintf(b, sizeof b, "matmul %dx%dx%d seed %llu, C initialised to %s", M_, N_, K_,
                  static_cast<unsigned long long>(seed_), nan_init_ ? "NaN" : "zero");
    return b;
  }
  std::string key() const override {
    return "matmul:" + std::to_string(M_) + "x" + std::to_string(N_) + "x" + std::to_string(K_) +
           ":" + std::to_string(seed_);
  }
  std::string entry() const override { return "matmul_optimized"; }
  double flops() const override { return 2.0 * M_ * N_ * K_; }
  nlohmann::json options() const override {
    return {{"kind", "matmul"}, {"M", M_}, {"N", N_}, {"K", K_}, {"seed", seed_},
            {"c_init", nan_init_ ? "nan" : "zero"}};
  }

  void prepare(int threads) override {
    if (!ref_.empty()) return;
    A_ = GuardedBuffer(sizeof(double) * size_t(M_) * K_, false);
    B_ = GuardedBuffer(sizeof(double) * size_t(K_) * N_, false);
    Rng rng{seed_};
    for (size_t i = 0; i < size_t(M_) * K_; ++i) A_.data()[i] = rng.uniform();
    for (size_t i = 0; i < size_t(K_) * N_; ++i) B_.data()[i] = rng.uniform();
    A_.protect_read_only();
    B_.protect_read_only();
    compute_reference(threads);
  }

  size_t output_bytes() const override { return sizeof(double) * size_t(M_) * N_; }

  void reset_output(double* out) const override {
    const size_t n = size_t(M_) * N_;
    if (!nan_init_) {
      std::memset(out, 0, n * sizeof(double));
      return;
    }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (size_t i = 0; i < n; ++i) out[i] = nan;
  }

  void invoke(void* entry, double* out) const override {
    reinterpret_cast<MatmulFn>(entry)(A_.data(), B_.data(), out, M_, N_, K_);
  }

  void* reference_entry(int threads) override {
    std::string err = load_openblas(threads);
    if (!err.empty()) throw std::runtime_error(err);
    return reinterpret_cast<void*>(&openblas_matmul);
  }

  Check verify(const double* out, const std::string& mode) const override {
    Check c;
    c.passed = true;
    auto point = [&](size_t i, size_t j) {
      const double got = out[i * N_ + j], want = ref_[i * N_ + j];
      double rel = want != 0 ? std::fabs(got - want) / std::fabs(want) : std::fabs(got);
      if (std::isnan(rel)) rel = std::numeric_limits<double>::infinity();
      if (rel > c.max_rel_error) c.max_rel_error = rel;
      if (!(rel <= kTolerance) && c.passed) {
        c.passed = false;
        char b[200];
        std::snprintf(b, sizeof b, "C[%zu][%zu] = %.17g, expected %.17g (relative error %.3g > %g)", i, j,
                      got, want, rel, kTolerance);
        c.message = b;
      }
    };
    if (mode == "full") {
      for (size_t i = 0; i < size_t(M_); ++i)
        for (size_t j = 0; j < size_t(N_); ++j) point(i, j);
      return c;
    }
    // The paper's 105 points: four corners, the centre, 100 random.
    point(0, 0);
    point(0, N_ - 1);
    point(M_ - 1, 0);
    point(M_ - 1, N_ - 1);
    point(M_ / 2, N_ / 2);
    Rng rng{seed_ ^ 0x5eed5eed5eed5eedULL};
    for (int p = 0; p < 100; ++p) point(rng.next() % M_, rng.next() % N_);
    return c;
  }

  std::string locate(uintptr_t addr, bool write) const override {
    char b[160];
    for (auto [buf, name, cols] : {std::tuple{&A_, "A", K_}, std::tuple{&B_, "B", N_}}) {
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

 private:
  static constexpr double kTolerance = 1e-6;

  // OpenBLAS runs in a short-lived child (with all its threads), so the zygote never
  // loads it and stays single-threaded.
  void compute_reference(int threads) {
    GuardedBuffer out(output_bytes(), true);
    auto* err = static_cast<char*>(mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    if (err == MAP_FAILED) throw std::runtime_error("mmap failed");
    err[0] = 0;
    pid_t pid = fork();
    if (pid < 0) {
      munmap(err, 4096);
      throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
      std::string e = load_openblas(threads);
      if (!e.empty()) {
        std::snprintf(err, 4096, "%s", e.c_str());
        _exit(1);
      }
      openblas_matmul(A_.data(), B_.data(), out.data(), M_, N_, K_);
      _exit(0);
    }
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
    }
    std::string e = err;
    munmap(err, 4096);
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      throw std::runtime_error("cannot compute the reference with OpenBLAS: " +
                               (e.empty() ? std::string("the helper process failed") : e));
    ref_.assign(out.data(), out.data() + size_t(M_) * N_);
  }

  int M_, N_, K_;
  uint64_t seed_;
  bool nan_init_;
  GuardedBuffer A_, B_;
  std::vector<double> ref_;
};

}  // namespace

std::unique_ptr<Task> make_task(const nlohmann::json& p) {
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
  std::string kind = "matmul", c_init = "zero";
  if (p.is_object()) {
    for (auto it = p.begin(); it != p.end(); ++it)
      if (it.key() != "kind" && it.key() != "M" && it.key() != "N" && it.key() != "K" &&
          it.key() != "seed" && it.key() != "c_init")
        throw std::invalid_argument("problem: unknown field '" + it.key() +
                                    "' (expected kind, M, N, K, seed, c_init)");
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
  auto seed = static_cast<uint64_t>(get_int("seed", 42, 0, std::numeric_limits<int64_t>::max()));
  return std::make_unique<Matmul>(M, N, K, seed, c_init == "nan");
}

}  // namespace bench
