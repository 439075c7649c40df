// The CPU side of a CUDA kernel's judgement, which needs no GPU: a run's inputs drawn (the
// evaluation process, every call), each earlier call's checked values kept, and every call
// checked again in the engine (its inputs drawn again, a reference, the comparison), for a
// launch of Experiment 1's CUDA task (softmax_rows at 4096 x 1024: one input and one output
// of 4 Mi floats, 1 warm-up and 10 timed calls). The reference here is the identity, so
// what is timed is the harness's own work, not libtorch's. Each phase runs on one thread,
// then on the threads the judge uses (the evaluation process: the cores less one; the
// engine: every core), in the same run; printed in ms a kernel, with the ratio; the check
// with the engine's allocator settings, the rest with the evaluation process's. Then the
// run's record on its way back (the last call's inputs and outputs whole, the kept values)
// through one hop, as plain CBOR against wire::pack's message, taking turns.
//   build/perf/bench/cuda_calls_bench [values=4194304] [calls=11] [repeats=3]
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/machine.hpp"
#include "cuda/calls.hpp"
#include "cuda/cuda.hpp"
#include "task/between_calls.hpp"
#include "task/keystream.hpp"
#include "wire/blobs.hpp"

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

struct Phases {
  double draw = 0, keep = 0, check = 0;
};

// The evaluation process's part of one kernel's judgement, less the GPU: every call's inputs
// drawn, then the values the check keeps of each call before the last (a right kernel of
// the identity: each call's output is its input). The record the engine checks goes to `rec`.
Phases draw_and_keep(const cuda::Launch& l, nlohmann::json& rec) {
  const int total = l.warmup + l.calls;
  const bench::Keystream keys = bench::Keystream::random();
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::vector<float>> inputs;
  for (int call = 0; call < total; ++call) inputs.push_back(cuda::draw_input(keys, l.args[0], call, 0));
  const double draw = ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  nlohmann::json kept = nlohmann::json::array();
  for (int call = 0; call + 1 < total; ++call) {
    const auto& x = inputs[static_cast<size_t>(call)];
    kept.push_back(cuda::checked_values(keys, l, call, std::string(reinterpret_cast<const char*>(x.data()), x.size() * 4)));
  }
  const double keep = ms_since(t0);
  rec = {{"call_outputs", std::move(kept)}, {"input_key", keys.hex()}};
  return {draw, keep, 1e300};
}

// The engine's part: every call before the last checked again (its inputs drawn again, the
// reference, the kept values compared).
double check(const cuda::Launch& l, const nlohmann::json& rec) {
  const auto t0 = std::chrono::steady_clock::now();
  const cuda::CallsCheck c = cuda::check_calls(rec, l, [](const auto& in) { return in; }, 1e-6, 0);
  const double ms = ms_since(t0);
  if (!c.ok) {
    std::fprintf(stderr, "cuda_calls_bench: the identity missed its own inputs: %s\n", c.log.c_str());
    std::exit(1);
  }
  return ms;
}

void keep_least(Phases& best, const Phases& p) {
  best = {std::min(best.draw, p.draw), std::min(best.keep, p.keep), std::min(best.check, p.check)};
}

// A record of Experiment 1's size through one hop (encoded, then decoded): ms as plain CBOR
// and as a packed message.
struct Hop {
  double cbor = 0, packed = 0;
};

