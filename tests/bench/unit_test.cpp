// The pieces of the evaluation that need no sandbox: the allow-list, the ELF reader, the
// gcc back end on its own, option checks, target detection, the back-end registry.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "bench/bench.hpp"
#include "compile/compiler.hpp"
#include "cuda/calls.hpp"
#include "cuda/cuda.hpp"
#include "compile/elf_reader.hpp"
#include "bench/machine.hpp"
#include "bench/peak.hpp"
#include "evaluator/verdict.hpp"
#include "task/between_calls.hpp"
#include "task/keystream.hpp"
#include "task/rate_bound.hpp"
#include "task/timing_stats.hpp"
#include "wire/blobs.hpp"
#include "support.hpp"
#include "test_backends.hpp"

using namespace bench;

TEST_CASE("the allow-list admits libm OpenMP allocation and memory functions only") {
  for (const char* ok : {"sqrt", "expf", "fmal", "lround", "lroundf", "GOMP_parallel", "GOMP_barrier",
                         "omp_get_thread_num", "malloc", "free", "posix_memalign", "aligned_alloc", "memcpy",
                         "memset", "memmove", "abs", "labs", "llabs", "_ZGVdN4v_exp"})
    CHECK(symbol_allowed(ok));
  for (const char* no : {"cblas_dgemm", "dgemm_", "system", "fopen", "printf", "fprintf", "socket", "fork",
                         "exit", "abort", "dlopen", "syscall", "pthread_create", "", "sqrtx", "omp_", "GOMP_",
                         "_ZGV"})
    CHECK_FALSE(symbol_allowed(no));
}

TEST_CASE("the allowed libraries are described from the list itself") {
  const std::string& text = allowed_libraries_text();
  CHECK(text.rfind("libm, ", 0) == 0);
  CHECK_THAT(text, Catch::Contains("malloc/calloc/realloc"));
  CHECK_THAT(text, Catch::Contains("memset/memcpy/memmove"));
  CHECK_THAT(text, Catch::Contains("the OpenMP runtime (omp_*, GOMP_*)"));
  CHECK_THAT(text, !Catch::Contains("__stack_chk_fail"));  // emitted by the compiler, not written
  // Every name the description shows is allowed.
  for (const auto& lib : allowed_libraries())
    for (const auto& s : lib.symbols) {
      INFO(s);
      CHECK(symbol_allowed(s));
      if (lib.shown && lib.name.empty()) CHECK_THAT(text, Catch::Contains(s));
    }
  CHECK(library_violation_message("printf") ==
        "call to 'printf', which is outside the allowed libraries: " + text);
}

TEST_CASE("remarks keep each loop's remark once, vectorised loops first, within the bound") {
  std::string path = (std::filesystem::temp_directory_path() / "engine-remarks-test.txt").string();
  {
    std::ofstream f(path);
    f << "kernel.c:9:7: missed: couldn't vectorize loop\n"
      << "kernel.c:9:7: missed: couldn't vectorize loop\n"  // once per vector size tried
      << "kernel.c:5:3: note: some detail\n"
      << "kernel.c:6:21: optimized: loop vectorized using 64 byte vectors\n";
  }
  CHECK(read_remarks(path) ==
        "kernel.c:6:21: optimized: loop vectorized using 64 byte vectors\n"
        "kernel.c:9:7: missed: couldn't vectorize loop\n");
  std::string cut = read_remarks(path, 70);
  CHECK(cut == "kernel.c:6:21: optimized: loop vectorized using 64 byte vectors\n... (1 more)\n");
  std::filesystem::remove(path);
  CHECK(read_remarks(path).empty());  // no file: no remarks
  CHECK(remarks_flag("r.txt") == "-fopt-info-vec-optimized-missed=r.txt");
}

TEST_CASE("compile statuses have their wire names") {
  CHECK(std::string(to_string(CompileStatus::ok)) == "ok");
  CHECK(std::string(to_string(CompileStatus::compile_error)) == "compile_error");
  CHECK(std::string(to_string(CompileStatus::library_violation)) == "library_violation");
  CHECK(std::string(to_string(CompileStatus::unsupported)) == "unsupported");
}

