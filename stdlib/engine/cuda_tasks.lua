-- CUDA tasks: one Lua file per task (stdlib/cuda_tasks/*.lua), read and checked here,
-- resolved for a size into the launch bench.cuda_run takes, and judged against the
-- reference libtorch computes in the engine (bench.cuda_judge, bench.cuda_reference). docs/tasks.md,
-- "CUDA kernels", describes the fields; stdlib/cuda_tasks/vector_add.lua is the smallest.
--
--   local cuda_tasks = require("engine.cuda_tasks")
--   local rec = cuda_tasks.evaluate(src, {task = "softmax_rows", size = "test"})
--   rec.status, rec.median_ms, rec.max_error, rec.gbps
--   local y = cuda_tasks.yardstick("softmax_rows", "train")          -- libtorch's op, timed alike
--   cuda_tasks.evaluate(src, {task = "softmax_rows", size = "train", yardstick = y}).vs_yardstick
local tasks = require("engine.tasks")

local M = {}

local function default_dir()
  local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") or "."
  return here .. "/../cuda_tasks"
end

local known = {
  name = true, family = true, split = true, statement = true, signature = true, entry = true, sizes = true,
  args = true, launch = true, reference = true, tolerance = true, flops = true, bytes = true, roofline = true,
  straightforward = true,
}

local function need(cond, file, msg) if not cond then error(file .. ": " .. msg, 0) end end

local ops
-- The names of the reference ops (engine/cudaref), read once.
local function reference_ops()
  if not ops then
    ops = {}
    for _, line in ipairs(bench.cuda_reference()) do ops[line:match("^([%w_]+):")] = true end
  end
  return ops
end

-- A spec that is wrong is refused with its file and field named.
function M.check(spec, file)
  need(type(spec) == "table", file, "a CUDA task file returns a table")
  for k in pairs(spec) do need(known[k], file, "unknown field '" .. tostring(k) .. "'") end
  for _, k in ipairs{"name", "family", "split", "statement", "signature", "entry", "reference", "straightforward"} do
    need(type(spec[k]) == "string" and spec[k] ~= "", file, "needs " .. k .. " (a string)")
  end
  need(spec.split == "train" or spec.split == "heldout", file, "split must be \"train\" or \"heldout\"")
  need(spec.signature:find(spec.entry .. "(", 1, true), file, "the signature must declare the entry " .. spec.entry)
  need(type(spec.sizes) == "table" and type(spec.sizes.test) == "table", file, "needs sizes.test")
  need(type(spec.args) == "table" and #spec.args > 0, file, "needs args, a list")
  need(type(spec.launch) == "table" and spec.launch.grid and spec.launch.block, file, "needs launch = {grid, block}")
  need(type(spec.tolerance) == "table" and spec.tolerance.atol and type(spec.tolerance.why) == "string", file,
       "needs tolerance = {atol =, rtol =, why =}")
  need(spec.roofline == "memory" or spec.roofline == "compute", file, "roofline must be \"memory\" or \"compute\"")
  need(reference_ops()[spec.reference], file, "no reference op '" .. spec.reference .. "'")
  for name, size in pairs(spec.sizes) do M.resolve(spec, size, file .. ", size " .. name) end
  return spec
end

local cache

local function all()
  if cache then return cache end
  cache = {}
  local dir = default_dir()
  for _, f in ipairs(sys.listdir(dir)) do
    if f:match("%.lua$") then
      local path = dir .. "/" .. f
      local chunk, err = loadfile(path, "t", {})
      if not chunk then error(err, 0) end
      local spec = M.check(chunk(), path)
      need(spec.name .. ".lua" == f, path, "name must be the file's name")
      cache[spec.name] = spec
    end
  end
  return cache
end

-- Every task, by name.
function M.list()
  local out = {}
  for _, spec in pairs(all()) do out[#out + 1] = spec end
  table.sort(out, function(a, b) return a.name < b.name end)
  return out
end

function M.get(name)
  local spec = all()[name]
  if not spec then error("no CUDA task '" .. tostring(name) .. "'", 2) end
  return spec
end

-- The task at a size (a name of spec.sizes or a table of its variables): {size, launch (for
-- bench.cuda_run), atol, rtol, flops, bytes}.
function M.resolve(spec, size, where)
  where = where or spec.name
  if type(size) == "string" then
    local named = spec.sizes[size]
    if not named then error(where .. ": no size '" .. size .. "'", 0) end
    size = named
  end
  local function int(e, what) return tasks.integer_expr(e, size, where .. ": " .. what) end
  local launch = {entry = spec.entry, args = {}, grid = {}, block = {}}
  for i, e in ipairs(spec.launch.grid) do launch.grid[i] = int(e, "launch.grid[" .. i .. "]") end
  for i, e in ipairs(spec.launch.block) do launch.block[i] = int(e, "launch.block[" .. i .. "]") end
  if spec.launch.shared_bytes then launch.shared_bytes = int(spec.launch.shared_bytes, "launch.shared_bytes") end
  for i, a in ipairs(spec.args) do
    local what = "args[" .. i .. "]"
    local dtype = a.dtype or "f32"
    if dtype ~= "f32" and dtype ~= "bf16" then error(where .. ": " .. what .. ".dtype must be \"f32\" or \"bf16\"", 0) end
    if a.input then launch.args[i] = {input = dtype, count = int(a.count, what .. ".count")}
    elseif a.output then launch.args[i] = {output = dtype, count = int(a.count, what .. ".count")}
    elseif a.int then launch.args[i] = {int = int(a.int, what .. ".int")}
    else error(where .. ": " .. what .. " must be {input =, count =}, {output =, count =} or {int =}", 0) end
  end
  return {size = size, launch = launch, flops = tasks.evaluate_expr(spec.flops, size, where .. ": flops"),
          bytes = tasks.evaluate_expr(spec.bytes, size, where .. ": bytes"),
          atol = tasks.evaluate_expr(spec.tolerance.atol, size, where .. ": tolerance.atol"),
          rtol = tasks.evaluate_expr(spec.tolerance.rtol or 0, size, where .. ": tolerance.rtol")}
end

-- Tensor cores' bfloat16 rate over the single-precision peak the driver's attributes give
-- (bench.cuda()): 16 on an A100 (312 against 19.5 TFLOPS), 14.8 on an H100 SXM (989
-- against 67), by NVIDIA's data sheets. The driver tells neither tensor-core rate.
M.bf16_over_fp32 = 16

-- Whether a spec's buffers hold bfloat16 (its compute bound is the tensor cores').
function M.is_bf16(spec)
  for _, a in ipairs(spec.args) do if a.dtype == "bf16" then return true end end
  return false
end

-- Why a kernel's speed cannot be a measurement, or nil: more than 4 times the GPU's
-- nominal single-precision peak (bf16: M.bf16_over_fp32 times it) or DRAM bandwidth
-- (bench.cuda()'s peak_fp32_gflops and peak_gbps): the CPU harness's rule
-- (bench.impossible_rate), with the GPU's peaks.
function M.impossible(gflops, gbps, machine, bf16)
  local scale = bf16 and M.bf16_over_fp32 or 1
  return bench.impossible_rate(gflops, gbps, {
    gflops = (machine.peak_fp32_gflops or 0) * scale, gbps = machine.peak_gbps or 0,
    gflops_name = bf16 and "the GPU's estimated bfloat16 tensor-core peak" or "the GPU's single-precision peak",
    gbps_name = "the GPU's memory bandwidth"})
end

-- libtorch's op for the task at a size (a name or a table), on the GPU in single precision
-- and timed as the kernels are (bench.cuda_yardstick): its record, with the speed its
-- median call implies (gflops, gbps) when it ran. opts: warmup, calls, and bench (the
-- engine's bench module unless a test stands in for it).
function M.yardstick(name, size, opts)
  local spec = M.get(name)
  local r = M.resolve(spec, size or "test")
  opts = opts or {}
  local y = (opts.bench or bench).cuda_yardstick(spec.reference, r.size, {warmup = opts.warmup, calls = opts.calls})
  y.task, y.size = spec.name, r.size
  if y.status == "ok" then
    local seconds = y.median_ms / 1000
    y.gflops, y.gbps = r.flops / seconds / 1e9, r.bytes / seconds / 1e9
  end
  return y
end

local machines = setmetatable({}, {__mode = "k"})  -- bench.cuda() per bench module, read once
-- A kernel judged on the task: bench.cuda_judge's record (bench.cuda_run's, judged in the
-- engine against the reference libtorch computes from the run's inputs, every call's
-- outputs checked, not only the last's: status "verification_error" when an output misses
-- it, naming the call, max_error and wrong beside; kernel_output what it printed), then
-- "rejected" when its speed is impossible (M.impossible), with the speed by the median
-- call (gflops for a compute-bound task, gbps for a memory-bound one).
-- opts: task, size (default "test"), warmup, calls, seed, timeout, bench (as for
-- M.yardstick), machine (bench.cuda()'s record, when the caller holds it), and yardstick (a
-- record of M.yardstick at the same size: an ok kernel then gets vs_yardstick, the
-- yardstick's median call over its own, above 1 when faster than libtorch), warm (run by
-- the evaluation process's warm CUDA child, bench.cuda_judge_batch: the driver and the
-- context made once for many kernels, not per kernel).
function M.evaluate(source, opts)
  local spec = M.get(opts.task)
  local y = opts.yardstick
  if y and y.task ~= spec.name then
    error("the yardstick is " .. tostring(y.task) .. "'s, the kernel " .. spec.name .. "'s", 2)
  end
  local r = M.resolve(spec, opts.size or "test")
  if y then
    for k, v in pairs(r.size) do
      if y.size[k] ~= v then error("the yardstick ran at " .. k .. " = " .. tostring(y.size[k]) .. ", the kernel at " .. v, 2) end
    end
  end
  local launch = r.launch
  for _, k in ipairs{"warmup", "calls", "seed", "timeout"} do launch[k] = opts[k] end
  local b = opts.bench or bench
  local judge = {reference = spec.reference, size = r.size, atol = r.atol, rtol = r.rtol}
  local rec = opts.warm and b.cuda_judge_batch({{source = source, launch = launch}}, judge)[1]
              or b.cuda_judge(source, launch, judge)
  rec.task, rec.size = spec.name, r.size
  if rec.status ~= "ok" and rec.status ~= "verification_error" then return rec end
  local seconds = rec.median_ms / 1000
  rec.gflops = r.flops / seconds / 1e9
  rec.gbps = r.bytes / seconds / 1e9
  if rec.status ~= "ok" then return rec end
  local machine = opts.machine
  if not machine then
    machines[b] = machines[b] or b.cuda()
    machine = machines[b]
  end
  local impossible = M.impossible(rec.gflops, rec.gbps, machine, M.is_bf16(spec))
  if impossible then rec.status, rec.log = "rejected", impossible; return rec end
  if y and y.status == "ok" then rec.vs_yardstick = y.median_ms / rec.median_ms end
  return rec
end

return M