Hop one_hop(const cuda::Launch& l) {
  const size_t values = cuda::output_values(l);
  std::vector<float> x(values, 0.25f);
  nlohmann::json kept = nlohmann::json::array();
  const int earlier = l.warmup + l.calls - 1;
  for (int call = 0; call < earlier; ++call)
    kept.push_back(nlohmann::json::array({cuda::float_blob(x.data(), cuda::checked_per_call(l))}));
  const nlohmann::json rec = {{"status", "ok"},
                              {"inputs", nlohmann::json::array({cuda::float_blob(x.data(), values)})},
                              {"outputs", nlohmann::json::array({cuda::float_blob(x.data(), values)})},
                              {"call_outputs", std::move(kept)}};
  auto t0 = std::chrono::steady_clock::now();
  const nlohmann::json via_cbor = nlohmann::json::from_cbor(nlohmann::json::to_cbor(rec));
  const double cbor = ms_since(t0);
  t0 = std::chrono::steady_clock::now();
  const nlohmann::json via_pack = wire::unpack(wire::pack(rec));
  const double packed = ms_since(t0);
  if (via_cbor != rec || via_pack != rec) {
    std::fprintf(stderr, "cuda_calls_bench: a record changed on its way\n");
    std::exit(1);
  }
  return {cbor, packed};
}

}  // namespace

int main(int argc, char** argv) {
  const size_t values = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : size_t{1} << 22;
  const int calls = argc > 2 ? std::atoi(argv[2]) : 11;
  const int repeats = argc > 3 ? std::atoi(argv[3]) : 3;
  if (values == 0 || calls < 2 || repeats < 1) {
    std::fprintf(stderr, "usage: cuda_calls_bench [values > 0] [calls >= 2] [repeats >= 1]\n");
    return 2;
  }
  const cuda::Launch l = cuda::parse_launch(
      {{"entry", "k"}, {"grid", {1}}, {"block", {1}},
       {"args", {{{"input", "f32"}, {"count", values}}, {{"output", "f32"}, {"count", values}}}},
       {"warmup", 1}, {"calls", calls - 1}});
  const int cores = bench::machine().cores;
  // the evaluation process's threads for the draw and the kept values, the engine's for the check
  const int evaluation = std::max(1, cores - 1), engine = cores;
  std::printf("%zu floats in, %zu out, %d calls; %d cores (evaluation process %d threads, engine %d); least of %d "
              "alternate runs, ms a kernel\n",
              values, values, calls, cores, evaluation, engine, repeats);
  std::printf("%-34s %10s %10s %8s\n", "phase", "1 thread", "parallel", "ratio");
  Phases one{1e300, 1e300, 1e300}, many = one;
  nlohmann::json rec;
  for (int r = 0; r < repeats; ++r) {  // with glibc's defaults, as the evaluation process runs
    bench::set_between_call_workers(1);
    keep_least(one, draw_and_keep(l, rec));
    bench::set_between_call_workers(evaluation);
    keep_least(many, draw_and_keep(l, rec));
  }
  Hop hop{1e300, 1e300};  // with glibc's defaults too
  for (int r = 0; r < repeats; ++r) {
    const Hop h = one_hop(l);
    hop = {std::min(hop.cbor, h.cbor), std::min(hop.packed, h.packed)};
  }
  // The engine's process keeps freed memory in its heap (engine/host/main.cpp,
  // keep_freed_memory); the evaluation process does not (what a check freed there must not
  // stay mapped in the kernels' processes it forks). The check is timed as the engine runs it.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  for (int r = 0; r < repeats; ++r) {
    bench::set_between_call_workers(1);
    one.check = std::min(one.check, check(l, rec));
    bench::set_between_call_workers(engine);
    many.check = std::min(many.check, check(l, rec));
  }
  auto row = [](const char* name, double a, double b) { std::printf("%-34s %10.1f %10.1f %7.2fx\n", name, a, b, a / b); };
  row("inputs drawn (evaluation process)", one.draw, many.draw);
  row("checked values kept (evaluation)", one.keep, many.keep);
  row("calls checked again (engine)", one.check, many.check);
  row("all three", one.draw + one.keep + one.check, many.draw + many.keep + many.check);
  std::printf("\n%-34s %10s %10s %8s\n", "a record's hop (encode, decode)", "CBOR", "packed", "ratio");
  row("the last call whole, values kept", hop.cbor, hop.packed);
}
