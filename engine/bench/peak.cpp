#include "bench/peak.hpp"

#include <immintrin.h>
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/machine.hpp"

namespace bench {

namespace {

// Each loop updates independent accumulators, enough to keep two FMA pipes busy through
// a 4-5 cycle latency, and returns their sum so that nothing is optimised away. `n`
// iterations do n * kAcc * lanes * 2 FLOPs. With mul = 1 and add tiny, values stay
// normal numbers however long the loop runs.
constexpr int kAcc512 = 24, kAcc256 = 12, kAcc128 = 12;

__attribute__((target("avx512f"))) double fma512(long n, double mul, double add) {
  __m512d x[kAcc512];
  for (int j = 0; j < kAcc512; ++j) x[j] = _mm512_set1_pd(j);
  const __m512d m = _mm512_set1_pd(mul), a = _mm512_set1_pd(add);
  for (long i = 0; i < n; ++i) {
#pragma GCC unroll 24
    for (int j = 0; j < kAcc512; ++j) x[j] = _mm512_fmadd_pd(x[j], m, a);
  }
  for (int j = 1; j < kAcc512; ++j) x[0] = _mm512_add_pd(x[0], x[j]);
  return _mm512_reduce_add_pd(x[0]);
}

// The two AVX loops' accumulators, started apart and summed at the end; always inlined,
// so each loop's code is as if written out in it, under the loop's own target.
__attribute__((target("avx"), always_inline)) inline void start256(__m256d (&x)[kAcc256]) {
  for (int j = 0; j < kAcc256; ++j) x[j] = _mm256_set1_pd(j);
}

__attribute__((target("avx"), always_inline)) inline double sum256(__m256d (&x)[kAcc256]) {
  for (int j = 1; j < kAcc256; ++j) x[0] = _mm256_add_pd(x[0], x[j]);
  double out[4];
  _mm256_storeu_pd(out, x[0]);
  return out[0] + out[1] + out[2] + out[3];
}

__attribute__((target("avx2,fma"))) double fma256(long n, double mul, double add) {
  __m256d x[kAcc256];
  start256(x);
  const __m256d m = _mm256_set1_pd(mul), a = _mm256_set1_pd(add);
  for (long i = 0; i < n; ++i) {
#pragma GCC unroll 12
    for (int j = 0; j < kAcc256; ++j) x[j] = _mm256_fmadd_pd(x[j], m, a);
  }
  return sum256(x);
}

// Without FMA a multiply and an add are issued separately: two FLOPs per pair.
__attribute__((target("avx"))) double muladd256(long n, double mul, double add) {
  __m256d x[kAcc256];
  start256(x);
  const __m256d m = _mm256_set1_pd(mul), a = _mm256_set1_pd(add);
  for (long i = 0; i < n; ++i) {
#pragma GCC unroll 12
    for (int j = 0; j < kAcc256; ++j) x[j] = _mm256_add_pd(_mm256_mul_pd(x[j], m), a);
  }
  return sum256(x);
}

double muladd128(long n, double mul, double add) {
  __m128d x[kAcc128];
  for (int j = 0; j < kAcc128; ++j) x[j] = _mm_set1_pd(j);
  const __m128d m = _mm_set1_pd(mul), a = _mm_set1_pd(add);
  for (long i = 0; i < n; ++i) {
#pragma GCC unroll 12
    for (int j = 0; j < kAcc128; ++j) x[j] = _mm_add_pd(_mm_mul_pd(x[j], m), a);
  }
  for (int j = 1; j < kAcc128; ++j) x[0] = _mm_add_pd(x[0], x[j]);
  double out[2];
  _mm_storeu_pd(out, x[0]);
  return out[0] + out[1];
}

struct Loop {
  double (*run)(long, double, double);
  double flops_per_iteration;
  std::string isa;
  bool fma;
};

Loop loop_for(const Machine& m) {
  bool fma = std::find(m.isa.begin(), m.isa.end(), "fma") != m.isa.end();
  if (m.simd == "avx512") return {fma512, kAcc512 * 8 * 2.0, "avx512", true};
  if ((m.simd == "avx2" || m.simd == "avx") && fma) return {fma256, kAcc256 * 4 * 2.0, m.simd, true};
  if (m.simd == "avx2" || m.simd == "avx") return {muladd256, kAcc256 * 4 * 2.0, m.simd, false};
  return {muladd128, kAcc128 * 2 * 2.0, "sse2", false};
}

double thread_cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    for (int c = 0; c < CPU_SETSIZE; ++c)
      if (CPU_ISSET(c, &set)) cpus.push_back(c);
  if (cpus.empty()) cpus.push_back(-1);  // unknown: one unpinned thread
  return cpus;
}

std::atomic<double> g_sink{0};  // keeps the loops' results alive

// One round: every CPU runs the loop at once for `cpu_seconds` of its own CPU time.
// Returns each thread's GFLOPS.
std::vector<double> round_rates(const Loop& loop, const std::vector<int>& cpus, double cpu_seconds) {
  volatile double mul = 1.0, add = 1e-12;
  std::vector<double> rates(cpus.size(), 0);
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (size_t t = 0; t < cpus.size(); ++t) {
    threads.emplace_back([&, t] {
      if (cpus[t] >= 0) {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpus[t], &one);
        pthread_setaffinity_np(pthread_self(), sizeof one, &one);  // unpinned if refused
      }
      ready.fetch_add(1);
      while (ready.load() < static_cast<int>(cpus.size())) std::this_thread::yield();
      const long chunk = 20000;
      double flops = 0, sum = 0, start = thread_cpu_seconds(), used = 0;
      do {
        sum += loop.run(chunk, mul, add);
        flops += chunk * loop.flops_per_iteration;
        used = thread_cpu_seconds() - start;
      } while (used < cpu_seconds);
      rates[t] = flops / used * 1e-9;
      g_sink.store(sum, std::memory_order_relaxed);
    });
  }
  for (auto& th : threads) th.join();
  return rates;
}

