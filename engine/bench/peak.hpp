// The machine's measured limits, the roofline reports divide by: the FP64 peak (for
// compute-bound tasks) and the memory bandwidth (for memory-bound ones).
//
// machine()'s nominal peak multiplies a clock by an assumed FMA pipe count: cores boost
// past the nominal clock, and some CPUs (AMD Zen 4) issue 512-bit FMAs at half the rate
// the formula assumes, so kernels read above it or far below it. This one is measured: an
// FMA-throughput loop at the widest FP64 vector ISA the target allows (machine().simd),
// on every CPU this process may run on at once, each thread pinned to its CPU. Each
// thread's rate is its FLOPs over its own CPU time, so a CPU lent to another process for a
// while (a busy test machine, a VM's steal) lowers no thread's rate; the peak is the best
// sum over a few rounds. Measured once per machine and cached with the date.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace bench {

struct MeasuredPeak {
  double gflops = 0;          // sum over the CPUs of their FP64 FLOPs per CPU-second
  double per_cpu_gflops = 0;  // the slowest CPU's rate in the best round
  int cpus = 0;               // CPUs measured at once (machine().cores)
  std::string isa;            // the loop's vectors: "avx512", "avx2", "avx", "sse2"
  bool fma = false;           // fused multiply-add (else a multiply and an add)
  std::string date;           // when it was measured, UTC, YYYY-MM-DD
  std::string method;         // the method in words, for reports
  std::string cache_file;     // where it is cached; "" when there is no cache
  bool from_cache = false;    // read from cache_file rather than measured now
};

// Measures now (about 0.3 s of every CPU) and nothing else.
MeasuredPeak measure_peak();

// The peak cached in `dir` for this machine (CPU model, CPUs, vector ISA and target),
// measured and written there first when missing or unreadable. `dir` "" caches nothing.
MeasuredPeak cached_peak(const std::string& dir);

// cached_peak() in the engine's cache directory: ENGINE_CACHE_DIR, else
// $XDG_CACHE_HOME/engine, else ~/.cache/engine. Once per process.
const MeasuredPeak& measured_peak();

// The memory bandwidth: a STREAM-like triad (a = b + s c) over arrays four times the
// last-level cache (64 to 256 MiB each), on every CPU this process may run on, each thread pinned and its slice
// first touched by itself; bytes counted as STREAM does (24 per element, no
// write-allocate), over the slowest thread's wall time; the best of a few rounds.
struct MeasuredBandwidth {
  double gbps = 0;
  int cpus = 0;
  std::string date, method, cache_file;
  bool from_cache = false;
};
MeasuredBandwidth measure_bandwidth();
MeasuredBandwidth cached_bandwidth(const std::string& dir);  // as cached_peak
const MeasuredBandwidth& measured_bandwidth();               // as measured_peak

// The machine record every consumer sees (bench.machine(), a benchmark worker's hello):
// machine()'s fields with the nominal peak, the measured one (measured_peak_gflops, _date,
// _method) and the measured bandwidth (measured_bandwidth_gbps, _date, _method), measured
// on first use.
nlohmann::json machine_record();

}  // namespace bench
