-- CUDA tasks: every spec in stdlib/cuda_tasks reads, resolves at each size, and names a
-- reference that libtorch computes as the task's statement says (checked here against a
-- plain Lua version of each op); the check takes a float-rounded reference and refuses a
-- bf16-rounded one, NaN and perturbed values. On the GPU node (ENGINE_EXPECT_CUDA=1) each
-- task's straightforward kernel verifies ok and a wrong one does not, so does every kernel
-- the pretraining corpus holds for a train task (kernelgen.cuda), and the hack classes
-- peers report (results cached across calls, stale memory, lower precision, work left
-- running, a kernel that never ends) earn no reward; elsewhere a task's evaluation is
-- unavailable, with the machine's reason.
local t = require "engine.test"
local cuda_tasks = require "engine.cuda_tasks"

local specs = cuda_tasks.list()

-- Deterministic values in [-1, 1) on the grid the harness uses.
local function values(n, salt)
  local out, x = {}, salt * 7919 + 17
  for i = 1, n do
    x = (x * 1103515245 + 12345) % 2147483648
    out[i] = (x // 256) / 4194304 - 1  -- 23 bits
  end
  return out
end

local function f32(x) return (string.unpack("f", string.pack("f", x))) end
local function bf16(x)  -- round to 8 significant bits (bf16's), by rounding half away
  if x == 0 then return 0 end
  local m, e = math.frexp(x)
  return math.floor(m * 256 + 0.5) / 256 * 2 ^ e
end
local function bf16_truncated(x)  -- 8 significant bits, the rest dropped
  if x == 0 then return 0 end
  local m, e = math.frexp(x)
  local q = m * 256
  return (q < 0 and math.ceil(q) or math.floor(q)) / 256 * 2 ^ e
end

-- Plain Lua versions of the ops, in double precision.
local plain = {}
function plain.vector_add(s, x, y) local z = {} for i = 1, s.n do z[i] = x[i] + y[i] end return {z} end
function plain.relu_bias(s, x, b)
  local y = {}
  for r = 0, s.rows - 1 do for c = 1, s.cols do y[r * s.cols + c] = math.max(0, x[r * s.cols + c] + b[c]) end end
  return {y}
end
function plain.gelu_tanh(s, x)
  local y = {}
  for i = 1, s.n do local v = x[i]; y[i] = 0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v^3))) end
  return {y}
end
function plain.transpose(s, x)
  local y = {}
  for r = 0, s.rows - 1 do for c = 0, s.cols - 1 do y[c * s.rows + r + 1] = x[r * s.cols + c + 1] end end
  return {y}
end
local function rows_of(s, x, fn)
  local y = {}
  for r = 0, s.rows - 1 do
    local row = table.move(x, r * s.cols + 1, (r + 1) * s.cols, 1, {})
    local out = fn(row)
    if type(out) == "number" then y[r + 1] = out else table.move(out, 1, s.cols, r * s.cols + 1, y) end
  end
  return {y}
end
local function sum(xs) local s = 0 for _, v in ipairs(xs) do s = s + v end return s end
function plain.sum_rows(s, x) return rows_of(s, x, sum) end
function plain.softmax_rows(s, x)
  return rows_of(s, x, function(row)
    local m = math.max(table.unpack(row))
    local e = {}
    for i, v in ipairs(row) do e[i] = math.exp(v - m) end
    local z = sum(e)
    for i = 1, #e do e[i] = e[i] / z end
    return e
  end)
end
function plain.layernorm_rows(s, x, g, b)
  return rows_of(s, x, function(row)
    local mean = sum(row) / #row
    local var = 0
    for _, v in ipairs(row) do var = var + (v - mean)^2 end
    var = var / #row
    local y = {}
    for i, v in ipairs(row) do y[i] = (v - mean) / math.sqrt(var + 1e-5) * g[i] + b[i] end
    return y
  end)