TEST_CASE("the gcc back end compiles and loads a kernel and lists its references") {
  CompileOptions o;
  o.march = resolve_march("native");
  auto k = find_backend("gcc")->compile(
      "#include <math.h>\n#include <stdlib.h>\n"
      "double *keep;\n"
      "void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {\n"
      "  keep = malloc(8); keep[0] = sqrt(A[0]); C[0] = keep[0]; free(keep);\n}\n",
      o);
  INFO(k.diagnostics);
  REQUIRE(k.status == CompileStatus::ok);
  CHECK(k.backend == "gcc");
  CHECK(k.entry != nullptr);
  CHECK(k.compile_ms > 0);
  CHECK(std::find(k.external_symbols.begin(), k.external_symbols.end(), "malloc") != k.external_symbols.end());
  double A[1] = {4}, B[1] = {0}, C[1] = {0};
  reinterpret_cast<void (*)(double*, double*, double*, int, int, int)>(k.entry)(A, B, C, 1, 1, 1);
  CHECK(C[0] == 2.0);
}

TEST_CASE("the gcc back end refuses BLAS before loading and reports syntax errors by line") {
  auto blas = find_backend("gcc")->compile(bench_test::read_file(ENGINE_TEST_KERNELS "/k12_calls_blas.c"), {});
  CHECK(blas.status == CompileStatus::library_violation);
  CHECK(blas.entry == nullptr);
  CHECK_THAT(blas.diagnostics, Catch::Contains("cblas_dgemm"));
  auto syntax = find_backend("gcc")->compile(bench_test::read_file(ENGINE_TEST_KERNELS "/k08_syntax_error.c"), {});
  CHECK(syntax.status == CompileStatus::compile_error);
  CHECK_THAT(syntax.diagnostics, Catch::Contains("kernel.c:5:"));
  auto bad_opt = find_backend("gcc")->compile("void matmul_optimized(){}", CompileOptions{"O9"});
  CHECK(bad_opt.status == CompileStatus::compile_error);
  CHECK_THAT(bad_opt.diagnostics, Catch::Contains("O9"));
}

TEST_CASE("the ELF reader sees a constructor without loading the object") {
  auto k = find_backend("gcc")->compile(bench_test::read_file(BENCH_HOSTILE_DIR "/constructor.c"), {});
  // Loading it would spin forever in the constructor: the test finishing shows it was not.
  CHECK(k.status == CompileStatus::library_violation);
  CHECK_THAT(k.diagnostics, Catch::Contains("constructor"));
  CHECK_THROWS_WITH(read_elf_imports(ENGINE_TEST_KERNELS "/k01_naive_ijk.c"), Catch::Contains("not a valid"));
  CHECK_THROWS_WITH(read_elf_imports("/nonexistent.so"), Catch::Contains("cannot open"));
}

TEST_CASE("march resolves to explicit flags") {
  auto host = resolve_march("");
  REQUIRE(!host.empty());
  CHECK(host[0].rfind("-march=", 0) == 0);
  CHECK(host[0] != "-march=native");
  CHECK(resolve_march("native") == host);
  CHECK(resolve_march("skylake-avx512") == std::vector<std::string>{"-march=skylake-avx512"});
  CHECK(resolve_march("-march=x86-64-v3 -mfma") == std::vector<std::string>{"-march=x86-64-v3", "-mfma"});
  CHECK_THROWS_WITH(resolve_march("-O3"), Catch::Contains("not a target flag"));
  CHECK_THROWS_WITH(resolve_march("znver3; rm -rf /"), Catch::Contains("not a CPU name"));
  CHECK_THROWS_WITH(resolve_march("-march=native"), Catch::Contains("native"));
}

TEST_CASE("the machine reports cores ISA and a peak with its formula") {
  const auto& m = machine();
  CHECK(m.cores >= 1);
  CHECK(!m.cpu.empty());
  CHECK(m.peak_gflops > 0);
  CHECK_THAT(m.peak_formula, Catch::Contains("GFLOPS"));
  CHECK_THAT(m.peak_formula, Catch::Contains(std::to_string(m.cores) + " cores"));
  // Three of the widest vectors a cycle per core: 192 bytes with AVX-512, 96 with AVX2.
  CHECK(m.peak_gbps == Approx(m.cores * m.ghz * 24 * m.vector_doubles));
  CHECK_THAT(m.peak_gbps_formula, Catch::Contains("GB/s"));
}

