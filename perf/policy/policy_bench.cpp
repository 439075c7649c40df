// Parity and speed of the policy against transformers (scripts/device/ drives both).
//
//   policy_bench parity DIR [--device cuda] [--dtype fp32|bf16] [--graphs 0|1]
//     DIR holds a checkpoint and reference.safetensors (scripts/device/make_reference.py):
//     compares logits with transformers' in both dtypes and greedy ids in the chosen one.
//     Prints one JSON line; exits 1 when a check fails.
//   policy_bench decode CONFIG.json [--batch 64] [--samples 1] [--prompt 128] [--tokens 256]
//                [--device cuda] [--dtype bf16] [--bandwidth GBPS] [--graphs 0|1]
//     random weights for CONFIG; decode tokens/s; the bandwidth limit (weight bytes read
//     per step / bandwidth, the bandwidth measured here by a device copy unless given).
//     --fused 0 / --pipelined 0 / --sampler 0 turn off the step's fused elementwise
//     kernels / sampling a step ahead / the one-kernel sampler (cuda_ops.hpp:
//     DecodeKernels), --mma 0 the tensor-core attention kernel, to measure each in the
//     same session, --cpu_attention 0 the CPU decode attention kernel (cpu_attention.hpp); --attention_tiles N has each attention block walk N tiles of 64 keys. Also prints cuBLAS's bf16 GEMM rate on this GPU (the step's gate/up
//     shape and 8192^3), the compute limit the large batches meet.
//     --profile TRACE.json (CUDA builds): afterwards, decode steps 8..19 of another run
//     are traced with Kineto (scripts/device/profile_summary.py summarises the trace).
//   policy_bench attention
//     the fused decode attention kernel against a float64 reference on random inputs
//     (shapes of the parity models and the 14B config, masks, strided cache views), both
//     the tensor-core and the SIMT kernel; then their speed on the 14B config's shapes
//     against the copy bandwidth. Prints one JSON line per case; exits 1 when one is off.
//   policy_bench cpu-decode CONFIG.json [--rows 32] [--span 260]
//     the GEMMs of one CPU decode step (fp32) as the engine runs them, and through oneDNN
//     where libtorch has it, then its attention over `span` keys by libtorch's ops and by the
//     model's own CPU kernel (cpu_attention.hpp): milliseconds, FLOP rates, their ratio.
//   policy_bench kernels
//     the same for the step's fused RoPE + cache write, RMSNorm and SwiGLU kernels; the
//     sampler's frequencies against softmax over 200,000 draws, its log-probabilities.
// One file over 600 lines: one program for every policy benchmark, so that each
// figure in docs/performance.md names one command.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "policy/cpu_attention.hpp"
#include "policy/cuda_ops.hpp"
#include "policy/model.hpp"
#include "policy/policy.hpp"
#include "policy/torch_side.hpp"
#include "policy/safetensors.hpp"
#include "flags.hpp"
#include "profile.hpp"

using namespace policy;
using torch::Tensor;
using Json = nlohmann::json;

using policy_bench::flags;
using policy_bench::get;

static void sync(const torch::Device& d) {
  if (d.is_cuda()) torch::cuda::synchronize();
}

