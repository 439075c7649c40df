-- Synthetic CUDA kernels for the train split of the CUDA tasks (stdlib/cuda_tasks), beside
-- kernelgen's C kernels: several correct variants per task that differ in technique and
-- speed, so that RL on a CUDA task has something to improve. Each is device code for the
-- spec's fixed launch (its grid and block), right at every size of the spec (odd sizes,
-- rows that are not 16-byte aligned), and defines the spec's entry with its exact signature.
--
--   local kc = require "kernelgen.cuda"
--   kc.tasks                                   -- the seven train tasks covered
--   local k = kc.kernel(rng, "softmax_rows")   -- k.code, k.task, k.variant ("reduce=warp, pass=online")
--   kc.variants("softmax_rows")                -- every variant once, plain style: {code, task, variant}
--   local ex = kc.example(rng, {task = "matmul", gpu = "NVIDIA H200"})
--   ex.messages (prompts.cuda_write at a train or test size), ex.completion (one ```cuda
--   block), ex.task, ex.variant, ex.size (the size's name), ex.gpu, ex.code
--   kc.completion(rng, code)                   -- an answer holding code, as examples have it
--   local list = kc.corpus(n, {seed = 1, gpus = {...}, tasks = {...}})   -- tasks in turn
--
-- The variants (kc.choices(name) lists them):
--   vector_add, relu_bias: form indexed | grid_stride | vec4 (float4 over a grid-stride
--     loop where every pointer is 16-byte aligned, and relu_bias's cols % 4 == 0, then a
--     scalar tail), loads plain | ldg (__restrict__ aliases read through __ldg)
--   sum_rows: reduce tree | tree_warp | warp | warp_xor, loads scalar | vec4, ilp 1 | 2
--   softmax_rows: reduce tree | warp | warp_xor, pass three (max, sum, write) | stash (the
--     exponentials written, then scaled) | online (max and sum in one pass)
--   layernorm_rows: stats two_pass | sumsq | welford (its own shuffle reduction), reduce
--     tree | warp | warp_xor, loads scalar | vec4
--   transpose: form naive_read | naive_write | tile | tile_padded (33 columns), loads plain | ldg
--   matmul: naive (loads plain | ldg, unroll 1 | 4) | tiled in shared memory (tile_k 16 | 32,
--     the inner loop unrolled or not)
-- Besides, every kernel draws its names, indentation, -infinity literal and whether
-- comments say why. rng is kernelgen.rng(seed). No held-out task is generated or named.
--
-- Rules the text keeps (NVRTC, no headers): float4 only behind a run-time alignment
-- check; __syncthreads never in a branch that differs between threads of a block; shared
-- arrays sized for the spec's block (256, or 32 per-warp slots, or the 16 x 16 and 32 x 32
-- tiles); shuffles with the full mask only where the whole warp takes part.

local prompts = require "method.prompts"
local cuda_tasks = require "engine.cuda_tasks"
local split = require "method.heldout_split"

local M = {}

M.tasks = {"vector_add", "relu_bias", "sum_rows", "softmax_rows", "layernorm_rows", "transpose", "matmul"}
M.gpus = {"NVIDIA H100 80GB HBM3", "NVIDIA H200", "NVIDIA A100-SXM4-80GB"}

local function rng_of(seed) return require("engine.rng").new(seed) end

-- Names, indentation, comments and the template filling: kernelgen/cuda_style.lua.
local style = require "kernelgen.cuda_style"
local draw_style, fill, lines = style.draw, style.fill, style.lines


-- The test that every pointer of `ptrs` is 16-byte aligned (float4 loads and stores).
local function aligned(ptrs)
  local casts = {}
  for i, p in ipairs(ptrs) do casts[i] = "reinterpret_cast<unsigned long long>(" .. p .. ")" end
  if #casts == 1 then return "(" .. casts[1] .. " & 15) == 0" end
  return "((" .. table.concat(casts, " | ") .. ") & 15) == 0"
end

-- make_float4 of fmt with %s replaced by each lane's field.
local function lanes4(fmt)
  local out = {}
  for _, f in ipairs({"x", "y", "z", "w"}) do out[#out + 1] = (fmt:gsub("%%s", f)) end
  return "make_float4(" .. table.concat(out, ", ") .. ")"
end

---------------------------------------------------------------------------------------
-- Elementwise: vector_add, relu_bias
---------------------------------------------------------------------------------------

-- ptr[idx], read through the read-only cache in the ldg form.
local function load(ch, ptr, idx)
  if ch.loads == "ldg" then return "__ldg(" .. ptr .. " + " .. idx .. ")" end
  return ptr .. "[" .. idx .. "]"
end

-- The ldg form's __restrict__ aliases of the arguments ({name, read-only?} each): the
-- names to use ({name = alias}; the arguments' own otherwise) and their declarations.
local function restrict_lines(ch, args, ind)
  local map, out = {}, {}
  if ch.loads ~= "ldg" then
    for _, a in ipairs(args) do map[a[1]] = a[1] end
    return map, out
  end
  out[1] = ind .. "//@ldg"
  for _, a in ipairs(args) do
    local alias = a[1] .. "_r"
    map[a[1]] = alias
    out[#out + 1] = ind .. (a[2] and "const " or "") .. "float *__restrict__ " .. alias .. " = " .. a[1] .. ";"
  end
  return map, out
end

local function append(list, more) for _, l in ipairs(more) do list[#list + 1] = l end return list end

local function gen_vector_add(ch, st)
  local P, rl = restrict_lines(ch, {{"x", true}, {"y", true}, {"z", false}}, "  ")
  local t = {'extern "C" __global__ void vector_add(const float *x, const float *y, float *z, int n) {'}
  append(t, rl)
  local function sum(idx) return load(ch, P.x, idx) .. " + " .. load(ch, P.y, idx) end
  if ch.form == "indexed" then
    append(t, {"  //@index", "  int $i = blockIdx.x * blockDim.x + threadIdx.x;",
               "  if ($i < n) " .. P.z .. "[$i] = " .. sum("$i") .. ";"})
  elseif ch.form == "grid_stride" then
    append(t, {"  //@grid_stride", "  int $stride = gridDim.x * blockDim.x;",
               "  for (int $i = blockIdx.x * blockDim.x + threadIdx.x; $i < n; $i += $stride)",
               "    " .. P.z .. "[$i] = " .. sum("$i") .. ";"})
  else
    append(t, {"  int $i = blockIdx.x * blockDim.x + threadIdx.x;",
               "  int $stride = gridDim.x * blockDim.x;",
               "  //@align",
               "  bool $vec = " .. aligned({"x", "y", "z"}) .. ";",
               "  int $n4 = $vec ? n / 4 : 0;",
               "  const float4 *x4 = reinterpret_cast<const float4 *>(" .. P.x .. ");",
               "  const float4 *y4 = reinterpret_cast<const float4 *>(" .. P.y .. ");",
               "  float4 *z4 = reinterpret_cast<float4 *>(" .. P.z .. ");",
               "  for (int $q = $i; $q < $n4; $q += $stride) {",
               "    float4 $va = " .. load(ch, "x4", "$q") .. ";",
               "    float4 $vb = " .. load(ch, "y4", "$q") .. ";",
               "    z4[$q] = " .. lanes4("$va.%s + $vb.%s") .. ";",
               "  }",
               "  //@tail",
               "  for (int $j = 4 * $n4 + $i; $j < n; $j += $stride) " .. P.z .. "[$j] = " .. sum("$j") .. ";"})
  end
  t[#t + 1] = "}"
  return fill(st, "common", lines(t))
end

local function gen_relu_bias(ch, st)
  local P, rl = restrict_lines(ch, {{"x", true}, {"b", true}, {"y", false}}, "  ")
  local relu = st.pick({"fmaxf(0.0f, %s)", "fmaxf(%s, 0.0f)"})
  local function val(idx) return relu:format(load(ch, P.x, idx) .. " + " .. load(ch, P.b, idx .. " % cols")) end
  local t = {'extern "C" __global__ void relu_bias(const float *x, const float *b, float *y, int rows, int cols) {'}
  append(t, rl)
  t[#t + 1] = "  long $total = (long)rows * cols;"
  if ch.form == "indexed" then
    append(t, {"  //@index", "  long $i = (long)blockIdx.x * blockDim.x + threadIdx.x;",
               "  if ($i < $total) " .. P.y .. "[$i] = " .. val("$i") .. ";"})
  elseif ch.form == "grid_stride" then
    append(t, {"  //@grid_stride", "  long $stride = (long)gridDim.x * blockDim.x;",
               "  for (long $i = (long)blockIdx.x * blockDim.x + threadIdx.x; $i < $total; $i += $stride)",
               "    " .. P.y .. "[$i] = " .. val("$i") .. ";"})
  else
    append(t, {"  long $i = (long)blockIdx.x * blockDim.x + threadIdx.x;",
               "  long $stride = (long)gridDim.x * blockDim.x;",
               "  //@align",
               "  bool $vec = cols % 4 == 0 && " .. aligned({"x", "b", "y"}) .. ";",
               "  long $n4 = $vec ? $total / 4 : 0;",
               "  int $c4 = cols / 4;",
               "  const float4 *x4 = reinterpret_cast<const float4 *>(" .. P.x .. ");",
               "  const float4 *b4 = reinterpret_cast<const float4 *>(" .. P.b .. ");",
               "  float4 *y4 = reinterpret_cast<float4 *>(" .. P.y .. ");",
               "  for (long $q = $i; $q < $n4; $q += $stride) {",
               "    float4 $va = " .. load(ch, "x4", "$q") .. ";",
               "    //@bias",
               "    float4 $vb = " .. load(ch, "b4", "$q % $c4") .. ";",
               "    y4[$q] = " .. lanes4(relu:format("$va.%s + $vb.%s")) .. ";",
               "  }",
               "  //@tail",
               "  for (long $j = 4 * $n4 + $i; $j < $total; $j += $stride) " .. P.y .. "[$j] = " .. val("$j") .. ";"})
  end
  t[#t + 1] = "}"
  return fill(st, "common", lines(t))
end

---------------------------------------------------------------------------------------
-- Block reductions (one block of 256 threads per row)
---------------------------------------------------------------------------------------

local ops = {
  sum = {combine = function(a, b) return a .. " + " .. b end, identity = "0.0f"},
  max = {combine = function(a, b) return "fmaxf(" .. a .. ", " .. b .. ")" end, identity = "$NINF"},
}

-- The shared floats a reduction style needs per reduced value.
local shared_size = {tree = 256, tree_warp = 256, warp = 32, warp_xor = 32}

-- A helper `float @blk(op)(float v, float *part)` that every thread returns the block's
-- result from (and its warp helper), in the reduction style `style`.
local function reduce_helper(style, op)
  local O = ops[op]
  local comb = O.combine
  local t = {}
  if style ~= "tree" then
    local shfl = style == "warp_xor" and "__shfl_xor_sync" or "__shfl_down_sync"
    append(t, {"__device__ float @wrp(" .. op .. ")(float v) {",
               "  for (int off = 16; off > 0; off >>= 1) v = " .. comb("v", shfl .. "(0xffffffff, v, off)") .. ";",
               "  return v;", "}", ""})
  end
  t[#t + 1] = "__device__ float @blk(" .. op .. ")(float v, float *part) {"
  t[#t + 1] = "  //@" .. style
  if style == "tree" or style == "tree_warp" then
    append(t, {"  part[threadIdx.x] = v;", "  __syncthreads();",
               "  for (int half = blockDim.x / 2; half " .. (style == "tree" and "> 0" or ">= 32") .. "; half >>= 1) {",
               "    if (threadIdx.x < half) part[threadIdx.x] = " .. comb("part[threadIdx.x]", "part[threadIdx.x + half]") .. ";",
               "    __syncthreads();", "  }"})
    if style == "tree_warp" then
      append(t, {"  if (threadIdx.x < 32) {", "    v = @wrp(" .. op .. ")(part[threadIdx.x]);",
                 "    if (threadIdx.x == 0) part[0] = v;", "  }", "  __syncthreads();"})
    end
    append(t, {"  float r = part[0];", "  __syncthreads();", "  return r;", "}"})
  elseif style == "warp" then
    append(t, {"  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;",
               "  v = @wrp(" .. op .. ")(v);", "  if (lane == 0) part[warp] = v;", "  __syncthreads();",
               "  if (warp == 0) {",
               "    v = @wrp(" .. op .. ")(lane < (int)(blockDim.x >> 5) ? part[lane] : " .. O.identity .. ");",
               "    if (lane == 0) part[0] = v;", "  }", "  __syncthreads();",
               "  float r = part[0];", "  __syncthreads();", "  return r;", "}"})
  else
    append(t, {"  v = @wrp(" .. op .. ")(v);", "  if ((threadIdx.x & 31) == 0) part[threadIdx.x >> 5] = v;",
               "  __syncthreads();", "  float r = part[0];",
               "  for (int w = 1; w < (int)(blockDim.x >> 5); ++w) r = " .. comb("r", "part[w]") .. ";",
               "  __syncthreads();", "  return r;", "}"})
  end
  t[#t + 1] = ""
  return t
end

-- A block-strided loop over `count` items: add(idx, acc) gives the statements adding item
-- idx to the accumulator acc; with ilp 2, two accumulators (acc and acc2, summed at the end).
local function strided(count, add, ilp, ind, acc)
  if ilp ~= 2 then
    local body = add("$c", acc)
    if #body == 1 then return {ind .. "for (int $c = threadIdx.x; $c < " .. count .. "; $c += blockDim.x) " .. body[1]} end
    local t = {ind .. "for (int $c = threadIdx.x; $c < " .. count .. "; $c += blockDim.x) {"}
    for _, l in ipairs(body) do t[#t + 1] = ind .. "  " .. l end
    t[#t + 1] = ind .. "}"
    return t
  end
  local acc2 = acc .. "2"
  local t = {ind .. "//@ilp", ind .. "float " .. acc2 .. " = 0.0f;", ind .. "int $c = threadIdx.x;",
             ind .. "for (; $c + $nt < " .. count .. "; $c += 2 * $nt) {"}
  for _, l in ipairs(add("$c", acc)) do t[#t + 1] = ind .. "  " .. l end
  for _, l in ipairs(add("$c + $nt", acc2)) do t[#t + 1] = ind .. "  " .. l end
  t[#t + 1] = ind .. "}"
  local last = add("$c", acc)
  if #last == 1 then t[#t + 1] = ind .. "if ($c < " .. count .. ") " .. last[1]
  else
    t[#t + 1] = ind .. "if ($c < " .. count .. ") {"
    for _, l in ipairs(last) do t[#t + 1] = ind .. "  " .. l end
    t[#t + 1] = ind .. "}"
  end
  t[#t + 1] = ind .. acc .. " += " .. acc2 .. ";"
  return t
end

-- The row's values accumulated into acc: scalar, or float4 where the row is aligned.
-- scalar(idx, acc) and quad(idx, acc) give the statements for one value / one float4.
local function row_pass(ch, scalar, quad, acc, ilp)
  if ch.loads ~= "vec4" then return strided("cols", scalar, ilp, "  ", acc) end
  local t = {"  if ($vec) {"}
  append(t, strided("cols / 4", quad, ilp, "    ", acc))
  t[#t + 1] = "  } else {"
  append(t, strided("cols", scalar, ilp, "    ", acc))
  t[#t + 1] = "  }"
  return t
end

local function gen_sum_rows(ch, st)
  local t = reduce_helper(ch.reduce, "sum")
  append(t, {'extern "C" __global__ void sum_rows(const float *x, float *y, int rows, int cols) {',
             "  __shared__ float $part[" .. shared_size[ch.reduce] .. "];",
             "  //@row",
             "  const float *$inp = x + (long)blockIdx.x * cols;"})
  if ch.ilp == 2 then t[#t + 1] = "  int $nt = blockDim.x;" end
  t[#t + 1] = "  float $acc = 0.0f;"
  if ch.loads == "vec4" then
    append(t, {"  //@row_align", "  bool $vec = (cols & 3) == 0 && " .. aligned({"x"}) .. ";",
               "  const float4 *$in4 = reinterpret_cast<const float4 *>($inp);"})
  end
  t[#t + 1] = "  //@strided"
  append(t, row_pass(ch,
    function(idx, acc) return {acc .. " += $inp[" .. idx .. "];"} end,
    function(idx, acc) return {"{ float4 v = $in4[" .. idx .. "]; " .. acc .. " += (v.x + v.y) + (v.z + v.w); }"} end,
    "$acc", ch.ilp))
  append(t, {"  $acc = @blk(sum)($acc, $part);", "  if (threadIdx.x == 0) y[blockIdx.x] = $acc;", "}"})
  return fill(st, "common", lines(t))
end

---------------------------------------------------------------------------------------
-- softmax_rows
---------------------------------------------------------------------------------------

-- The (maximum, sum of exponentials) pair's merge and block reduction, for online softmax.
local function pair_helpers(style)
  local t = {"__device__ void @fn(merge)(float &m, float &s, float om, float os) {",
             "  float mx = fmaxf(m, om);",
             "  if (mx == $NINF) return;  // both empty",
             "  s = s * expf(m - mx) + os * expf(om - mx);",
             "  m = mx;", "}", ""}
  if style ~= "tree" then
    local shfl = style == "warp_xor" and "__shfl_xor_sync" or "__shfl_down_sync"
    append(t, {"__device__ void @wrp(ms)(float &m, float &s) {",
               "  for (int off = 16; off > 0; off >>= 1) {",
               "    float om = " .. shfl .. "(0xffffffff, m, off);",
               "    float os = " .. shfl .. "(0xffffffff, s, off);",
               "    @fn(merge)(m, s, om, os);", "  }", "}", ""})
  end
  t[#t + 1] = "__device__ void @blk(ms)(float &m, float &s, float *pm, float *ps) {"
  t[#t + 1] = "  //@" .. style
  if style == "tree" then
    append(t, {"  pm[threadIdx.x] = m;", "  ps[threadIdx.x] = s;", "  __syncthreads();",
               "  for (int half = blockDim.x / 2; half > 0; half >>= 1) {",
               "    if (threadIdx.x < half) {",
               "      float mm = pm[threadIdx.x], ss = ps[threadIdx.x];",
               "      @fn(merge)(mm, ss, pm[threadIdx.x + half], ps[threadIdx.x + half]);",
               "      pm[threadIdx.x] = mm;", "      ps[threadIdx.x] = ss;", "    }",
               "    __syncthreads();", "  }"})
  elseif style == "warp" then
    append(t, {"  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;",
               "  @wrp(ms)(m, s);",
               "  if (lane == 0) {", "    pm[warp] = m;", "    ps[warp] = s;", "  }", "  __syncthreads();",
               "  if (warp == 0) {",
               "    bool has = lane < (int)(blockDim.x >> 5);",
               "    m = has ? pm[lane] : $NINF;", "    s = has ? ps[lane] : 0.0f;",
               "    @wrp(ms)(m, s);",
               "    if (lane == 0) {", "      pm[0] = m;", "      ps[0] = s;", "    }", "  }",
               "  __syncthreads();"})
  else
    append(t, {"  @wrp(ms)(m, s);",
               "  if ((threadIdx.x & 31) == 0) {", "    pm[threadIdx.x >> 5] = m;", "    ps[threadIdx.x >> 5] = s;", "  }",
               "  __syncthreads();",
               "  float mm = pm[0], ss = ps[0];",
               "  for (int w = 1; w < (int)(blockDim.x >> 5); ++w) @fn(merge)(mm, ss, pm[w], ps[w]);",
               "  __syncthreads();",
               "  m = mm;", "  s = ss;", "}"})
    return t
  end
  append(t, {"  m = pm[0];", "  s = ps[0];", "  __syncthreads();", "}"})
  return t
end

local function gen_softmax_rows(ch, st)
  local t
  local n = shared_size[ch.reduce]
  if ch.pass == "online" then
    t = pair_helpers(ch.reduce)
    t[#t + 1] = ""
  else
    t = reduce_helper(ch.reduce, "max")
    append(t, reduce_helper(ch.reduce, "sum"))
  end
  append(t, {'extern "C" __global__ void softmax_rows(const float *x, float *y, int rows, int cols) {'})
  if ch.pass == "online" then
    append(t, {"  __shared__ float $part[" .. n .. "];", "  __shared__ float $tile[" .. n .. "];"})
  else
    t[#t + 1] = "  __shared__ float $part[" .. n .. "];"
  end
  append(t, {"  //@row", "  const float *$inp = x + (long)blockIdx.x * cols;",
             "  float *$outp = y + (long)blockIdx.x * cols;"})
  if ch.pass == "online" then
    append(t, {"  //@online", "  float $mx = $NINF, $acc = 0.0f;",
               "  for (int $c = threadIdx.x; $c < cols; $c += blockDim.x) {",
               "    float v = $inp[$c];",
               "    if (v > $mx) {", "      $acc = $acc * expf($mx - v) + 1.0f;", "      $mx = v;",
               "    } else {", "      $acc += expf(v - $mx);", "    }", "  }",
               "  @blk(ms)($mx, $acc, $part, $tile);"})
  else
    append(t, {"  //@max", "  float $mx = $NINF;",
               "  for (int $c = threadIdx.x; $c < cols; $c += blockDim.x) $mx = fmaxf($mx, $inp[$c]);",
               "  $mx = @blk(max)($mx, $part);", "  float $acc = 0.0f;"})
    if ch.pass == "stash" then
      append(t, {"  //@stash", "  for (int $c = threadIdx.x; $c < cols; $c += blockDim.x) {",
                 "    float v = expf($inp[$c] - $mx);", "    $outp[$c] = v;", "    $acc += v;", "  }"})
    else
      t[#t + 1] = "  for (int $c = threadIdx.x; $c < cols; $c += blockDim.x) $acc += expf($inp[$c] - $mx);"
    end
    t[#t + 1] = "  $acc = @blk(sum)($acc, $part);"
  end
  append(t, {"  //@recip", "  float $inv = 1.0f / $acc;"})
  if ch.pass == "stash" then
    t[#t + 1] = "  for (int $c = threadIdx.x; $c < cols; $c += blockDim.x) $outp[$c] *= $inv;"
  else
    t[#t + 1] = "  for (int $c = threadIdx.x; $c < cols; $c += blockDim.x) $outp[$c] = expf($inp[$c] - $mx) * $inv;"
  end
  t[#t + 1] = "}"
  return fill(st, "common", lines(t))
end

---------------------------------------------------------------------------------------
-- layernorm_rows
---------------------------------------------------------------------------------------

-- Welford's update, merge and block reduction (xor shuffles, then per-warp slots).
local function welford_helpers()
  return {
    "__device__ void @fn(push)(float v, float &n, float &mean, float &m2) {",
    "  n += 1.0f;", "  float d = v - mean;", "  mean += d / n;", "  m2 += d * (v - mean);", "}", "",
    "__device__ void @fn(merge)(float &n, float &mean, float &m2, float nb, float mb, float qb) {",
    "  float nn = n + nb;", "  if (nn == 0.0f) return;", "  float d = mb - mean;", "  float w = nb / nn;",
    "  mean += d * w;", "  m2 += qb + d * d * n * w;", "  n = nn;", "}", "",
    "__device__ void @blk(stats)(float &n, float &mean, float &m2, float *sn, float *sm, float *sq) {",
    "  for (int off = 16; off > 0; off >>= 1) {",
    "    float nb = __shfl_xor_sync(0xffffffff, n, off);",
    "    float mb = __shfl_xor_sync(0xffffffff, mean, off);",
    "    float qb = __shfl_xor_sync(0xffffffff, m2, off);",
    "    @fn(merge)(n, mean, m2, nb, mb, qb);", "  }",
    "  if ((threadIdx.x & 31) == 0) {",
    "    sn[threadIdx.x >> 5] = n;", "    sm[threadIdx.x >> 5] = mean;", "    sq[threadIdx.x >> 5] = m2;", "  }",
    "  __syncthreads();",
    "  n = sn[0];", "  mean = sm[0];", "  m2 = sq[0];",
    "  for (int w = 1; w < (int)(blockDim.x >> 5); ++w) @fn(merge)(n, mean, m2, sn[w], sm[w], sq[w]);",
    "  __syncthreads();", "}", "",
  }
end

local function gen_layernorm_rows(ch, st)
  local welford = ch.stats == "welford"
  local t = welford and welford_helpers() or reduce_helper(ch.reduce, "sum")
  local vec = ch.loads == "vec4"
  append(t, {'extern "C" __global__ void layernorm_rows(const float *x, const float *gamma, const float *beta, '
             .. 'float *y, int rows, int cols) {'})
  if welford then
    append(t, {"  __shared__ float $part[32];", "  __shared__ float $tile[32];", "  __shared__ float $total[32];"})
  else
    t[#t + 1] = "  __shared__ float $part[" .. shared_size[ch.reduce] .. "];"
  end
  append(t, {"  //@row", "  const float *$inp = x + (long)blockIdx.x * cols;",
             "  float *$outp = y + (long)blockIdx.x * cols;"})
  if vec then
    append(t, {"  //@row_align", "  bool $vec = (cols & 3) == 0 && " .. aligned({"x", "gamma", "beta", "y"}) .. ";",
               "  const float4 *$in4 = reinterpret_cast<const float4 *>($inp);"})
  end
  local function each(fn) return function(idx, acc)
    local out = {"float4 v = $in4[" .. idx .. "];"}
    for _, f in ipairs({"x", "y", "z", "w"}) do append(out, fn("v." .. f, acc)) end
    return out
  end end
  local function pass(fn)  -- fn(value, acc) -> statements
    return row_pass(ch, function(idx, acc) return fn("$inp[" .. idx .. "]", acc) end, each(fn), "$acc", 1)
  end
  if welford then
    append(t, {"  //@welford", "  float $cnt = 0.0f, $mean = 0.0f, $sq = 0.0f;"})
    append(t, pass(function(v) return {"@fn(push)(" .. v .. ", $cnt, $mean, $sq);"} end))
    append(t, {"  @blk(stats)($cnt, $mean, $sq, $part, $tile, $total);",
               "  float $inv = rsqrtf($sq / cols + 1e-5f);"})
  elseif ch.stats == "two_pass" then
    append(t, {"  //@mean", "  float $acc = 0.0f;"})
    append(t, pass(function(v, acc) return {acc .. " += " .. v .. ";"} end))
    append(t, {"  float $mean = @blk(sum)($acc, $part) / cols;", "  //@var", "  float $sq = 0.0f;"})
    append(t, (row_pass(ch,
      function(idx) return {"float d = $inp[" .. idx .. "] - $mean;", "$sq += d * d;"} end,
      function(idx)
        local out = {"float4 v = $in4[" .. idx .. "];"}
        for _, f in ipairs({"x", "y", "z", "w"}) do
          out[#out + 1] = "$sq += (v." .. f .. " - $mean) * (v." .. f .. " - $mean);"
        end
        return out
      end, "$sq", 1)))
    t[#t + 1] = "  float $inv = rsqrtf(@blk(sum)($sq, $part) / cols + 1e-5f);"
  else
    append(t, {"  //@sumsq", "  float $acc = 0.0f, $sq = 0.0f;"})
    append(t, pass(function(v, acc) return {acc .. " += " .. v .. ";", "$sq += " .. v .. " * " .. v .. ";"} end))
    append(t, {"  float $mean = @blk(sum)($acc, $part) / cols;",
               "  //@clamp",
               "  float $var = fmaxf(@blk(sum)($sq, $part) / cols - $mean * $mean, 0.0f);",
               "  float $inv = rsqrtf($var + 1e-5f);"})
  end
  t[#t + 1] = "  //@write"
  local norm = st.pick({"(%s - $mean) * $inv * %s + %s", "fmaf((%s - $mean) * $inv, %s, %s)"})
  local scalar_write = "for (int $c = threadIdx.x; $c < cols; $c += blockDim.x) $outp[$c] = "
    .. norm:format("$inp[$c]", "gamma[$c]", "beta[$c]") .. ";"
  if vec then
    append(t, {"  if ($vec) {",
               "    const float4 *g4 = reinterpret_cast<const float4 *>(gamma);",
               "    const float4 *bt4 = reinterpret_cast<const float4 *>(beta);",
               "    float4 *$out4 = reinterpret_cast<float4 *>($outp);",
               "    for (int $c = threadIdx.x; $c < cols / 4; $c += blockDim.x) {",
               "      float4 v = $in4[$c], g = g4[$c], bt = bt4[$c];",
               "      $out4[$c] = " .. lanes4(norm:format("v.%s", "g.%s", "bt.%s")) .. ";",
               "    }",
               "  } else {",
               "    " .. scalar_write,
               "  }"})
  else
    t[#t + 1] = "  " .. scalar_write
  end
  t[#t + 1] = "}"
  return fill(st, "common", lines(t))
end

---------------------------------------------------------------------------------------
-- transpose (blocks of 32 x 32 threads)
---------------------------------------------------------------------------------------

local function gen_transpose(ch, st)
  local P, rl = restrict_lines(ch, {{"x", true}, {"y", false}}, "  ")
  local t = {'extern "C" __global__ void transpose(const float *x, float *y, int rows, int cols) {'}
  local function rd(idx) return load(ch, P.x, idx) end
  if ch.form == "naive_read" or ch.form == "naive_write" then
    append(t, rl)
    if ch.form == "naive_read" then
      append(t, {"  //@naive_read", "  int $c = blockIdx.x * 32 + threadIdx.x;", "  int $r = blockIdx.y * 32 + threadIdx.y;"})
    else
      append(t, {"  //@naive_write", "  int $r = blockIdx.y * 32 + threadIdx.x;", "  int $c = blockIdx.x * 32 + threadIdx.y;"})
    end
    t[#t + 1] = "  if ($r < rows && $c < cols) " .. P.y .. "[(long)$c * rows + $r] = " .. rd("(long)$r * cols + $c") .. ";"
  else
    local width = ch.form == "tile_padded" and 33 or 32
    t[#t + 1] = "  //@tile"
    if width == 33 then t[#t + 1] = "  //@pad" end
    t[#t + 1] = "  __shared__ float $tile[32][" .. width .. "];"
    append(t, rl)
    append(t, {"  int $c = blockIdx.x * 32 + threadIdx.x;", "  int $r = blockIdx.y * 32 + threadIdx.y;",
               "  if ($r < rows && $c < cols) $tile[threadIdx.y][threadIdx.x] = " .. rd("(long)$r * cols + $c") .. ";",
               "  __syncthreads();", "  //@swap",
               "  int $ocol = blockIdx.y * 32 + threadIdx.x;", "  int $orow = blockIdx.x * 32 + threadIdx.y;",
               "  if ($orow < cols && $ocol < rows) " .. P.y .. "[(long)$orow * rows + $ocol] = $tile[threadIdx.x][threadIdx.y];"})
  end
  t[#t + 1] = "}"
  return fill(st, "common", lines(t))
end

---------------------------------------------------------------------------------------
-- matmul (blocks of 16 x 16 threads, one element of C each)
---------------------------------------------------------------------------------------

local function gen_matmul(ch, st)
  local t = {'extern "C" __global__ void matmul(const float *a, const float *b, float *c, int m, int n, int k) {'}
  if ch.form == "naive" then
    local P, rl = restrict_lines(ch, {{"a", true}, {"b", true}}, "  ")
    append(t, rl)
    append(t, {"  //@naive", "  int $col = blockIdx.x * blockDim.x + threadIdx.x;",
               "  int $row = blockIdx.y * blockDim.y + threadIdx.y;",
               "  if ($row < m && $col < n) {",
               "    const float *$arow = " .. P.a .. " + (long)$row * k;",
               "    float $acc = 0.0f;"})
    if ch.unroll == 4 then append(t, {"    //@unroll4", "#pragma unroll 4"}) end
    append(t, {"    for (int $p = 0; $p < k; ++$p) $acc = fmaf(" .. load(ch, "$arow", "$p") .. ", "
               .. load(ch, P.b, "(long)$p * n + $col") .. ", $acc);",
               "    c[(long)$row * n + $col] = $acc;", "  }", "}"})
    return fill(st, "matmul", lines(t))
  end
  local tk = ch.tile_k
  t[#t + 1] = "  //@tiled"
  if tk == 32 then t[#t + 1] = "  //@tile_k" end
  append(t, {"  __shared__ float $as[16][" .. tk .. "];", "  __shared__ float $bs[" .. tk .. "][16];",
             "  int $col = blockIdx.x * 16 + threadIdx.x;", "  int $row = blockIdx.y * 16 + threadIdx.y;",
             "  float $acc = 0.0f;",
             "  for (int $k0 = 0; $k0 < k; $k0 += " .. tk .. ") {"})
  if tk == 16 then
    append(t, {"    int ka = $k0 + threadIdx.x, kb = $k0 + threadIdx.y;",
               "    $as[threadIdx.y][threadIdx.x] = ($row < m && ka < k) ? a[(long)$row * k + ka] : 0.0f;",
               "    $bs[threadIdx.y][threadIdx.x] = (kb < k && $col < n) ? b[(long)kb * n + $col] : 0.0f;"})
  else
    append(t, {"    for (int $q = threadIdx.x; $q < 32; $q += 16) {",
               "      int ka = $k0 + $q;",
               "      $as[threadIdx.y][$q] = ($row < m && ka < k) ? a[(long)$row * k + ka] : 0.0f;",
               "    }",
               "    for (int $q = threadIdx.y; $q < 32; $q += 16) {",
               "      int kb = $k0 + $q;",
               "      $bs[$q][threadIdx.x] = (kb < k && $col < n) ? b[(long)kb * n + $col] : 0.0f;",
               "    }"})
  end
  t[#t + 1] = "    __syncthreads();"
  if ch.unroll then append(t, {"    //@unroll", "#pragma unroll"}) end
  append(t, {"    for (int $p = 0; $p < " .. tk .. "; ++$p) $acc = fmaf($as[threadIdx.y][$p], $bs[$p][threadIdx.x], $acc);",
             "    __syncthreads();", "  }",
             "  if ($row < m && $col < n) c[(long)$row * n + $col] = $acc;", "}"})
  return fill(st, "matmul", lines(t))
end

---------------------------------------------------------------------------------------
-- Variants
---------------------------------------------------------------------------------------

local function product(axes)
  local out = {{}}
  for _, axis in ipairs(axes) do
    local nxt = {}
    for _, base in ipairs(out) do
      for _, v in ipairs(axis[2]) do
        local c = {}
        for k, x in pairs(base) do c[k] = x end
        c[axis[1]] = v
        nxt[#nxt + 1] = c
      end
    end
    out = nxt
  end
  return out
end

-- Each task: its generator, its choice axes (in the order the variant text names them)
-- and the combinations that make sense.
local tasks = {
  vector_add = {gen = gen_vector_add, order = {"form", "loads"},
                list = function() return product({{"form", {"indexed", "grid_stride", "vec4"}}, {"loads", {"plain", "ldg"}}}) end},
  relu_bias = {gen = gen_relu_bias, order = {"form", "loads"},
               list = function() return product({{"form", {"indexed", "grid_stride", "vec4"}}, {"loads", {"plain", "ldg"}}}) end},
  sum_rows = {gen = gen_sum_rows, order = {"reduce", "loads", "ilp"},
              list = function()
                return product({{"reduce", {"tree", "tree_warp", "warp", "warp_xor"}}, {"loads", {"scalar", "vec4"}},
                                {"ilp", {1, 2}}})
              end},
  softmax_rows = {gen = gen_softmax_rows, order = {"reduce", "pass"},
                  list = function() return product({{"reduce", {"tree", "warp", "warp_xor"}}, {"pass", {"three", "stash", "online"}}}) end},
  layernorm_rows = {gen = gen_layernorm_rows, order = {"stats", "reduce", "loads"},
                    list = function()
                      local out = product({{"stats", {"two_pass", "sumsq"}}, {"reduce", {"tree", "warp", "warp_xor"}},
                                           {"loads", {"scalar", "vec4"}}})
                      append(out, product({{"stats", {"welford"}}, {"loads", {"scalar", "vec4"}}}))
                      return out
                    end},
  transpose = {gen = gen_transpose, order = {"form", "loads"},
               list = function()
                 return product({{"form", {"naive_read", "naive_write", "tile", "tile_padded"}}, {"loads", {"plain", "ldg"}}})
               end},
  matmul = {gen = gen_matmul, order = {"form", "loads", "tile_k", "unroll"},
            list = function()
              local out = product({{"form", {"naive"}}, {"loads", {"plain", "ldg"}}, {"unroll", {1, 4}}})
              append(out, product({{"form", {"tiled"}}, {"tile_k", {16, 32}}, {"unroll", {false, true}}}))
              return out
            end},
}

local function task_of(name)
  local T = tasks[name]
  if not T then
    error(string.format("kernelgen.cuda: task '%s' is not covered (covered: %s)", tostring(name),
                        table.concat(M.tasks, ", ")), 3)
  end
  return T
end

local function variant_text(T, ch)
  local out = {}
  for _, k in ipairs(T.order) do
    if ch[k] ~= nil then out[#out + 1] = k .. "=" .. tostring(ch[k]) end
  end
  return table.concat(out, ", ")
end

-- Every combination of choices of a task (the variants), in a fixed order.
function M.choices(name) return task_of(name).list() end

local function make(name, ch, st)
  local T = task_of(name)
  return {code = T.gen(ch, st), task = name, variant = variant_text(T, ch)}
end

-- A kernel of a drawn variant in a drawn style: {code, task, variant}.
function M.kernel(rng, name)
  local list = task_of(name).list()
  local ch = list[rng:int(1, #list)]
  return make(name, ch, draw_style(rng, false))
end

-- Every variant once, in the plain style (first names, comments on): {code, task, variant}.
function M.variants(name)
  local out = {}
  for i, ch in ipairs(task_of(name).list()) do out[i] = make(name, ch, draw_style(nil, true)) end
  return out
end

---------------------------------------------------------------------------------------
-- Examples and corpora
---------------------------------------------------------------------------------------

local lead_ins = {"Here is the kernel:", "Here is a fast kernel:", "The kernel:", "Here is the code:"}

-- The answer in the format prompts.cuda_write asks for: one ```cuda block, at times after
-- a lead-in line.
function M.completion(rng, code)
  local lead = rng:chance(0.4) and (rng:pick(lead_ins) .. "\n\n") or ""
  return lead .. "```cuda\n" .. code:gsub("%s+$", "") .. "\n```"
end

-- opts: task (a covered name; default drawn), gpu (default drawn from M.gpus), size (a
-- size name; default drawn between the spec's train and test sizes), check (false: emit
-- an example that holds an item of the held-out split; else it is refused, named).
function M.example(rng, opts)
  opts = opts or {}
  local name = opts.task or rng:pick(M.tasks)
  task_of(name)
  local spec = cuda_tasks.get(name)
  local gpu = opts.gpu or rng:pick(M.gpus)
  local size = opts.size or rng:pick({"train", "test"})
  local k = M.kernel(rng, name)
  local ex = {messages = prompts.cuda_write(spec, cuda_tasks.resolve(spec, size), gpu),
              completion = M.completion(rng, k.code), task = name, variant = k.variant, size = size, gpu = gpu,
              kind = "cuda_write", code = k.code}
  if opts.check ~= false then
    split.check({task = "cuda:" .. name, size = size, messages = ex.messages, completion = ex.completion},
                "kernelgen.cuda.example")
  end
  return ex
end

-- n examples going round the covered tasks (or opts.tasks), each task's in turn.
-- opts: seed (1), gpus (the GPU names prompts draw from; M.gpus), check (example's).
function M.corpus(n, opts)
  opts = opts or {}
  if math.type(n) ~= "integer" or n < 0 then error("kernelgen.cuda.corpus: n must be a non-negative integer", 2) end
  local names = opts.tasks or M.tasks
  for _, name in ipairs(names) do task_of(name) end
  local gpus = opts.gpus or M.gpus
  if #gpus == 0 then error("kernelgen.cuda.corpus: gpus must name at least one GPU", 2) end
  local rng = rng_of(opts.seed or 1)
  local out = {}
  for idx = 1, n do
    out[idx] = M.example(rng, {task = names[(idx - 1) % #names + 1], gpu = rng:pick(gpus), check = opts.check})
  end
  return out
end

return M