TEST_CASE("a CUDA run's buffers travel as bytes of floats, NaN and all") {
  const std::vector<float> v{1.5f, -0.25f, std::nanf(""), 3e38f};
  const nlohmann::json blob = cuda::float_blob(v.data(), v.size());
  CHECK(blob.is_binary());
  const std::vector<float> back = cuda::floats_of(nlohmann::json::from_cbor(nlohmann::json::to_cbor(blob)));
  REQUIRE(back.size() == 4);
  CHECK(back[0] == 1.5f);
  CHECK(back[1] == -0.25f);
  CHECK(std::isnan(back[2]));
  CHECK(back[3] == 3e38f);
  CHECK(cuda::floats_of(nlohmann::json::array({1, 2.5})) == std::vector<float>{1.0f, 2.5f});
  CHECK_THROWS_WITH(cuda::floats_of(nlohmann::json::binary({1, 2, 3})), Catch::Contains("3 bytes"));
  CHECK_THROWS_WITH(cuda::floats_of(nlohmann::json::array({"x"})), Catch::Contains("not a number"));
  nlohmann::json list = nlohmann::json::array({blob});
  cuda::blobs_to_numbers(list);  // what a script sees
  REQUIRE(list[0].is_array());
  CHECK(list[0][1].get<double>() == -0.25);
  CHECK(std::isnan(list[0][2].get<double>()));
}

TEST_CASE("a packed message carries its large byte strings beside its CBOR, and a malformed one is named") {
  using nlohmann::json;
  std::vector<float> big(70000);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<float>(i) * 0.5f;
  const std::string not_utf8("\xff\xfe source", 9);
  json message = {{"status", "ok"},
                  {"source", not_utf8},
                  {"outputs", json::array({cuda::float_blob(big.data(), big.size()), cuda::float_blob(big.data(), 3)})},
                  {"call_outputs", json::array({json::array({cuda::float_blob(big.data() + 1, 40000)})})}};
  const json before = message;
  const std::string packed = wire::pack(message);
  // the two large strings (280,000 and 160,000 bytes) follow the CBOR; the small one stays in it
  CHECK(packed.size() > 440000);
  CHECK(packed.size() < 441000);
  const json back = wire::unpack(packed);
  CHECK(back == before);
  CHECK(cuda::floats_of(back["outputs"][0])[69999] == 34999.5f);
  CHECK(back["source"].get<std::string>() == not_utf8);

  auto set_u64 = [](std::string s, size_t at, uint64_t v) {
    std::memcpy(s.data() + at, &v, sizeof v);
    return s;
  };
  auto u64_at = [](const std::string& s, size_t at) {
    uint64_t v;
    std::memcpy(&v, s.data() + at, sizeof v);
    return v;
  };
  const uint64_t cbor_len = u64_at(packed, 0);
  const size_t count_at = 8 + cbor_len;
  CHECK_THROWS_WITH(wire::unpack(packed.substr(0, packed.size() - 1)), Catch::Contains("ends inside a lifted string"));
  CHECK_THROWS_WITH(wire::unpack(packed + "x"), Catch::Contains("1 bytes past its last lifted string"));
  CHECK_THROWS_WITH(wire::unpack(packed.substr(0, 5)), Catch::Contains("ends before its CBOR's length"));
  CHECK_THROWS_WITH(wire::unpack(set_u64(packed, 0, uint64_t{1} << 40)), Catch::Contains("ends inside its CBOR"));
  CHECK_THROWS_WITH(wire::unpack(set_u64(packed, count_at, uint64_t{1} << 40)), Catch::Contains("lifted strings"));
  CHECK_THROWS_WITH(wire::unpack(set_u64(packed, count_at + 8, uint64_t{1} << 62)), Catch::Contains("ends inside a lifted string"));
  // a third lifted string that no tag names
  std::string extra = set_u64(packed, count_at, 3);
  extra.insert(count_at + 8 + 16, std::string("\x01\0\0\0\0\0\0\0", 8));
  extra += "z";
  CHECK_THROWS_WITH(wire::unpack(extra), Catch::Contains("lifted string 2 is named by none"));
  // a tag that names no lifted string, or one named twice
  json forged = {{"a", json::binary({}, 0x656e67696e650005)}};
  std::string f = wire::pack(forged);
  CHECK_THROWS_WITH(wire::unpack(f), Catch::Contains("names none of its 0 lifted strings"));
  json twice = {{"a", json::binary(json::binary_t::container_type(70000, 1))}};
  std::string t = wire::pack(twice);
  json two = {{"a", json::binary({}, 0x656e67696e650000)}, {"b", json::binary({}, 0x656e67696e650000)}};
  const auto two_cbor = json::to_cbor(two);
  std::string t2 = set_u64(std::string(8, '\0'), 0, two_cbor.size()) + std::string(two_cbor.begin(), two_cbor.end()) +
                   t.substr(8 + u64_at(t, 0));
  CHECK_THROWS_WITH(wire::unpack(t2), Catch::Contains("names lifted string 0 twice"));
  CHECK_THROWS(wire::unpack(set_u64(std::string(8, '\0'), 0, 1) + "\xff" + std::string(8, '\0')));  // not CBOR
}