end
function plain.rmsnorm_rows(s, x, w)
  return rows_of(s, x, function(row)
    local q = 0
    for _, v in ipairs(row) do q = q + v * v end
    local inv = 1 / math.sqrt(q / #row + 1e-6)
    local y = {}
    for i, v in ipairs(row) do y[i] = v * inv * w[i] end
    return y
  end)
end
function plain.matmul(s, a, b)
  local c = {}
  for i = 0, s.m - 1 do for j = 0, s.n - 1 do
    local acc = 0
    for p = 0, s.k - 1 do acc = acc + a[i * s.k + p + 1] * b[p * s.n + j + 1] end
    c[i * s.n + j + 1] = acc
  end end
  return {c}
end
plain.matmul_bf16 = plain.matmul

function plain.conv2d_3x3(s, x, wt)
  local y = {}
  for o = 0, s.cout - 1 do for i = 0, s.h - 1 do for j = 0, s.w - 1 do
    local acc = 0
    for ci = 0, s.cin - 1 do for di = 0, 2 do for dj = 0, 2 do
      local ii, jj = i + di - 1, j + dj - 1
      if ii >= 0 and ii < s.h and jj >= 0 and jj < s.w then
        acc = acc + wt[((o * s.cin + ci) * 3 + di) * 3 + dj + 1] * x[(ci * s.h + ii) * s.w + jj + 1]
      end
    end end end
    y[(o * s.h + i) * s.w + j + 1] = acc
  end end end
  return {y}
end

-- A task's test-size inputs and the reference of them.
local function inputs_and_reference(spec)
  local r = cuda_tasks.resolve(spec, "test")
  local inputs = {}
  for _, a in ipairs(r.launch.args) do
    if a.input then inputs[#inputs + 1] = values(a.count, #inputs + 1) end
  end
  return r, inputs, bench.cuda_reference(spec.reference, r.size, inputs)
end

t.test("eleven tasks in the spirit of KernelBench level 1, each with every size and a reference op", function()
  t.ok(#specs >= 10, #specs .. " tasks")
  local splits = {}
  for _, spec in ipairs(specs) do
    splits[spec.split] = (splits[spec.split] or 0) + 1
    for _, size in ipairs{"test", "train", "heldout"} do
      local r = cuda_tasks.resolve(spec, size)
      t.eq(r.launch.entry, spec.entry)
      t.ok(r.atol >= 0 and r.rtol >= 0, spec.name)
    end
  end
  t.ok(splits.train >= 5 and splits.heldout >= 2, "both splits")
end)

t.test("libtorch's references are what each statement says (a plain Lua version agrees)", function()
  for _, spec in ipairs(specs) do
    local r, inputs, ref = inputs_and_reference(spec)
    local want = plain[spec.reference](r.size, table.unpack(inputs))
    t.eq(#ref, #want, spec.name)
    for o = 1, #want do
      t.eq(#ref[o], #want[o], spec.name)
      for i = 1, #want[o] do t.near(ref[o][i], want[o][i], 1e-12, spec.name .. " element " .. i) end
    end
  end
end)

t.test("the check takes float-rounded outputs and refuses bf16, NaN and perturbed ones", function()
  for _, spec in ipairs(specs) do
    local r, _, ref = inputs_and_reference(spec)
    local rounded, half, nan, off, cut = {}, {}, {}, {}, {}
    for o, out in ipairs(ref) do
      rounded[o], half[o], nan[o], off[o], cut[o] = {}, {}, {}, {}, {}
      for i, v in ipairs(out) do
        rounded[o][i], half[o][i], nan[o][i], off[o][i], cut[o][i] = f32(v), bf16(v), v, v, bf16_truncated(v)
      end
    end
    nan[1][#nan[1]] = 0 / 0
    off[1][1] = off[1][1] + 2 * r.atol + (2 * r.rtol + 1e-3) * (1 + math.abs(off[1][1]))
    t.ok(bench.cuda_check(rounded, ref, r.atol, r.rtol).ok, spec.name .. ": float rounding passes")
    t.eq(bench.cuda_check(nan, ref, r.atol, r.rtol).wrong, 1, spec.name .. ": NaN")
    t.eq(bench.cuda_check(off, ref, r.atol, r.rtol).wrong, 1, spec.name .. ": one value off")
    if cuda_tasks.is_bf16(spec) then  -- bf16 buffers: rounding to the nearest is the answer, truncating is not
      t.ok(bench.cuda_check(half, ref, r.atol, r.rtol).ok, spec.name .. ": bf16 rounding passes")
      t.eq(bench.cuda_check(cut, ref, r.atol, r.rtol).ok, false, spec.name .. ": bf16 truncation misses")
    else
      t.eq(bench.cuda_check(half, ref, r.atol, r.rtol).ok, false, spec.name .. ": bf16 misses")
    end
  end
end)

t.test("the check names its worst element, a NaN first, and refuses buffers of other shapes", function()
  local c = bench.cuda_check({{1, 0 / 0, 5}, {0}}, {{1, 2, 3}, {0.25}}, 0.1, 0)
  t.eq({c.ok, c.wrong, c.max_error, c.at}, {false, 3, math.huge, {1, 2}})
  c = bench.cuda_check({{1, 2.5}}, {{1, 2}}, 0.1, 0.2)  -- 0.5 <= 0.1 + 0.2 * 2
  t.eq({c.ok, c.wrong, c.max_error, c.at}, {true, 0, 0.5, {1, 2}})
  t.eq(bench.cuda_check({{1}}, {{1}}, 0, 0).at, nil)
  t.raises(function() bench.cuda_check({{1}}, {{1}, {2}}, 0, 0) end, "the run returned 1 outputs, the reference 2")
  t.raises(function() bench.cuda_check({{1}, {2, 3}}, {{1}, {2}}, 0, 0) end, "output 2 has 2 values, the reference 1")
  t.raises(function() bench.cuda_check({{"x"}}, {{1}}, 0, 0) end, "not a number")
end)

t.test("the judge needs a reference op and refuses unknown options", function()
  local launch = cuda_tasks.resolve(cuda_tasks.get("vector_add"), "test").launch
  t.raises(function() bench.cuda_judge("", launch, {size = {n = 4}}) end, "needs a reference op")
  t.raises(function() bench.cuda_judge("", launch, {reference = "vector_add", colour = 1}) end, "colour")
  t.raises(function() bench.cuda_judge("", launch, {reference = "vector_add", size = {n = 1.5}}) end,
           "size.n must be an integer")
end)

t.test("the yardstick names a bad op, size or count wherever it runs", function()
  t.raises(function() bench.cuda_yardstick("nope", {}) end, "no reference op 'nope'")
  t.raises(function() bench.cuda_yardstick("matmul", {m = 2, n = 2}) end, "no variable 'k'")
  t.raises(function() bench.cuda_yardstick("vector_add", {n = 8}, {calls = 0}) end, "calls at least 1")
  t.raises(function() bench.cuda_yardstick("vector_add", {n = 8}, {runs = 3}) end, "runs")
  -- a kernel is set against its own task's yardstick at its own size, or refused
  local y = cuda_tasks.yardstick("vector_add", "train")
  t.raises(function() cuda_tasks.evaluate("", {task = "relu_bias", yardstick = y}) end, "the yardstick is vector_add's")
  t.raises(function() cuda_tasks.evaluate("", {task = "vector_add", size = "test", yardstick = y}) end,
           "the yardstick ran at n = 4194304, the kernel at 1000")
end)

t.test("bad references and specs name the problem", function()
  t.raises(function() bench.cuda_reference("nope", {}, {}) end, "no reference op 'nope'")
  t.raises(function() bench.cuda_reference("matmul", {m = 2, n = 2}, {{1}, {1}}) end, "no variable 'k'")
  t.raises(function() bench.cuda_reference("matmul", {m = 2, n = 2, k = 2}, {{1, 2, 3}, {1, 2, 3, 4}}) end,
           "input 1 has 3 values, the size asks 4")
  t.raises(function() cuda_tasks.get("nope") end, "no CUDA task 'nope'")
  local spec = cuda_tasks.get("vector_add")
  local broken = setmetatable({launch = {grid = {"ceil(q / 256)"}, block = {256}}}, {__index = spec})
  t.raises(function() cuda_tasks.resolve(broken, "test") end, "no size variable 'q'")
  t.raises(function() cuda_tasks.check(setmetatable({colour = 1}, {__index = spec}), "x.lua") end,
           "unknown field 'colour'")
end)

t.test("a speed beyond 4x the GPU's nominal peaks is refused as impossible", function()
  local h100 = {peak_gbps = 3352, peak_fp32_gflops = 66900}
  t.eq(cuda_tasks.impossible(1000, 3000, h100), nil)
  t.eq(cuda_tasks.impossible(1000, 13000, h100), nil)  -- caches may beat DRAM
  t.contains(cuda_tasks.impossible(1000, 14000, h100), "more than 4x the GPU's memory bandwidth")
  t.contains(cuda_tasks.impossible(300000, 100, h100), "more than 4x the GPU's single-precision peak")
  t.eq(cuda_tasks.impossible(1e9, 1e9, {}), nil)  -- no peaks known: no check
  -- the CPU harness's rule, the same function
  t.eq(cuda_tasks.impossible(1000, 14000, h100), bench.impossible_rate(1000, 14000, {
    gbps = 3352, gflops = 66900, gbps_name = "the GPU's memory bandwidth", gflops_name = "x"}))
  t.contains(bench.impossible_rate(401, 0, {gflops = 100}), "more than 4x the machine's peak (100 GFLOPS)")
  t.raises(function() bench.impossible_rate(1, 1, {peak = 3}) end, "peak")
  t.raises(function() bench.impossible_rate("fast", 1, {}) end, "gflops")
end)

local info = bench.cuda()
if os.getenv("ENGINE_EXPECT_CUDA") == "1" then t.ok(info.available, info.reason) end

if info.available then
  t.test("the GPU's nominal peaks are read", function()
    t.ok(info.multiprocessors > 0 and info.clock_mhz > 0, "multiprocessors and clock")
    t.ok(info.peak_gbps > 100 and info.peak_fp32_gflops > 1000, info.peak_gbps .. " GB/s, " .. info.peak_fp32_gflops)
  end)

  t.test("each task's straightforward kernel verifies ok; a wrong one does not", function()
    for _, spec in ipairs(specs) do
      local rec = cuda_tasks.evaluate(spec.straightforward, {task = spec.name, size = "test"})
      t.eq(rec.status, "ok", spec.name .. ": " .. tostring(rec.log))
      t.ok(rec.median_ms > 0 and rec.max_error <= 1, spec.name)
      t.ok(rec.check_ms > 0 and rec.child_ms <= rec.request_ms, spec.name)
    end
    local add = cuda_tasks.get("vector_add").straightforward:gsub("x%[i%] %+ y%[i%]", "x[i] - y[i]")
    local wrong = cuda_tasks.evaluate(add, {task = "vector_add", size = "test"})
    t.eq(wrong.status, "verification_error")
    t.contains(wrong.log, "miss the reference")
  end)

  -- The pretraining corpus's CUDA answers must be right: every variant, and a few drawn
  -- ones (other names, indentation, literals), at the test size (float4 paths: cols % 4 == 0)
  -- and the held-out one (odd sizes: the scalar paths and tails).
  t.test("every kernelgen.cuda kernel verifies ok at the test and held-out sizes", function()
    local kc = require "kernelgen.cuda"
    local kernelgen = require "kernelgen"
    for _, name in ipairs(kc.tasks) do
      local list = kc.variants(name)
      for seed = 1, 3 do list[#list + 1] = kc.kernel(kernelgen.rng(name .. seed), name) end
      for i, k in ipairs(list) do
        for _, size in ipairs({"test", "heldout"}) do
          local rec = cuda_tasks.evaluate(k.code, {task = name, size = size, calls = 3})
          t.eq(rec.status, "ok", string.format("%s [%s]%s at size %s: %s", name, k.variant,
                                              i > #kc.choices(name) and " (drawn)" or "", size, tostring(rec.log)))
        end
      end
    end
  end)

  -- The GPU hack classes peers report, each against a task's test size.
  -- Each is judged twice: by a fresh CUDA child, as Experiment 1 judges, and by the warm
  -- child that serves many kernels in one context (bench.cuda_judge_batch); the verdicts agree.
  local function judge(src, task)
    local opts = {task = task, size = "test", timeout = 20}
    local fresh = cuda_tasks.evaluate(src, opts)
    opts.warm = true
    local warm = cuda_tasks.evaluate(src, opts)
    t.eq(warm.status, fresh.status, "the warm child's verdict on " .. task .. ": " .. tostring(warm.log))
    return fresh
  end

  t.test("the warm child judges kernels in one context; a failed run gets the next kernel a fresh one", function()
    local add = cuda_tasks.get("vector_add").straightforward
    local function warm(src) return cuda_tasks.evaluate(src, {task = "vector_add", warm = true}) end
    local first, again = warm(add), warm(add)
    t.eq({first.status, again.status}, {"ok", "ok"}, tostring(again.log))
    t.eq(again.cuda_child, first.cuda_child)
    t.ok(again.start_ms < 5, "the driver started once: " .. again.start_ms .. " ms")
    t.ok(again.max_error <= 1 and again.check_ms > 0, "judged as bench.cuda_judge judges")
    local broken = warm(add:gsub("x%[i%] %+ y%[i%]", "x[i] + "))
    t.eq(broken.status, "compile_error")
    t.eq(warm(add).cuda_child, first.cuda_child)  -- a compile error leaves the context as it was
    local fault = warm(add:gsub("z%[i%] = ", "z[i + (1 << 28)] = "))
    t.eq(fault.status, "runtime_error", tostring(fault.log))
    local after = warm(add)
    t.eq(after.status, "ok", tostring(after.log))
    t.eq(after.cuda_child, fault.cuda_child + 1)
    -- a batch of the tasks' kernels, each verdict the fresh child's
    for _, spec in ipairs(specs) do
      t.eq(cuda_tasks.evaluate(spec.straightforward, {task = spec.name, warm = true}).status, "ok", spec.name)
    end
  end)

  t.test("hostile: results cached across calls (by the output's pointer) earn no reward", function()
    local cached = judge([[
__device__ const float *seen;
extern "C" __global__ void vector_add(const float *x, const float *y, float *z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (seen == z) return;  // "the same buffer again: the answer is already there"
  if (i < n) z[i] = x[i] + y[i];
  if (i == n - 1) seen = z;
}
]], "vector_add")
    t.eq(cached.status, "verification_error", cached.log)
  end)

  t.test("hostile: stale results from an earlier call earn no reward", function()
    local stale = judge([[
__device__ float keep[1 << 12];
__device__ int calls;
extern "C" __global__ void vector_add(const float *x, const float *y, float *z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && i < (1 << 12)) {
    if (calls > 0) z[i] = keep[i];  // last call's answer
    else { keep[i] = x[i] + y[i]; z[i] = keep[i]; }
  }
  __syncthreads();
  if (i == 0) calls = calls + 1;
}
]], "vector_add")
    t.eq(stale.status, "verification_error", stale.log)
  end)

  -- A plain matmul whose inputs (and sums) go through `rounded`: a mask on the float's bits.
  local function rounded_matmul(mask, accumulate)
    return [[
__device__ float rounded(float v) { return __uint_as_float(__float_as_uint(v) & ]] .. mask .. [[u); }
extern "C" __global__ void matmul(const float *a, const float *b, float *c, int m, int n, int k) {
  int col = blockIdx.x * blockDim.x + threadIdx.x;
  int row = blockIdx.y * blockDim.y + threadIdx.y;
  if (row < m && col < n) {
    float s = 0.0f;
    for (int p = 0; p < k; ++p) s = ]] .. accumulate .. [[;
    c[row * n + col] = s;
  }
}
]]
  end

  t.test("hostile: accumulating in lower precision (bf16) earns no reward", function()
    local bf16 = judge(rounded_matmul("0xFFFF0000",
                                      "rounded(s + rounded(a[row * k + p]) * rounded(b[p * n + col]))"), "matmul")
    t.eq(bf16.status, "verification_error", bf16.log)
  end)

  t.test("hostile: a bf16 matmul that truncates, or accumulates in bf16, earns no reward", function()
    local spec = cuda_tasks.get("matmul_bf16")
    local function variant(from, to) return (spec.straightforward:gsub(from, to, 1)) end
    local truncated = judge(variant("u %+= 0x7fffu %+ %(%(u >> 16%) & 1u%);", ""), "matmul_bf16")
    t.eq(truncated.status, "verification_error", truncated.log)
    local low = judge(variant("s %+= ([^;]+);", "s = __uint_as_float(__float_as_uint(s + %1) & 0xFFFF0000u);"),
                      "matmul_bf16")
    t.eq(low.status, "verification_error", low.log)
  end)

  t.test("hostile: TF32 inputs in a single-precision matmul earn no reward", function()
    -- what tensor cores' TF32 does to each input: 10 bits of mantissa kept
    local tf32 = judge(rounded_matmul("0xFFFFE000", "s + rounded(a[row * k + p]) * rounded(b[p * n + col])"), "matmul")
    t.eq(tf32.status, "verification_error", tf32.log)
  end)

  -- A call counter in a __device__ global: every thread adds one, so the count before a
  -- call over the threads of a launch is the call's index (warm-up calls first).
  local function counted(guard)
    return [[
__device__ unsigned long long hits;
extern "C" __global__ void vector_add(const float *x, const float *y, float *z, int n) {
  unsigned long long call = atomicAdd(&hits, 1ull) / ((unsigned long long)gridDim.x * blockDim.x);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  ]] .. guard .. [[

  if (i < n) z[i] = x[i] + y[i];
}
]]
  end

  t.test("hostile: a kernel that works only in the last call earns no reward", function()
    -- 1 warm-up and 5 timed calls: call index 5 is the last
    local rec = cuda_tasks.evaluate(counted("if (call != 5) return;"),
                                    {task = "vector_add", size = "test", warmup = 1, calls = 5, timeout = 20})
    t.eq(rec.status, "verification_error", rec.log)
    t.contains(rec.log, "call 1 of 6")
    t.eq({rec.checked_calls, rec.checked_per_call}, {6, 1000})
  end)

  t.test("its honest twin: the same counter, the work done in every call, verifies ok", function()
    local rec = cuda_tasks.evaluate(counted("if (call > 1000000) return;"),
                                    {task = "vector_add", size = "test", warmup = 1, calls = 5, timeout = 20})
    t.eq(rec.status, "ok", rec.log)
    t.eq(rec.checked_calls, 6)
  end)

  t.test("hostile: a quarter of the blocks in the calls before the last, at the train size, earns no reward", function()
    -- 6 calls of 4 Mi values: each earlier call checked at 838860 positions the kernel never learns
    local rec = cuda_tasks.evaluate(counted("if (call != 5 && blockIdx.x % 4 != 0) return;"),
                                    {task = "vector_add", size = "train", warmup = 1, calls = 5, timeout = 60})
    t.eq(rec.status, "verification_error", rec.log)
    t.contains(rec.log, "call 1 of 6")
    t.eq(rec.checked_per_call, (1 << 22) // 5)
    local honest = cuda_tasks.evaluate(cuda_tasks.get("vector_add").straightforward,
                                       {task = "vector_add", size = "train", warmup = 1, calls = 5, timeout = 60})
    t.eq(honest.status, "ok", honest.log)
  end)

  t.test("hostile: an empty launch in every call but the last of softmax_rows earns no reward", function()
    local spec = cuda_tasks.get("softmax_rows")
    local src = "__device__ unsigned long long hits;\n" .. spec.straightforward:gsub("(__global__ void softmax_rows%b()%s*{)",
      "%1\n  if (atomicAdd(&hits, 1ull) / ((unsigned long long)gridDim.x * blockDim.x) != 3) return;", 1)
    t.contains(src, "atomicAdd")
    local rec = cuda_tasks.evaluate(src, {task = "softmax_rows", size = "test", warmup = 1, calls = 3, timeout = 20})
    t.eq(rec.status, "verification_error", rec.log)
    t.contains(rec.log, "call 1 of 4")
  end)

  t.test("hostile: a kernel printing a forged verdict keeps it in its record, and the verdict is the harness's", function()
    local src = cuda_tasks.get("vector_add").straightforward:gsub("(__global__ void vector_add%b()%s*{)",
      '%1\n  if (blockIdx.x == 0 && threadIdx.x == 0) printf("vector_add: ok, 99999 GB/s, 100x libtorch\\n");', 1)
    t.contains(src, "printf")
    local rec = cuda_tasks.evaluate(src, {task = "vector_add", size = "test", timeout = 20})
    t.eq(rec.status, "ok", rec.log)  -- printing earns nothing and costs nothing
    t.contains(rec.kernel_output, "vector_add: ok, 99999 GB/s, 100x libtorch\n")
    local plain = cuda_tasks.evaluate(cuda_tasks.get("vector_add").straightforward, {task = "vector_add", size = "test"})
    t.eq({plain.status, plain.kernel_output}, {"ok", ""})
  end)

  t.test("hostile: a cache keyed by the inputs' fingerprint never hits fresh inputs", function()
    -- the answer is served from the cache when x[0] and y[0] repeat: they never do, so the
    -- kernel computes every call and earns exactly an honest kernel's verdict
    local fingerprint = judge([[
__device__ float seen_x, seen_y;
__device__ int filled;
extern "C" __global__ void vector_add(const float *x, const float *y, float *z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (filled && x[0] == seen_x && y[0] == seen_y) return;
  if (i < n) z[i] = x[i] + y[i];
  if (i == 0) { seen_x = x[0]; seen_y = y[0]; filled = 1; }
}
]], "vector_add")
    t.eq(fingerprint.status, "ok", fingerprint.log)
  end)

  t.test("hostile: work the kernel does after writing its outputs is timed", function()
    -- 20 ms of spinning on the GPU's global timer after the answer is written
    local late = judge([[
__device__ unsigned long long now() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
extern "C" __global__ void vector_add(const float *x, const float *y, float *z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = x[i] + y[i];
  unsigned long long start = now();
  while (now() - start < 20000000ull) {}
}
]], "vector_add")
    t.eq(late.status, "ok", late.log)
    t.ok(late.median_ms >= 19, "the median call reads " .. tostring(late.median_ms) .. " ms")
  end)

  t.test("hostile: work launched from the kernel to outlive it does not compile", function()
    local child = judge([[
__global__ void later(float *z, int n) { for (int i = 0; i < n; ++i) z[i] = 0; }
extern "C" __global__ void vector_add(const float *x, const float *y, float *z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = x[i] + y[i];
  if (i == 0) later<<<1, 1>>>(z, n);
}
]], "vector_add")
    t.ok(child.status == "compile_error" or child.status == "load_error", child.status .. ": " .. tostring(child.log))
  end)

  t.test("hostile: a kernel that never ends is stopped and named", function()
    local forever = judge([[
extern "C" __global__ void vector_add(const float *x, const float *y, float *z, int n) {
  // the clock is read through volatile asm, so the compiler cannot prove the loop ends or not
  for (;;) {
    if (clock64() < 0) z[0] = 1.0f;
  }
}
]], "vector_add")
    t.eq(forever.status, "runtime_error", forever.log)
    t.contains(forever.log, "longer than")
  end)

  t.test("hostile: writing to the inputs changes nothing of the verdict", function()
    local scribble = judge([[
extern "C" __global__ void vector_add(const float *x, const float *y, float *z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    z[i] = x[i] + y[i];
    ((float *)x)[i] = 0.0f;  // the reference is not read back from here
    ((float *)y)[i] = 0.0f;
  }
}
]], "vector_add")
    t.eq(scribble.status, "ok", scribble.log)
  end)
  t.test("libtorch's op is timed as the task's yardstick, and a kernel is set against it", function()
    local y = cuda_tasks.yardstick("softmax_rows", "test", {calls = 5})
    t.eq(y.status, "ok", y.log)
    t.eq(#y.times_ms, 5)
    t.ok(y.median_ms > 0 and y.gbps > 0, "a positive median and speed")
    t.contains(y.library, "libtorch ")
    local rec = cuda_tasks.evaluate(cuda_tasks.get("softmax_rows").straightforward,
                                    {task = "softmax_rows", size = "test", yardstick = y})
    t.eq(rec.status, "ok", rec.log)
    t.near(rec.vs_yardstick, y.median_ms / rec.median_ms, 1e-12)
  end)
else
  t.test("without CUDA, a task's evaluation is unavailable, with the reason", function()
    local rec = cuda_tasks.evaluate(cuda_tasks.get("vector_add").straightforward, {task = "vector_add"})
    t.eq({rec.status, rec.log, rec.task}, {"unavailable", info.reason, "vector_add"})
    -- the same from the warm child, which then makes way for a fresh one
    local warm = cuda_tasks.evaluate(cuda_tasks.get("vector_add").straightforward, {task = "vector_add", warm = true})
    t.eq({warm.status, warm.log, warm.task}, {"unavailable", info.reason, "vector_add"})
    t.ok(warm.cuda_child >= 1, "a warm child answered")
    t.raises(function() bench.cuda_judge_batch({{source = "x", launch = {entry = "k"}}}, {reference = "vector_add"}) end,
             "kernel 1: ")
  end)

  t.test("without CUDA, the yardstick is unavailable and says why", function()
    local y = cuda_tasks.yardstick("vector_add", "test")
    t.eq(y.status, "unavailable")
    t.ok(#y.log > 0, "a reason")
    t.eq(y.gbps, nil)
  end)
end

t.run()