static int parity(const std::string& dir, const std::map<std::string, std::string>& f) {
  LoadOptions lo;
  lo.device = get(f, "device", "cuda");
  lo.dtype = get(f, "dtype", "fp32");
  lo.cuda_graphs = get(f, "graphs", "1") == "1";
  SafetensorsFile ref(std::filesystem::path(dir) / "reference.safetensors");
  auto tensor = [&](const std::string& name) {
    auto& v = ref.tensors().at(name);
    auto dt = v.dtype == DType::I64 ? torch::kInt64 : torch::kFloat32;
    return torch::from_blob(const_cast<void*>(v.data), v.shape, dt).clone();
  };
  auto t0 = std::chrono::steady_clock::now();
  auto pol = Policy::load(dir, lo);
  sync(parse_device(lo.device));
  double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  auto& model = policy::TorchSide::model(*pol);
  Tensor ids = tensor("input_ids"), mask = tensor("attention_mask");
  Tensor got;
  {
    c10::InferenceMode guard;
    got = model->forward(ids.to(model->opts.device()), mask).to(torch::kFloat32).cpu();
  }
  Tensor keep = mask.to(torch::kBool).unsqueeze(-1).expand_as(got);
  auto diff = [&](const Tensor& a, const Tensor& b) {
    return (a - b).abs().masked_select(keep).max().item<double>();
  };
  Tensor ref32 = tensor("logits_fp32"), ref16 = tensor("logits_bf16");
  const double scale = ref32.abs().max().item<double>();
  const double noise = diff(ref16, ref32);  // transformers bf16 vs transformers fp32
  const double d_same = diff(got, lo.dtype == "fp32" ? ref32 : ref16);
  const double d32 = diff(got, ref32);
  // Tolerance: fp32 must agree to 1e-4 of the logits' range; bf16 within twice the
  // rounding noise transformers itself shows between bf16 and fp32.
  const double tol = lo.dtype == "fp32" ? 1e-4 * std::max(1.0, scale) : 2 * noise + 1e-3 * scale;
  const bool logits_ok = d_same <= tol;

  const int64_t prompt_len = std::stoll(ref.metadata().at("prompt_len"));
  Tensor want = tensor("greedy_" + std::string(lo.dtype == "fp32" ? "fp32" : "bf16"));
  std::vector<int> prompt(ids[0].data_ptr<int64_t>(), ids[0].data_ptr<int64_t>() + prompt_len);
  SampleOptions so;
  so.temperature = 0;
  so.max_tokens = static_cast<int>(want.numel());
  so.ignore_eos = true;
  auto c = pol->sample({prompt}, so)[0][0];
  int64_t same_prefix = 0;
  while (same_prefix < want.numel() && same_prefix < static_cast<int64_t>(c.tokens.size()) &&
         c.tokens[same_prefix] == want[same_prefix].item<int64_t>())
    ++same_prefix;
  // transformers' greedy continuation, teacher-forced through the engine: each of its
  // tokens must be the engine's argmax, or within the logit tolerance of it (a near-tie
  // that rounding may order either way; random models have many in bf16).
  Tensor seq = torch::cat({ids[0].narrow(0, 0, prompt_len), want}).unsqueeze(0);
  Tensor lg;
  {
    c10::InferenceMode guard;
    lg = model->forward(seq.to(model->opts.device())).to(torch::kFloat32).cpu()[0]
             .narrow(0, prompt_len - 1, want.numel());
  }
  Tensor gap = std::get<0>(lg.max(1)) - lg.gather(1, want.unsqueeze(1)).squeeze(1);
  const double max_gap = gap.max().item<double>();
  const int64_t argmax_agree = (gap == 0).sum().item<int64_t>();
  const bool exact = same_prefix == want.numel();
  const bool greedy_ok = exact || (lo.dtype != "fp32" && max_gap <= tol);
  auto name = std::filesystem::path(dir).lexically_normal().filename().string();
  if (name.empty()) name = std::filesystem::path(dir).lexically_normal().parent_path().filename().string();
  Json out = {{"model", name},
              {"device", lo.device}, {"dtype", lo.dtype}, {"graphs", lo.cuda_graphs},
              {"load_s", load_s}, {"max_abs_logit", scale},
              {"max_diff_vs_same_dtype", d_same}, {"max_diff_vs_fp32", d32},
              {"hf_bf16_vs_fp32", noise}, {"tolerance", tol}, {"logits_ok", logits_ok},
              {"greedy_tokens", want.numel()}, {"greedy_same_prefix", same_prefix},
              {"teacher_forced_argmax_agree", argmax_agree},
              {"teacher_forced_max_gap", max_gap}, {"greedy_exact", exact},
              {"greedy_ok", greedy_ok}};
  std::cout << out.dump() << std::endl;
  return logits_ok && greedy_ok ? 0 : 1;
}

// Device-to-device copy bandwidth (read + write bytes per second) of a large buffer.
static double copy_bandwidth(const torch::Device& d) {
  auto o = torch::TensorOptions().dtype(torch::kUInt8).device(d);
  const int64_t bytes = int64_t(4) << 30;
  Tensor a = torch::empty({bytes}, o), b = torch::empty({bytes}, o);
  b.copy_(a);
  sync(d);
  const int reps = 10;
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < reps; ++i) b.copy_(a);
  sync(d);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return 2.0 * bytes * reps / s;
}