namespace {

// vector_add's launch: z = x + y over n floats, `calls` timed after one warm-up.
cuda::Launch add_launch(size_t n, int calls) {
  return cuda::parse_launch({{"entry", "add"}, {"grid", {1}}, {"block", {1}},
                             {"args", {{{"input", "f32"}, {"count", n}}, {{"input", "f32"}, {"count", n}},
                                       {{"output", "f32"}, {"count", n}}, nlohmann::json::object({{"int", n}})}},
                             {"warmup", 1}, {"calls", calls}});
}

// What the evaluation process returns of a CPU stand-in for a kernel run under `keys`:
// `kernel(call, x, y, z)` writes call `call`'s outputs (NaN-filled first, as the harness
// does), each earlier call's checked values kept as the evaluation process keeps them.
template <typename Kernel>
nlohmann::json fake_run(const bench::Keystream& keys, const cuda::Launch& l, Kernel kernel) {
  nlohmann::json kept = nlohmann::json::array();
  const size_t n = l.args[2].count;
  for (int call = 0; call + 1 < l.warmup + l.calls; ++call) {
    const std::vector<float> x = cuda::draw_input(keys, l.args[0], call, 0), y = cuda::draw_input(keys, l.args[1], call, 1);
    std::vector<float> z(n, std::nanf(""));
    kernel(call, x, y, z);
    kept.push_back(cuda::checked_values(keys, l, call, std::string(reinterpret_cast<const char*>(z.data()), n * 4)));
  }
  return {{"call_outputs", kept}, {"input_key", keys.hex()}};
}

cuda::CallsCheck check_add(const nlohmann::json& rec, const cuda::Launch& l) {
  auto reference = [](const std::vector<std::vector<double>>& in) {
    std::vector<double> z(in[0].size());
    for (size_t i = 0; i < z.size(); ++i) z[i] = in[0][i] + in[1][i];
    return std::vector<std::vector<double>>{z};
  };
  return cuda::check_calls(rec, l, reference, 1e-6, 0);
}

}  // namespace

TEST_CASE("a key goes back as hex and draws the same values; anything else is refused") {
  const bench::Keystream k = bench::Keystream::random();
  const std::string hex = k.hex();
  CHECK(hex.size() == 64);
  const bench::Keystream again = bench::Keystream::from_hex(hex);
  CHECK(again.hex() == hex);
  CHECK(again.word(3, 1, 17) == k.word(3, 1, 17));
  CHECK(bench::Keystream::seeded(5).hex() != bench::Keystream::seeded(6).hex());
  CHECK_THROWS_WITH(bench::Keystream::from_hex("abc"), Catch::Contains("64 hex digits"));
  CHECK_THROWS_WITH(bench::Keystream::from_hex(std::string(63, '0') + "G"), Catch::Contains("hex"));
}

TEST_CASE("the keystream's values are ChaCha8's, however many blocks are drawn at once") {
  const bench::Keystream k = bench::Keystream::seeded(1);
  // words of the stream as the first, one-block-at-a-time code gave them
  CHECK(k.word(0, 0, 0) == 0xef72eaf448a8b558ULL);
  CHECK(k.word(3, 2, 77) == 0x17d144454508f3deULL);
  CHECK(k.word(1, 0xFFFFFFFFu, 1000003) == 0x67e00d9dae032862ULL);
  // a fill draws eight blocks at once and the rest one by one: every value is its word's
  for (size_t n : {size_t{1}, size_t{63}, size_t{64}, size_t{65}, size_t{1000}}) {
    for (uint64_t from : {uint64_t{0}, uint64_t{8}, (uint64_t{1} << 32) * 8 - 64}) {  // a counter's carry too
      std::vector<double> v(n);
      k.fill_signed_unit(5, 9, v.data(), n, from);
      size_t same = 0;
      for (size_t i = 0; i < n; ++i)
        same += v[i] == 2 * (static_cast<double>(k.word(5, 9, from + i) >> 11) * 0x1.0p-53) - 1;
      CHECK(same == n);
    }
  }
  // both ways of drawing eight blocks give the same words, where both can run: this
  // machine's (checked above through the fills) and the other
  uint32_t state[16], base[8][16], avx2[8][16];
  for (uint32_t i = 0; i < 16; ++i) state[i] = 0x9e3779b9u * (i + 1);
  state[12] = 0xFFFFFFFCu;  // a carry into the counter's high word in the fifth lane
  bench::detail::chacha8_eight_blocks(state, base, false);
  if (bench::detail::keystream_avx2()) {
    bench::detail::chacha8_eight_blocks(state, avx2, true);
    CHECK(std::memcmp(base, avx2, sizeof base) == 0);
  } else {
    CHECK_FALSE(__builtin_cpu_supports("avx2"));  // this machine draws with the baseline code, checked above
  }
  CHECK(base[0][0] != base[1][0]);
  // a CUDA input's value is floor(2^23 u) / 2^23 of its word's value u, computed in integers
  const size_t m = 100000;
  const cuda::LaunchArg f{cuda::LaunchArg::input, m};
  const std::vector<float> grid = cuda::draw_input(k, f, 4, 0);
  const std::vector<double> wide = cuda::draw_input_doubles(k, f, 4, 0);
  std::vector<uint64_t> w(m);
  k.fill_words(4, 0, w.data(), m);
  size_t same = 0, as_doubles = 0;
  for (size_t i = 0; i < m; ++i) {
    same += grid[i] == static_cast<float>(std::floor(bench::Keystream::signed_unit(w[i]) * 8388608.0) / 8388608.0);
    as_doubles += wide[i] == static_cast<double>(grid[i]);
  }
  CHECK(same == m);
  CHECK(as_doubles == m);
}