std::string today_utc() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

// The cache file's name: the machine's identity in characters any file system takes.
std::string cache_name(const Machine& m) {
  std::string key = m.model + "-" + std::to_string(m.cores) + "cpus-" + m.simd + "-" + m.target;
  for (char& c : key)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.')) c = '_';
  return "fp64-peak-" + key + ".json";
}

bool make_dirs(const std::string& dir) {
  for (size_t i = 1; i <= dir.size(); ++i) {
    if (i < dir.size() && dir[i] != '/') continue;
    std::string part = dir.substr(0, i);
    if (mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) return false;
  }
  return true;
}

nlohmann::json to_json(const MeasuredPeak& p, const Machine& m) {
  return {{"gflops", p.gflops}, {"per_cpu_gflops", p.per_cpu_gflops}, {"cpus", p.cpus}, {"isa", p.isa},
          {"fma", p.fma}, {"date", p.date}, {"method", p.method}, {"model", m.model}, {"target", m.target}};
}

// A cached record for this machine, or false when there is none that fits.
bool read_cache(const std::string& path, const Machine& m, MeasuredPeak& out) {
  std::ifstream in(path);
  if (!in) return false;
  try {
    auto j = nlohmann::json::parse(in);
    if (j.at("model").get<std::string>() != m.model || j.at("cpus").get<int>() != m.cores ||
        j.at("isa").get<std::string>() != loop_for(m).isa || j.at("target").get<std::string>() != m.target)
      return false;
    out.gflops = j.at("gflops").get<double>();
    out.per_cpu_gflops = j.at("per_cpu_gflops").get<double>();
    out.cpus = m.cores;
    out.isa = j.at("isa").get<std::string>();
    out.fma = j.at("fma").get<bool>();
    out.date = j.at("date").get<std::string>();
    out.method = j.at("method").get<std::string>();
    return std::isfinite(out.gflops) && out.gflops > 0;
  } catch (const std::exception&) {
    return false;  // unreadable: measured again and rewritten
  }
}


std::string default_cache_dir() {
  if (const char* d = std::getenv("ENGINE_CACHE_DIR"); d && *d) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x && *x) return std::string(x) + "/engine";
  if (const char* h = std::getenv("HOME"); h && *h) return std::string(h) + "/.cache/engine";
  return "";
}