// Seconds a call of fn takes on device d (the CPU too), the median of `reps` timed calls
// after three untimed ones.
template <class Fn>
static double median_seconds(const torch::Device& d, Fn&& fn, int reps = 20) {
  for (int i = 0; i < 3; ++i) fn();
  sync(d);
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    sync(d);
    t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

static int decode(const std::string& config_path, const std::map<std::string, std::string>& f) {
  std::ifstream in(config_path);
  if (!in) throw std::runtime_error(config_path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  ModelConfig cfg = parse_config(ss.str(), config_path);
  LoadOptions lo;
  lo.device = get(f, "device", "cuda");
  lo.dtype = get(f, "dtype", "bf16");
  lo.cuda_graphs = get(f, "graphs", "1") == "1";
  decode_kernels().fused_elementwise = get(f, "fused", "1") == "1";
  decode_kernels().pipelined_sampling = get(f, "pipelined", "1") == "1";
  decode_kernels().fused_sampler = get(f, "sampler", "1") == "1";
  decode_kernels().tensor_core_attention = get(f, "mma", "1") == "1";
  decode_kernels().attention_tiles_per_block = std::stoi(get(f, "attention_tiles", "0"));
  decode_kernels().cpu_attention = get(f, "cpu_attention", "1") == "1";
  const int batch = std::stoi(get(f, "batch", "64"));
  // The paper's step samples G completions of each of a few prompts: batch = prompts x G.
  const int samples = std::stoi(get(f, "samples", "1"));
  if (samples < 1 || batch % samples != 0)
    throw std::runtime_error("--samples must divide --batch");
  const int prompt_len = std::stoi(get(f, "prompt", "128"));
  const int tokens = std::stoi(get(f, "tokens", "256"));
  auto dev = parse_device(lo.device);
  double bw = std::stod(get(f, "bandwidth", "0")) * 1e9;
  const double measured_bw = dev.is_cuda() ? copy_bandwidth(dev) : 0;
  if (bw == 0) bw = measured_bw;
  // What cuBLAS reaches on this GPU: bf16 GEMMs of the step's widest shape (rows x
  // hidden x 2 x intermediate, the gate/up projection) and of 8192^3, in FLOP/s.
  double gemm_step = 0, gemm_square = 0;
  if (dev.is_cuda() && lo.dtype == "bf16") {
    auto bf = torch::TensorOptions().dtype(torch::kBFloat16).device(dev);
    auto rate = [&](int64_t m, int64_t k, int64_t n) {
      Tensor x = torch::randn({m, k}, bf), w = torch::randn({n, k}, bf);
      const double s = median_seconds(dev, [&] { torch::matmul(x, w.t()); }, 10);
      return 2.0 * m * k * n / s;
    };
    gemm_step = rate(std::stoi(get(f, "batch", "64")), cfg.hidden_size, 2 * cfg.intermediate_size);
    gemm_square = rate(8192, 8192, 8192);
  }

  auto pol = Policy::random(cfg, lo, 1);
  // Weight bytes a decode step reads: everything but the embedding table, of which only
  // the batch's rows are read (unless it doubles as the output projection).
  int64_t weight_bytes = pol->parameter_bytes();
  if (!cfg.tie_embeddings) weight_bytes -= cfg.vocab_size * cfg.hidden_size * (lo.dtype == "fp32" ? 4 : 2);

  torch::manual_seed(0);
  auto gen = torch::randint(0, cfg.vocab_size, {batch / samples, prompt_len}, torch::kInt64);
  std::vector<std::vector<int>> prompts(batch / samples);
  for (int b = 0; b < batch / samples; ++b)
    for (int t = 0; t < prompt_len; ++t) prompts[b].push_back(static_cast<int>(gen[b][t].item<int64_t>()));
  SampleOptions so;
  so.temperature = 1.0;
  so.ignore_eos = true;
  so.seed = 1;
  so.n = samples;
  so.max_tokens = 8;
  pol->sample(prompts, so);  // warm-up: allocator, cuBLAS, graph capture paths
  so.max_tokens = tokens;
  SampleStats st;
  pol->sample(prompts, so, &st);
  const double tok_s = batch * static_cast<double>(st.decode_steps) / st.decode_s;
  const double step_ms = 1e3 * st.decode_s / st.decode_steps;
  const double limit_step_ms = bw > 0 ? 1e3 * weight_bytes / bw : 0;
  const double limit_tok_s = limit_step_ms > 0 ? batch * 1e3 / limit_step_ms : 0;
  // At large batches a step also reads the key/value cache: every row's keys and values
  // up to its position, prompt_len + tokens / 2 on average.
  const double kv_bytes = static_cast<double>(batch) * (prompt_len + tokens / 2.0) * cfg.num_layers *
                          2 * cfg.num_kv_heads * cfg.head_dim * (lo.dtype == "fp32" ? 4 : 2);
  const double limit_kv_step_ms = bw > 0 ? 1e3 * (weight_bytes + kv_bytes) / bw : 0;
  // Large batches also meet the GEMMs' compute limit: 2 FLOPs a weight a row, at the best
  // rate cuBLAS reached here (8192^3), or the weights' read, whichever is longer; then the
  // cache read.
  const double gemm_flops = 2.0 * weight_bytes / (lo.dtype == "fp32" ? 4 : 2) * batch;
  const double limit_measured_step_ms =
      gemm_square > 0 && bw > 0 ? 1e3 * (std::max(gemm_flops / gemm_square, weight_bytes / bw) + kv_bytes / bw) : 0;
  Json out = {{"engine", "policy"}, {"config", config_path}, {"device", lo.device},
              {"dtype", lo.dtype}, {"graphs", lo.cuda_graphs}, {"batch", batch},
              {"fused", decode_kernels().fused_elementwise},
              {"pipelined", decode_kernels().pipelined_sampling},
              {"fused_sampler", decode_kernels().fused_sampler},
              {"tensor_core_attention", decode_kernels().tensor_core_attention},
              {"attention_tiles_per_block", decode_kernels().attention_tiles_per_block},
              {"samples_per_prompt", samples},
              {"prompt", prompt_len}, {"tokens", tokens}, {"prefill_s", st.prefill_s},
              {"decode_s", st.decode_s}, {"decode_steps", st.decode_steps},
              {"graphs_recorded", st.graphs_recorded}, {"graph_record_s", st.graph_record_s},
              {"decode_tok_s", tok_s}, {"step_ms", step_ms}, {"weight_bytes", weight_bytes},
              {"bandwidth_GBps", bw / 1e9}, {"measured_copy_GBps", measured_bw / 1e9},
              {"gemm_step_shape_TFLOPS", gemm_step / 1e12}, {"gemm_8192_TFLOPS", gemm_square / 1e12},
              {"limit_step_ms", limit_step_ms}, {"limit_tok_s", limit_tok_s},
              {"fraction_of_limit", limit_tok_s > 0 ? tok_s / limit_tok_s : 0},
              {"kv_bytes_mean", kv_bytes}, {"limit_with_kv_step_ms", limit_kv_step_ms},
              {"fraction_of_limit_with_kv", step_ms > 0 ? limit_kv_step_ms / step_ms : 0},
              {"gemm_flops", gemm_flops}, {"limit_measured_step_ms", limit_measured_step_ms},
              {"fraction_of_measured_limit", step_ms > 0 ? limit_measured_step_ms / step_ms : 0}};
  std::cout << out.dump() << std::endl;

  const std::string trace = get(f, "profile", "");
  if (!trace.empty()) {
    if (!policy_bench::profiler_available())
      throw std::runtime_error("--profile needs a CUDA build of libtorch");
    const int64_t first = 8, count = 12;
    so.max_tokens = static_cast<int>(first + count + 2);
    so.on_step = [&](int64_t step) {
      if (step == first) {
        sync(dev);
        policy_bench::profiler_start();
      } else if (step == first + count) {
        sync(dev);
        policy_bench::profiler_stop(trace);
      }
    };
    pol->sample(prompts, so);
    std::cout << Json{{"profile", trace}, {"steps", count}}.dump() << std::endl;
  }
  return 0;
}

// The decode attention kernels' rate on the 14B config's shapes (40 query heads, 8 kv
// heads of 128) over a cache of `span` columns, in bytes of keys and values read per second,
// against the copy bandwidth measured in the same run. Ten calls are timed together so
// that launch latency does not count.
static void attention_speed(const torch::Device& dev) {
  const double copy_bw = copy_bandwidth(dev);
  auto bf = torch::TensorOptions().dtype(torch::kBFloat16).device(dev);
  // last >= 0: a graph's span of S columns of which the keys up to `last` are written, as
  // in a recorded decode step.
  struct Shape { int64_t B, S, last = -1; };
  for (const Shape& sh : std::vector<Shape>{{64, 192}, {64, 512}, {128, 192}, {512, 192}, {512, 384}, {256, 256},
                                            {64, 512, 149}, {512, 512, 149}}) {
    const int64_t H = 40, Hk = 8, D = 128;
    Tensor q = torch::randn({sh.B, H, 1, D}, bf);
    Tensor k = torch::randn({sh.B, Hk, sh.S, D}, bf), v = torch::randn({sh.B, Hk, sh.S, D}, bf);
    Tensor bias = torch::zeros({sh.B, 1, 1, sh.S}, torch::TensorOptions().device(dev));
    Tensor last;
    if (sh.last >= 0) last = torch::full({1}, sh.last, torch::TensorOptions().dtype(torch::kInt64).device(dev));
    const double bytes = 2.0 * k.numel() * 2 * (sh.last >= 0 ? (sh.last + 1.0) / sh.S : 1.0);
    Json row = {{"attention_speed", "14B shapes"}, {"B", sh.B}, {"S", sh.S}, {"last", sh.last}, {"kv_MB", bytes / 1e6},
                {"copy_GBps", copy_bw / 1e9}};
    auto time_it = [&] {
      return median_seconds(dev, [&] {
        for (int i = 0; i < 10; ++i) fused_decode_attention(q, k, v, bias, 0.088, last);
      }) / 10;
    };
    for (bool tc : {false, true}) {
      decode_kernels().tensor_core_attention = tc;
      const double s = time_it();
      row[tc ? "tensor_cores_us" : "simt_us"] = s * 1e6;
      row[tc ? "tensor_cores_GBps" : "simt_GBps"] = bytes / s / 1e9;
    }
    // Tensor cores, each block walking 1, 2, 4 or all of the span's tiles.
    Json by_tiles = Json::object();
    for (int tiles : {1, 2, 4, 64}) {
      decode_kernels().attention_tiles_per_block = tiles;
      by_tiles[std::to_string(tiles)] = time_it() * 1e6;
    }
    decode_kernels().attention_tiles_per_block = 0;
    row["tensor_cores_us_by_tiles_per_block"] = by_tiles;
    decode_kernels().tensor_core_attention = true;
    row["speedup"] = row["simt_us"].get<double>() / row["tensor_cores_us"].get<double>();
    std::cout << row.dump() << std::endl;
  }
}

static int attention_check() {
  const torch::Device dev(torch::kCUDA);
  if (!torch::cuda::is_available()) throw std::runtime_error("attention: needs CUDA");
  // last >= 0: the kernel is given the span S but told (on the device) that only the
  // columns up to `last` are written, as a recorded decode step is.
  struct Case { int64_t B, H, Hk, D, cap, S; bool mask; int64_t last = -1; };
  const std::vector<Case> cases = {{64, 40, 8, 128, 384, 192, true}, {64, 40, 8, 128, 384, 383, true},
                                   {3, 14, 2, 64, 100, 77, true},    {2, 12, 2, 128, 300, 1, false},
                                   {5, 32, 8, 64, 520, 513, true},   {4, 16, 16, 128, 64, 64, false},
                                   {64, 40, 8, 128, 512, 512, true, 200},
                                   {3, 14, 2, 64, 600, 512, false, 0},
                                   // enough rows for one block per (row, kv head) walking the span
                                   {160, 40, 8, 128, 384, 383, true},
                                   {160, 40, 8, 128, 512, 512, true, 300},
                                   {300, 16, 4, 64, 200, 150, true},
                                   // few rows, a long span: blocks walk several tiles, then merge
                                   {8, 40, 8, 128, 1024, 1000, true},
                                   {8, 40, 8, 128, 1024, 1024, true, 700},
                                   // eight and seven query heads a kv head (rows 0..7 of the mma)
                                   {6, 64, 8, 128, 256, 200, true},
                                   {3, 28, 4, 64, 128, 100, true}};
  bool ok = true;
  torch::manual_seed(3);
  for (const auto& c : cases) {
    auto bf = torch::TensorOptions().dtype(torch::kBFloat16).device(dev);
    // q as a slice of a wider projection, k/v as the first S columns of a cache.
    Tensor qkv = torch::randn({c.B, 1, c.H + 2 * c.Hk, c.D}, bf);
    Tensor q = qkv.narrow(2, 0, c.H).transpose(1, 2);  // [B,H,1,D]
    Tensor kc = torch::randn({c.B, c.Hk, c.cap, c.D}, bf), vc = torch::randn({c.B, c.Hk, c.cap, c.D}, bf);
    Tensor k = kc.narrow(2, 0, c.S), v = vc.narrow(2, 0, c.S);
    Tensor bias;
    if (c.mask) {
      Tensor keep = torch::rand({c.B, c.cap}, torch::TensorOptions().device(dev)) < 0.7;
      keep.select(1, c.last >= 0 ? c.last : c.S - 1).fill_(true);  // the newest key is visible
      Tensor full = torch::zeros({c.B, c.cap}, torch::TensorOptions().device(dev))
                        .masked_fill(keep.logical_not(), -std::numeric_limits<float>::infinity());
      bias = full.narrow(1, 0, c.S).unsqueeze(1).unsqueeze(1);
    }
    const double scale = 1.0 / std::sqrt(static_cast<double>(c.D));
    Tensor last;
    if (c.last >= 0) last = torch::full({1}, c.last, torch::TensorOptions().dtype(torch::kInt64).device(dev));
    decode_kernels().tensor_core_attention = true;
    Tensor got = fused_decode_attention(q, k, v, bias, scale, last);
    decode_kernels().tensor_core_attention = false;
    Tensor got_simt = fused_decode_attention(q, k, v, bias, scale, last);
    decode_kernels().tensor_core_attention = true;
    if (c.last >= 0) {  // the reference sees only the written columns
      k = k.narrow(2, 0, c.last + 1);
      v = v.narrow(2, 0, c.last + 1);
      if (bias.defined()) bias = bias.narrow(3, 0, c.last + 1);
    }
    if (!got.defined() || !got_simt.defined()) {
      std::cout << Json{{"attention", "declined"}, {"B", c.B}, {"H", c.H}, {"D", c.D}}.dump() << std::endl;
      ok = false;
      continue;
    }
    const int64_t G = c.H / c.Hk;
    Tensor q64 = q.to(torch::kFloat64).reshape({c.B, c.Hk, G, c.D});
    Tensor s64 = torch::matmul(q64, k.to(torch::kFloat64).transpose(-1, -2)) * scale;  // [B,Hk,G,S]
    if (bias.defined()) s64 = s64 + bias.to(torch::kFloat64);
    Tensor ref = torch::matmul(torch::softmax(s64, -1), v.to(torch::kFloat64)).reshape({c.B, 1, c.H * c.D});
    const double err = (got.to(torch::kFloat64) - ref).abs().max().item<double>();
    const double err_simt = (got_simt.to(torch::kFloat64) - ref).abs().max().item<double>();
    const double mag = ref.abs().max().item<double>();
    const bool pass = std::isfinite(err) && err <= 1e-2 * std::max(1.0, mag) &&
                      std::isfinite(err_simt) && err_simt <= 1e-2 * std::max(1.0, mag);
    ok = ok && pass;
    std::cout << Json{{"attention", pass ? "ok" : "FAILED"}, {"B", c.B}, {"H", c.H}, {"Hk", c.Hk},
                      {"D", c.D}, {"S", c.S}, {"mask", c.mask}, {"last", c.last},
                      {"max_abs_err_tensor_cores", err}, {"max_abs_err_simt", err_simt},
                      {"max_abs_ref", mag}}.dump() << std::endl;
  }
  attention_speed(dev);
  return ok ? 0 : 1;
}

// The decode step's fused elementwise kernels against float64 references on random inputs.
static int kernels_check() {
  const torch::Device dev(torch::kCUDA);
  if (!torch::cuda::is_available()) throw std::runtime_error("kernels: needs CUDA");
  auto bf = torch::TensorOptions().dtype(torch::kBFloat16).device(dev);
  auto f64 = [](const Tensor& t) { return t.to(torch::kFloat64); };
  bool ok = true;
  auto report = [&](const std::string& what, const Tensor& got, const Tensor& ref, Json shape) {
    // Two bf16 roundings of the result's magnitude: 2^-8 relative each.
    const double err = (f64(got) - ref).abs().max().item<double>();
    const double mag = ref.abs().max().item<double>();
    const bool pass = std::isfinite(err) && err <= 8e-3 * std::max(1.0, mag);
    ok = ok && pass;
    shape["kernel"] = what;
    shape["result"] = pass ? "ok" : "FAILED";
    shape["max_abs_err"] = err;
    shape["max_abs_ref"] = mag;
    std::cout << shape.dump() << std::endl;
  };
  torch::manual_seed(5);
  c10::InferenceMode guard;
  struct RopeCase { int64_t B, H, Hk, D, cap, column; bool device_slot; };
  for (const auto& c : std::vector<RopeCase>{{64, 40, 8, 128, 384, 200, true},
                                             {3, 14, 2, 64, 100, 0, false},
                                             {5, 32, 8, 64, 520, 519, true},
                                             // halves of 12: the one-value-a-thread kernel
                                             {4, 6, 2, 24, 50, 7, true}}) {
    Tensor qkv = torch::randn({c.B, 1, c.H + 2 * c.Hk, c.D}, bf);
    Tensor angle = torch::rand({c.B, 1, c.D / 2}, bf.dtype(torch::kFloat32)) * 6.28;
    Tensor cos = torch::cat({angle.cos(), angle.cos()}, -1).to(torch::kBFloat16);
    Tensor sin = torch::cat({-angle.sin(), angle.sin()}, -1).to(torch::kBFloat16);
    Tensor kc = torch::zeros({c.B, c.Hk, c.cap, c.D}, bf), vc = torch::zeros_like(kc);
    Tensor slot = c.device_slot ? torch::full({1}, c.column, bf.dtype(torch::kInt64)) : Tensor();
    Tensor q = fused_rope_cache(qkv, cos, sin, kc, vc, slot, c.device_slot ? -1 : c.column);
    Json shape = {{"B", c.B}, {"H", c.H}, {"Hk", c.Hk}, {"D", c.D}, {"column", c.column}};
    if (!q.defined()) {
      std::cout << Json{{"kernel", "rope_cache"}, {"result", "declined"}}.dump() << std::endl;
      ok = false;
      continue;
    }
    const int64_t half = c.D / 2;
    Tensor x = f64(qkv.squeeze(1));  // [B, heads, D]
    Tensor swapped = torch::cat({x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
    Tensor rot = x * f64(cos) + swapped * f64(sin);  // cos/sin [B,1,D] broadcast over heads
    report("rope_cache q", q.squeeze(2), rot.narrow(1, 0, c.H), shape);
    report("rope_cache k", kc.select(2, c.column), rot.narrow(1, c.H, c.Hk), shape);
    report("rope_cache v", vc.select(2, c.column), x.narrow(1, c.H + c.Hk, c.Hk), shape);
    // Nothing but the column is written.
    const double elsewhere = kc.abs().sum().item<double>() - kc.select(2, c.column).abs().sum().item<double>() +
                             vc.abs().sum().item<double>() - vc.select(2, c.column).abs().sum().item<double>();
    if (elsewhere != 0) {
      std::cout << Json{{"kernel", "rope_cache"}, {"result", "FAILED"}, {"wrote_elsewhere", elsewhere}}.dump()
                << std::endl;
      ok = false;
    }
  }
  // 1004 and 12288 values a row take the one-value-a-load kernel.
  for (auto [rows, dim] : std::vector<std::pair<int64_t, int64_t>>{
           {64, 5120}, {7, 896}, {512, 5120}, {5, 1004}, {3, 12288}}) {
    Tensor x = torch::randn({rows, 1, dim}, bf) * 3, w = torch::randn({dim}, bf);
    Tensor got = fused_rms_norm(x, w, 1e-6);
    Tensor x64 = f64(x);
    Tensor ref = f64(w) * (x64 * torch::rsqrt(x64.pow(2).mean(-1, true) + 1e-6));
    report("rms_norm", got, ref, {{"rows", rows}, {"dim", dim}});
    Tensor gu = torch::randn({rows, 1, 2 * dim}, bf) * 2;
    Tensor g = f64(gu.narrow(-1, 0, dim)), u = f64(gu.narrow(-1, dim, dim));
    report("swiglu", fused_swiglu(gu), g * torch::sigmoid(g) * u, {{"rows", rows}, {"inner", dim}});
  }
  // The sampler: frequencies over many rows of the same logits against softmax(x / T)
  // (each within 5 standard deviations of a binomial count), log-probabilities against
  // log_softmax, and a fresh draw on every call.
  // Also fp32 logits in rows of 13, which take the unaligned path with its tail.
  struct SampleCase { double temperature; bool fp32; };
  for (const SampleCase sc : {SampleCase{1.0, false}, SampleCase{0.7, false}, SampleCase{0.8, true}}) {
    const double temperature = sc.temperature;
    const int64_t rows = 200000;
    Tensor row = sc.fp32 ? torch::tensor({2.0, 1.0, 0.5, 0.0, -1.0, -3.0, 1.5, 0.25, 0.75, -0.5, 1.75, 0.1, 1.9},
                                         torch::kFloat32)
                         : torch::tensor({2.0, 1.0, 0.5, 0.0, -1.0, -3.0, 1.5, 0.25}, torch::kFloat32);
    const int64_t V = row.numel();
    Tensor logits = (sc.fp32 ? row : row.to(torch::kBFloat16)).to(dev).unsqueeze(0).expand({rows, V}).contiguous();
    auto [tok, lp] = fused_sample(logits, temperature);
    Tensor p = torch::softmax(logits[0].to(torch::kFloat64) / temperature, 0).cpu();
    Tensor counts = torch::bincount(tok.cpu(), {}, V).to(torch::kFloat64);
    Tensor sd = torch::sqrt(rows * p * (1 - p));
    const double worst = ((counts - rows * p).abs() / sd).max().item<double>();
    Tensor lsm = torch::log_softmax(logits.to(torch::kFloat64) / temperature, 1).gather(1, tok.unsqueeze(1)).squeeze(1);
    const double lp_err = (lp.to(torch::kFloat64) - lsm).abs().max().item<double>();
    auto [tok2, lp2] = fused_sample(logits, temperature);
    const double same = tok.eq(tok2).to(torch::kFloat64).mean().item<double>();
    // Two independent draws agree with probability sum p^2.
    const double expect_same = (p * p).sum().item<double>();
    const bool pass = worst < 5 && lp_err < 1e-5 && std::abs(same - expect_same) < 0.01;
    ok = ok && pass;
    std::cout << Json{{"kernel", "sample"}, {"result", pass ? "ok" : "FAILED"}, {"temperature", temperature},
                      {"logits", sc.fp32 ? "fp32" : "bf16"}, {"vocab", V}, {"rows", rows}, {"worst_count_sigmas", worst}, {"logprob_err", lp_err},
                      {"repeat_agreement", same}, {"expected_agreement", expect_same}}.dump() << std::endl;
  }
  {
    // Few rows: each row is cut into chunks that a second kernel merges. The likely tokens
    // lie in different chunks; 3,000 calls of 4 rows against softmax.
    const int64_t rows = 4, V = 8192, calls = 3000;
    Tensor row = torch::zeros({V}, torch::kFloat32);
    row[10] = 6.0, row[4100] = 5.0, row[8000] = 6.5;
    Tensor logits = row.to(torch::kBFloat16).to(dev).unsqueeze(0).expand({rows, V}).contiguous();
    std::vector<Tensor> draws;
    for (int64_t i = 0; i < calls; ++i) draws.push_back(fused_sample(logits, 1.0).first);
    Tensor tok = torch::cat(draws).cpu();
    Tensor p = torch::softmax(row.to(torch::kFloat64), 0);
    double worst = 0;
    const double n = static_cast<double>(rows * calls);
    for (int64_t id : {10, 4100, 8000}) {
      const double pi = p[id].item<double>();
      const double count = tok.eq(id).sum().item<double>();
      worst = std::max(worst, std::abs(count - n * pi) / std::sqrt(n * pi * (1 - pi)));
    }
    const bool pass = worst < 5;
    ok = ok && pass;
    std::cout << Json{{"kernel", "sample"}, {"result", pass ? "ok" : "FAILED"}, {"rows", rows},
                      {"vocab", V}, {"calls", calls}, {"worst_count_sigmas", worst}}.dump() << std::endl;
  }
  {
    // A row of NaN logits (a diverged model) must not yield a token past the vocabulary.
    Tensor logits = torch::randn({3, 1000}, bf);
    logits[1].fill_(std::numeric_limits<float>::quiet_NaN());
    auto [tok, lp] = fused_sample(logits, 1.0);
    Tensor t = tok.cpu(), l = lp.cpu();
    const bool pass = t[1].item<int64_t>() == 0 && std::isnan(l[1].item<float>()) &&
                      t.min().item<int64_t>() >= 0 && t.max().item<int64_t>() < 1000 &&
                      std::isfinite(l[0].item<float>()) && std::isfinite(l[2].item<float>());
    ok = ok && pass;
    std::cout << Json{{"kernel", "sample"}, {"result", pass ? "ok" : "FAILED"}, {"nan_row_token", t[1].item<int64_t>()},
                      {"nan_row_logprob_is_nan", std::isnan(l[1].item<float>())}}.dump() << std::endl;
  }
  {
    // A real vocabulary: tokens in range, log-probabilities those of the tokens drawn.
    Tensor logits = torch::randn({64, 152064}, bf) * 2;
    auto [tok, lp] = fused_sample(logits, 1.0);
    Tensor lsm = torch::log_softmax(logits.to(torch::kFloat64), 1).gather(1, tok.unsqueeze(1)).squeeze(1);
    const double lp_err = (lp.to(torch::kFloat64) - lsm).abs().max().item<double>();
    const bool in_range = tok.min().item<int64_t>() >= 0 && tok.max().item<int64_t>() < 152064;
    const bool pass = in_range && lp_err < 1e-3;
    ok = ok && pass;
    std::cout << Json{{"kernel", "sample"}, {"result", pass ? "ok" : "FAILED"}, {"vocab", 152064},
                      {"logprob_err", lp_err}, {"in_range", in_range}}.dump() << std::endl;
  }
  return ok ? 0 : 1;
}

// The GEMMs of one CPU decode step of CONFIG (fp32, `rows` rows: q/k/v, o, gate/up and
// down of every layer, the output head) as the engine runs them (at::linear on
// libtorch's BLAS, the policy's default threads), and through oneDNN where libtorch has
// it; their FLOP rate. Then the step's attention over `span` keys, by the operations the
// model's CPU path uses (model.cpp: grouped matmul, bias, softmax, matmul). The CPU
// sampling limit in docs/performance.md is set against these.
static int cpu_decode(const std::string& config_path, const std::map<std::string, std::string>& f) {
  std::ifstream in(config_path);
  if (!in) throw std::runtime_error(config_path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  const ModelConfig c = parse_config(ss.str(), config_path);
  const int64_t rows = std::stoi(get(f, "rows", "32")), span = std::stoi(get(f, "span", "260"));
  at::set_num_threads(default_threads());
  c10::InferenceMode guard;
  torch::manual_seed(0);
  std::vector<Tensor> w, x;
  auto add = [&](int64_t out, int64_t in_features) {
    w.push_back(torch::randn({out, in_features}));
    x.push_back(torch::randn({rows, in_features}));
  };
  for (int64_t l = 0; l < c.num_layers; ++l) {
    add((c.num_heads + 2 * c.num_kv_heads) * c.head_dim, c.hidden_size);
    add(c.hidden_size, c.num_heads * c.head_dim);
    add(2 * c.intermediate_size, c.hidden_size);
    add(c.hidden_size, c.intermediate_size);
  }
  add(c.vocab_size, c.hidden_size);
  double flops = 0;
  for (const Tensor& t : w) flops += 2.0 * rows * t.size(0) * t.size(1);
  const torch::Device cpu(torch::kCPU);
  auto seconds = [&](auto&& step) { return median_seconds(cpu, step, 100); };
  Json out = {{"cpu_decode", config_path}, {"rows", rows}, {"span", span}, {"torch_threads", at::get_num_threads()},
              {"mflop_a_step", flops / 1e6}};
  const double blas = seconds([&] {
    for (size_t i = 0; i < w.size(); ++i) at::linear(x[i], w[i]);
  });
  out["blas_ms"] = blas * 1e3;
  out["blas_GFLOPS"] = flops / blas / 1e9;
  if (at::hasMKLDNN()) {
    std::vector<Tensor> wd;
    for (const Tensor& t : w) wd.push_back(t.to_mkldnn());
    for (int threads : {1, static_cast<int>(std::thread::hardware_concurrency())}) {
      at::set_num_threads(threads);
      const double s = seconds([&] {
        for (size_t i = 0; i < w.size(); ++i) at::mkldnn_linear(x[i].to_mkldnn(), wd[i]).to_dense();
      });
      out["onednn_" + std::to_string(threads) + "_threads_ms"] = s * 1e3;
    }
    at::set_num_threads(default_threads());
  }
  const int64_t G = c.num_heads / c.num_kv_heads, D = c.head_dim;
  Tensor q = torch::randn({rows, c.num_heads, 1, D}), k = torch::randn({rows, c.num_kv_heads, span, D});
  Tensor v = torch::randn({rows, c.num_kv_heads, span, D}), bias = torch::zeros({rows, 1, 1, span});
  const double attention = seconds([&] {
    for (int64_t l = 0; l < c.num_layers; ++l) {
      Tensor raw = torch::matmul(q.reshape({rows, c.num_kv_heads, G, D}), k.transpose(-1, -2));
      Tensor p = torch::softmax(torch::add(bias, raw, 1.0 / std::sqrt(static_cast<double>(D))), -1);
      torch::matmul(p, v).reshape({rows, 1, c.num_heads * D});
    }
  });
  out["attention_ms"] = attention * 1e3;
  out["attention_GFLOPS"] = 4.0 * rows * c.num_heads * span * D * c.num_layers / attention / 1e9;
  // The model's own CPU decode attention on the same inputs (cpu_attention.hpp), q as the
  // model has it: [rows, heads, 1, D].
  const double own = seconds([&] {
    for (int64_t l = 0; l < c.num_layers; ++l) cpu_decode_attention(q, k, v, bias, 1.0 / std::sqrt(double(D)));
  });
  out["cpu_attention_ms"] = own * 1e3;
  out["attention_ms_over_cpu_attention_ms"] = attention / own;
  std::cout << out.dump() << std::endl;
  return 0;
}

int main(int argc, char** argv) {
  try {
    if (argc >= 3 && std::string(argv[1]) == "parity") return parity(argv[2], flags(argc, argv, 3));
    if (argc >= 3 && std::string(argv[1]) == "decode") return decode(argv[2], flags(argc, argv, 3));
    if (argc >= 2 && std::string(argv[1]) == "attention") return attention_check();
    if (argc >= 2 && std::string(argv[1]) == "kernels") return kernels_check();
    if (argc >= 3 && std::string(argv[1]) == "cpu-decode") return cpu_decode(argv[2], flags(argc, argv, 3));
    std::cerr << "usage: policy_bench parity DIR [--device D] [--dtype T] [--graphs 0|1]\n"
                 "       policy_bench decode CONFIG.json [--batch B] [--samples N] [--prompt L] [--tokens N]"
                 " [--device D] [--dtype T] [--bandwidth GBPS] [--graphs 0|1]"
                 " [--profile TRACE.json]\n"
                 " [--fused 0|1] [--pipelined 0|1] [--sampler 0|1] [--mma 0|1] [--attention_tiles N] [--cpu_attention 0|1]\n"
                 "       policy_bench attention\n"
                 "       policy_bench kernels\n"
                 "       policy_bench cpu-decode CONFIG.json [--rows 32] [--span 260]\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "policy_bench: " << e.what() << "\n";
    return 1;
  }
}