TEST_CASE("a CUDA run's inputs are floats on the grid, a bf16 buffer's rounded to the nearest") {
  const bench::Keystream k = bench::Keystream::seeded(7);
  cuda::LaunchArg f{cuda::LaunchArg::input, 1000}, h{cuda::LaunchArg::input, 1000, true};
  const std::vector<float> v = cuda::draw_input(k, f, 2, 0);
  for (float x : v) {
    CHECK((x >= -1 && x < 1));
    CHECK(std::floor(double(x) * 8388608.0) == double(x) * 8388608.0);
  }
  CHECK(cuda::draw_input(k, f, 2, 0) == v);  // the same key, call and buffer: the same values
  CHECK(cuda::draw_input(k, f, 3, 0) != v);
  std::vector<uint16_t> bits;
  const std::vector<float> b = cuda::draw_input(k, h, 2, 0, &bits);
  REQUIRE(bits.size() == 1000);
  for (size_t i = 0; i < b.size(); ++i) {
    uint32_t u;
    std::memcpy(&u, &b[i], 4);
    CHECK(u == uint32_t{bits[i]} << 16);
    CHECK(std::fabs(b[i] - v[i]) <= std::fabs(v[i]) / 256);  // the nearest of 8 significant bits
  }
}

TEST_CASE("a CUDA run's inputs and checked positions are the same however many threads draw them") {
  const bench::Keystream k = bench::Keystream::seeded(11);
  const size_t n = 300001;  // many parts, and a last block cut short
  std::vector<double> whole(n), part(n - 4096);
  k.fill_signed_unit(3, 1, whole.data(), n);
  k.fill_signed_unit(3, 1, part.data(), part.size(), 4096);  // the stream from its 4,096th value
  CHECK(std::equal(part.begin(), part.end(), whole.begin() + 4096));
  CHECK_THROWS_WITH(k.fill_signed_unit(3, 1, part.data(), 8, 4), Catch::Contains("multiple of 8"));
  const cuda::LaunchArg f{cuda::LaunchArg::input, n}, h{cuda::LaunchArg::input, n, true};
  const cuda::Launch big = add_launch(size_t{1} << 21, 5);
  std::vector<std::vector<float>> drawn;
  std::vector<std::vector<uint16_t>> halves;
  std::vector<std::vector<uint64_t>> positions;
  for (int workers : {1, 4, 3}) {
    bench::set_between_call_workers(workers);
    drawn.push_back(cuda::draw_input(k, f, 3, 1));
    halves.emplace_back();
    cuda::draw_input(k, h, 3, 1, &halves.back());
    positions.push_back(cuda::checked_positions(k, big, 2));
  }
  bench::set_between_call_workers(1);
  for (size_t i = 0; i < n; ++i)  // the one-pass definition: 24 bits of each value
    if (drawn[0][i] != static_cast<float>(std::floor(whole[i] * 8388608.0) / 8388608.0)) FAIL("value " << i);
  CHECK(drawn[1] == drawn[0]);
  CHECK(drawn[2] == drawn[0]);
  const std::vector<double> wide = cuda::draw_input_doubles(k, h, 3, 1);  // the rounded bf16 values
  CHECK(std::equal(wide.begin(), wide.end(), cuda::draw_input(k, h, 3, 1).begin()));
  CHECK((halves[1] == halves[0] && halves[2] == halves[0] && halves[0].size() == n));
  CHECK((positions[1] == positions[0] && positions[2] == positions[0] && !positions[0].empty()));

  // A run with misses of several sizes and NaNs, checked on 1 and on 4 threads: the same
  // verdict, counts, worst error and element named, with every value checked and at positions.
  for (const cuda::Launch& l : {add_launch(200000, 4), big}) {
    const nlohmann::json bad = fake_run(k, l, [](int call, const auto& x, const auto& y, auto& z) {
      for (size_t i = 0; i < z.size(); ++i) z[i] = x[i] + y[i];
      if (call != 2) return;
      for (size_t i = 5; i < z.size(); i += 97) z[i] += 1e-3f * static_cast<float>(i % 89);
      for (size_t i = z.size() / 3; i < z.size(); i += 1009) z[i] = std::nanf("");  // some at drawn positions
    });
    std::vector<cuda::CallsCheck> checks;
    for (int workers : {1, 4}) {
      bench::set_between_call_workers(workers);
      checks.push_back(check_add(bad, l));
    }
    bench::set_between_call_workers(1);
    const cuda::CallsCheck &a = checks[0], &b = checks[1];
    CHECK((!a.ok && a.call == 3 && a.wrong > 1 && std::isinf(a.max_error)));
    CHECK(std::tie(a.ok, a.call, a.checked, a.wrong, a.max_error, a.at_output, a.at_element, a.log) ==
          std::tie(b.ok, b.call, b.checked, b.wrong, b.max_error, b.at_output, b.at_element, b.log));
  }
}