// The triad over one thread's slice, `reps` times; compiled for speed whatever the build.
__attribute__((optimize("O3"))) void triad(double* __restrict a, const double* __restrict b,
                                           const double* __restrict c, size_t n, int reps) {
  for (int r = 0; r < reps; ++r)
    for (size_t i = 0; i < n; ++i) a[i] = b[i] + 3.0 * c[i];
}

double wall_seconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

template <class T, class Measure, class Read, class Write>
T cached(const std::string& dir, const std::string& file, Measure measure, Read read, Write write) {
  T out;
  const std::string path = dir.empty() ? "" : dir + "/" + file;
  if (!path.empty() && read(path, out)) {
    out.cache_file = path;
    out.from_cache = true;
    return out;
  }
  out = measure();
  if (!path.empty() && make_dirs(dir)) {
    write(path, out);
    out.cache_file = path;
  }
  return out;
}

void write_json(const std::string& path, const nlohmann::json& j) {
  std::string tmp = path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp);
    if (!out) return;
    out << j.dump(2) << "\n";
    if (!out) return;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) std::remove(tmp.c_str());
}

}  // namespace

MeasuredBandwidth measure_bandwidth() {
  std::vector<int> cpus = allowed_cpus();
  const size_t threads = cpus.size();
  long l3 = sysconf(_SC_LEVEL3_CACHE_SIZE);
  if (l3 <= 0) l3 = 32L << 20;
  // Four times the last-level cache, within [64, 256] MiB an array (a VM's slice of a big
  // shared L3 reports the whole of it).
  size_t n = std::clamp<size_t>(4 * size_t(l3) / sizeof(double), size_t(8) << 20, size_t(32) << 20);
  n = (n + 8 * threads - 1) / (8 * threads) * (8 * threads);
  const size_t slice = n / threads;
  auto* a = static_cast<double*>(std::aligned_alloc(64, n * sizeof(double)));
  auto* b = static_cast<double*>(std::aligned_alloc(64, n * sizeof(double)));
  auto* c = static_cast<double*>(std::aligned_alloc(64, n * sizeof(double)));
  if (!a || !b || !c) {
    std::free(a), std::free(b), std::free(c);
    throw std::runtime_error("cannot allocate the bandwidth test's arrays");
  }
  constexpr int kRounds = 5, kReps = 2;
  double best = 0;
  for (int round = 0; round <= kRounds; ++round) {  // round 0 touches the pages: not counted
    std::vector<double> seconds(threads, 0);
    std::atomic<size_t> ready{0};
    std::vector<std::thread> pool;
    for (size_t t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        if (cpus[t] >= 0) {
          cpu_set_t one;
          CPU_ZERO(&one);
          CPU_SET(cpus[t], &one);
          pthread_setaffinity_np(pthread_self(), sizeof one, &one);
        }
        double *x = a + t * slice, *y = b + t * slice, *z = c + t * slice;
        if (round == 0)
          for (size_t i = 0; i < slice; ++i) x[i] = 0, y[i] = 1, z[i] = 2;
        ready.fetch_add(1);
        while (ready.load() < threads) std::this_thread::yield();
        double start = wall_seconds();
        triad(x, y, z, slice, kReps);
        seconds[t] = wall_seconds() - start;
      });
    for (auto& th : pool) th.join();
    if (round == 0) continue;
    double slowest = *std::max_element(seconds.begin(), seconds.end());
    if (slowest > 0) best = std::max(best, 24.0 * double(slice * threads) * kReps / slowest * 1e-9);
  }
  g_sink.store(a[n / 2], std::memory_order_relaxed);
  std::free(a), std::free(b), std::free(c);
  MeasuredBandwidth m;
  m.gbps = best;
  m.cpus = static_cast<int>(threads);
  m.date = today_utc();
  std::ostringstream how;
  how << "triad a = b + 3c over 3 arrays of " << (n * sizeof(double) >> 20) << " MiB on " << threads
      << " CPUs at once, 24 bytes per element over the slowest thread's time, best of " << kRounds << " rounds";
  m.method = how.str();
  return m;
}