TEST_CASE("every call's outputs are kept: all of them while they fit, else positions drawn under the key") {
  const cuda::Launch small = add_launch(1000, 5), big = add_launch(size_t{1} << 21, 5);
  CHECK(cuda::checked_per_call(small) == 1000);
  CHECK(cuda::checked_per_call(big) == cuda::kCheckedValues / 5);
  const bench::Keystream k = bench::Keystream::random();
  CHECK(cuda::checked_positions(k, small, 0).empty());
  const std::vector<uint64_t> p0 = cuda::checked_positions(k, big, 0), p1 = cuda::checked_positions(k, big, 1);
  REQUIRE(p0.size() == cuda::kCheckedValues / 5);
  CHECK(p0 != p1);  // other positions every call
  CHECK(cuda::checked_positions(bench::Keystream::from_hex(k.hex()), big, 0) == p0);
  uint64_t most = 0;
  for (uint64_t p : p0) most = std::max(most, p);
  CHECK(most < (size_t{1} << 21));
  CHECK(most > (size_t{1} << 21) - 1000);  // spread over the whole output
  // the outputs' bytes must be the launch's
  CHECK_THROWS_WITH(cuda::checked_values(k, small, 0, std::string(12, '\0')), Catch::Contains("not 4000"));
  // a bf16 output is widened exactly
  cuda::Launch half = cuda::parse_launch({{"entry", "f"}, {"grid", {1}}, {"block", {1}},
                                          {"args", {{{"output", "bf16"}, {"count", 2}}}}});
  const uint16_t raw[2] = {0x3F80, 0xC000};  // 1 and -2
  const std::vector<float> got = cuda::floats_of(
      cuda::checked_values(k, half, 0, std::string(reinterpret_cast<const char*>(raw), sizeof raw)));
  CHECK(got == std::vector<float>{1.0f, -2.0f});
}

TEST_CASE("hostile: a kernel that works only in the last call misses in the first; its honest twin passes") {
  const cuda::Launch l = add_launch(1000, 5);
  const bench::Keystream k = bench::Keystream::random();
  auto honest = [](int, const std::vector<float>& x, const std::vector<float>& y, std::vector<float>& z) {
    for (size_t i = 0; i < z.size(); ++i) z[i] = x[i] + y[i];
  };
  const cuda::CallsCheck ok = check_add(fake_run(k, l, honest), l);
  CHECK(ok.ok);
  CHECK(ok.checked == 5 * 1000);
  CHECK(ok.log.empty());
  // a call counter: the outputs untouched (NaN) in every call but the last (not returned here)
  auto last_only = [](int, const std::vector<float>&, const std::vector<float>&, std::vector<float>&) {};
  const cuda::CallsCheck bad = check_add(fake_run(k, l, last_only), l);
  CHECK_FALSE(bad.ok);
  CHECK(bad.call == 1);
  CHECK(bad.wrong == 1000);
  CHECK(std::isinf(bad.max_error));
  CHECK_THAT(bad.log, Catch::Contains("call 1 of 6: 1000 of the 1000 output values checked miss"));
  // the run's key, not another: the inputs drawn again must be the run's
  nlohmann::json other = fake_run(k, l, honest);
  other["input_key"] = bench::Keystream::random().hex();
  CHECK_FALSE(check_add(other, l).ok);
  // a record without every earlier call's values is refused
  nlohmann::json short_rec = fake_run(k, l, honest);
  short_rec["call_outputs"].erase(0);
  CHECK_THROWS_WITH(check_add(short_rec, l), Catch::Contains("of 4 calls before the last, not 5"));
}

TEST_CASE("hostile: work skipped in one earlier call at a size checked at drawn positions is found") {
  const cuda::Launch l = add_launch(size_t{1} << 21, 5);  // 5 x 2 Mi values: more than are kept
  const bench::Keystream k = bench::Keystream::random();
  auto honest = [](int, const std::vector<float>& x, const std::vector<float>& y, std::vector<float>& z) {
    for (size_t i = 0; i < z.size(); ++i) z[i] = x[i] + y[i];
  };
  const cuda::CallsCheck ok = check_add(fake_run(k, l, honest), l);
  CHECK(ok.ok);
  CHECK(ok.checked == 5 * (cuda::kCheckedValues / 5));
  // one block of 256 in 64 left unwritten in call 3 alone: 1.6% of one call's work
  auto skips = [](int call, const std::vector<float>& x, const std::vector<float>& y, std::vector<float>& z) {
    for (size_t i = 0; i < z.size(); ++i)
      if (call != 2 || (i / 256) % 64 != 5) z[i] = x[i] + y[i];
  };
  const cuda::CallsCheck bad = check_add(fake_run(k, l, skips), l);
  CHECK_FALSE(bad.ok);
  CHECK(bad.call == 3);
  CHECK(bad.wrong > 1000);  // about 1/64 of the 838860 values kept
}

TEST_CASE("the event clock runs where the driver is, and names why not elsewhere") {
  const nlohmann::json gpu = cuda::probe();
  if (gpu.value("available", false)) {
    cuda::EventClock clock;
    clock.start();
    const cuda::EventClock::Reading r = clock.stop();  // nothing queued: a short span
    CHECK(r.events_ms >= 0);
    CHECK(r.wall_ms + 0.01 >= r.events_ms);  // the wall clock spans the events
  } else {
    CHECK_THROWS_WITH(cuda::EventClock(), gpu.value("reason", std::string("?")));
  }
}

TEST_CASE("the timed calls' median and CoV, one definition for every timing") {
  CHECK(bench::median({}) == 0);
  CHECK(bench::median({3, 1, 2}) == 2);
  CHECK(bench::median({4, 1, 3, 2}) == Approx(2.5));
  CHECK(bench::coefficient_of_variation({5}) == 0);
  CHECK(bench::coefficient_of_variation({2, 2, 2}) == 0);
  // mean 2, sample deviation 1
  CHECK(bench::coefficient_of_variation({1, 2, 3}) == Approx(0.5));
}

TEST_CASE("a rate beyond 4x the machine's peak FLOPs or byte rate is not a measurement") {
  using bench::impossible_rate;
  using bench::PeakRates;
  CHECK(impossible_rate(399, 1e6, PeakRates{100, 0}).empty());  // a peak of 0 bounds nothing
  CHECK(impossible_rate(399, 399, PeakRates{100, 100}).empty());
  CHECK(impossible_rate(401, 10, PeakRates{100, 100}) ==
        "the timings give 401 GFLOPS, more than 4x the machine's peak (100 GFLOPS): not a measurement");
  // A memory-bound task: no FLOPs (transpose), yet a figure can be impossible.
  CHECK_THAT(impossible_rate(0, 401, PeakRates{100, 100}),
             Catch::Contains("GB/s, more than 4x the fastest the machine's cores can move bytes (100 GB/s)"));
  CHECK(impossible_rate(0, 401, PeakRates{100, 0}).empty());
  // the GPU's judge names its own peaks
  const PeakRates gpu{100, 100, "the GPU's single-precision peak", "the GPU's memory bandwidth"};
  CHECK_THAT(impossible_rate(0, 401, gpu), Catch::Contains("more than 4x the GPU's memory bandwidth (100 GB/s)"));
}