MeasuredBandwidth cached_bandwidth(const std::string& dir) {
  const Machine& m = machine();
  std::string file = cache_name(m);
  file.replace(0, std::string("fp64-peak").size(), "memory-bandwidth");
  return cached<MeasuredBandwidth>(
      dir, file, measure_bandwidth,
      [&](const std::string& path, MeasuredBandwidth& out) {
        std::ifstream in(path);
        if (!in) return false;
        try {
          auto j = nlohmann::json::parse(in);
          if (j.at("model").get<std::string>() != m.model || j.at("cpus").get<int>() != m.cores) return false;
          out.gbps = j.at("gbps").get<double>();
          out.cpus = m.cores;
          out.date = j.at("date").get<std::string>();
          out.method = j.at("method").get<std::string>();
          return std::isfinite(out.gbps) && out.gbps > 0;
        } catch (const std::exception&) {
          return false;
        }
      },
      [&](const std::string& path, const MeasuredBandwidth& b) {
        write_json(path, {{"gbps", b.gbps}, {"cpus", b.cpus}, {"date", b.date}, {"method", b.method},
                          {"model", m.model}});
      });
}

const MeasuredBandwidth& measured_bandwidth() {
  static std::once_flag once;
  static MeasuredBandwidth b;
  std::call_once(once, [] { b = cached_bandwidth(default_cache_dir()); });
  return b;
}

MeasuredPeak measure_peak() {
  const Machine& m = machine();
  Loop loop = loop_for(m);
  std::vector<int> cpus = allowed_cpus();
  constexpr int kRounds = 5;
  constexpr double kSeconds = 0.05;
  MeasuredPeak best;
  for (int r = 0; r < kRounds; ++r) {
    auto rates = round_rates(loop, cpus, kSeconds);
    double sum = 0;
    for (double x : rates) sum += x;
    if (sum > best.gflops) {
      best.gflops = sum;
      best.per_cpu_gflops = *std::min_element(rates.begin(), rates.end());
    }
  }
  best.cpus = static_cast<int>(cpus.size());
  best.isa = loop.isa;
  best.fma = loop.fma;
  best.date = today_utc();
  std::ostringstream how;
  how << (loop.fma ? "FMA" : "multiply-add") << " throughput loop (" << loop.isa << ") on " << best.cpus
      << " CPUs at once, each thread's FLOPs over its CPU time, best of " << kRounds << " rounds of "
      << kSeconds * 1000 << " ms";
  best.method = how.str();
  return best;
}

MeasuredPeak cached_peak(const std::string& dir) {
  const Machine& m = machine();
  return cached<MeasuredPeak>(
      dir, cache_name(m), measure_peak,
      [&](const std::string& path, MeasuredPeak& out) { return read_cache(path, m, out); },
      [&](const std::string& path, const MeasuredPeak& p) { write_json(path, to_json(p, m)); });
}

const MeasuredPeak& measured_peak() {
  static std::once_flag once;
  static MeasuredPeak p;
  std::call_once(once, [] { p = cached_peak(default_cache_dir()); });
  return p;
}

nlohmann::json machine_record() {
  const Machine& m = machine();
  const MeasuredPeak& p = measured_peak();
  return {{"cores", m.cores},
          {"model", m.model},
          {"isa", m.isa},
          {"simd", m.simd},
          {"cpu", m.cpu},
          {"target", m.target},
          {"march", join_flags(m.march)},
          {"ghz", m.ghz},
          {"vector_doubles", m.vector_doubles},
          {"fma_units", m.fma_units},
          {"peak_gflops", m.peak_gflops},
          {"peak_formula", m.peak_formula},
          {"peak_gbps", m.peak_gbps},
          {"peak_gbps_formula", m.peak_gbps_formula},
          {"measured_peak_gflops", p.gflops},
          {"measured_peak_date", p.date},
          {"measured_peak_method", p.method},
          {"measured_bandwidth_gbps", measured_bandwidth().gbps},
          {"measured_bandwidth_date", measured_bandwidth().date},
          {"measured_bandwidth_method", measured_bandwidth().method}};
}

}  // namespace bench