TEST_CASE("the measured peak runs the target's widest vectors on every CPU and says how") {
  const auto& m = machine();
  MeasuredPeak p = measure_peak();
  CHECK(p.gflops > 0);
  CHECK(p.cpus == m.cores);
  CHECK(p.isa == m.simd);
  CHECK(p.per_cpu_gflops * p.cpus <= p.gflops * (1 + 1e-9));
  CHECK_THAT(p.method, Catch::Contains(std::to_string(m.cores) + " CPUs"));
  CHECK(p.date.size() == 10);
  CHECK(p.cache_file.empty());
  CHECK_FALSE(p.from_cache);
}

TEST_CASE("bad options are errors that name the option") {
  auto err = [](EvalOptions o) {
    try {
      check_options(o);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EvalOptions o;
  o.opt = "O4";
  CHECK_THAT(err(o), Catch::Contains("opt must be one of O0, O1, O2, O3, Os, got 'O4'"));
  for (const auto& level : optimisation_levels()) {  // one list for every caller
    o.opt = level;
    CHECK(err(o) == "no error");
  }
  o = {};
  o.verify = "some";
  CHECK_THAT(err(o), Catch::Contains("verify"));
  o = {};
  o.runs = 0;
  CHECK_THAT(err(o), Catch::Contains("runs"));
  o = {};
  o.timeout = -1;
  CHECK_THAT(err(o), Catch::Contains("timeout"));
  o = {};
  o.backend = "clang";
  CHECK_THAT(err(o), Catch::Contains("unknown back end 'clang'"));
  o = {};
  o.problem = {{"M", 0}};
  CHECK_THAT(err(o), Catch::Contains("problem.M"));
  o.problem = {{"L", 3}};
  CHECK_THAT(err(o), Catch::Contains("unknown field 'L'"));
  o.problem = {{"c_init", "ones"}};
  CHECK_THAT(err(o), Catch::Contains("c_init"));
  o.problem = {{"kind", "fft"}};
  CHECK_THAT(err(o), Catch::Contains("unknown task 'fft'"));
  o = {};
  auto r = resolve_options(o);
  CHECK(r["threads"] == machine().cores);
  CHECK(r["problem"]["M"] == 256);
  CHECK(r["problem"]["c_init"] == "nan");
  CHECK(r["backend"] == default_backend());
}

TEST_CASE("a back end that says unsupported falls back to gcc and the result says so") {
  CHECK_THROWS_WITH(register_backend(std::make_unique<bench_test::Unsupported>()), Catch::Contains("already exists"));
  EvalOptions o;
  o.backend = "never";
  auto r = evaluate(bench_test::read_file(ENGINE_TEST_KERNELS "/k01_naive_ijk.c"), o);
  INFO(r.message);
  CHECK(r.status == "ok");
  CHECK(r.backend == "gcc");
  CHECK(r.fallback);
  CHECK_THAT(r.fallback_reason, Catch::Contains("unimplemented"));
  CHECK(r.options["backend"] == "never");
}

TEST_CASE("the sandbox checks references whatever the back end claims") {
  EvalOptions o;
  o.backend = "careless";
  auto r = evaluate(bench_test::read_file(ENGINE_TEST_KERNELS "/k01_naive_ijk.c"), o);
  CHECK(r.status == "library_violation");
  CHECK_THAT(r.message, Catch::Contains("cblas_dgemm"));
  CHECK(r.backend == "careless");
}


TEST_CASE("a record off the evaluation record's declaration is named by its field, and refused as a Result") {
  using nlohmann::json;
  CHECK(check_result_record({{"status", "ok"}, {"gflops", 1.5}, {"times", {0.1, 0.2}}}) == "");
  CHECK(check_result_record({{"status", "ok"}, {"gflop", 1.5}}) == "an undeclared field 'gflop'");
  CHECK(check_result_record({{"status", "ok"}, {"gflops", "fast"}}) ==
        "field 'gflops' is a string where a number is declared");
  CHECK(check_result_record({{"status", 3}}) == "field 'status' is a number where a string is declared");
  CHECK(check_result_record(json::array()) == "the record is an array, not an object");
  CHECK_THROWS_WITH(result_from_record({{"status", "ok"}, {"gflop", 1.5}}),
                    Catch::Contains("the evaluation's record: an undeclared field 'gflop'"));
  // What the record carries, the struct holds: 1e308 stands for an error that is not finite.
  Result r = result_from_record({{"status", "ok"}, {"gflops", 2.0}, {"max_rel_error", 1e308}, {"same_code_as", 3}});
  CHECK(r.gflops == 2.0);
  CHECK(std::isinf(*r.max_rel_error));
  CHECK(r.same_code_as == size_t(3));
  CHECK(r.times.empty());
}
