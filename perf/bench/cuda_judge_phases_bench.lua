-- Where a CUDA kernel's judgement goes: one task's straightforward kernel judged `--kernels`
-- times by the path Experiment 1 takes (bench.cuda_judge), and the medians of what each
-- record says of its time (docs/tasks.md, "CUDA kernels"): the driver and NVRTC started in
-- the child, NVRTC, the context and the module, the calls with their inputs and outputs, the
-- rest of the child's life (the fork, the sandbox, the exit), the request's way to the
-- evaluation process and back (the records' buffers included), every call's reference and
-- check in the engine, and the rest of the wall time; once at `--warmup` + `--calls` and
-- once at a single call, so what grows with the calls stands apart from what a kernel pays
-- once; each kernel judged by a fresh child and, in turn, by the evaluation process's warm
-- child (bench.cuda_judge_batch: the driver and the context made once for all), so the two
-- rows of a layout share the machine's noise. Before them, a bare child that only starts
-- the driver (bench.cuda), timed alike.
--   engine perf/bench/cuda_judge_phases_bench.lua [--task=softmax_rows] [--size=train]
--     [--kernels=8] [--warmup=1] [--calls=10]
local cuda_tasks = require("engine.cuda_tasks")
local opts = require("engine.args").parse(arg, {
  description = "a CUDA kernel's judgement split into its phases",
  options = {
    {"task", "softmax_rows", "the CUDA task whose straightforward kernel is judged"},
    {"size", "train", "the task's size", choices = {"test", "train", "heldout"}},
    {"kernels", 8, "judgements a layout", min = 1},
    {"warmup", 1, "warm-up calls an evaluation (Experiment 1's --warmup)", min = 0},
    {"calls", 10, "timed calls an evaluation (Experiment 1's --runs)", min = 1},
  },
})
local info = bench.cuda()
print(json.encode(info))
if not info.available then return end

local spec = cuda_tasks.get(opts.task)
local r = cuda_tasks.resolve(spec, opts.size)

local function median(xs)
  local s = {}
  for i, x in ipairs(xs) do s[i] = x end
  table.sort(s)
  local n = #s
  return n % 2 == 1 and s[(n + 1) // 2] or (s[n // 2] + s[n // 2 + 1]) / 2
end

local probes = {}
for i = 1, opts.kernels do
  local t0 = sys.now()
  bench.cuda()
  probes[i] = 1000 * (sys.now() - t0)
end

local size = {}
for k, v in pairs(r.size) do size[#size + 1] = k .. "=" .. v end
table.sort(size)
print(string.format("task %s at %s; %d judgements a layout; a bare child starting the driver: %.1f ms (median)",
                    spec.name, table.concat(size, ","), opts.kernels, median(probes)))
local columns = {"wall", "start", "compile", "load", "calls", "child rest", "request rest", "check", "wall rest"}
local line = "%-14s" .. string.rep(" %12s", #columns)
print(string.format(line, "calls", table.unpack(columns)))

local layouts = {{opts.warmup, opts.calls}}
if opts.warmup + opts.calls > 1 then layouts[2] = {0, 1} end
local judge = {reference = spec.reference, size = r.size, atol = r.atol, rtol = r.rtol}
local modes = {"fresh", "warm"}
for _, wc in ipairs(layouts) do
  local phases = {}
  for _, mode in ipairs(modes) do
    phases[mode] = {}
    for _, c in ipairs(columns) do phases[mode][c] = {} end
  end
  for i = 1, opts.kernels do
    for _, mode in ipairs(modes) do
      local launch = cuda_tasks.resolve(spec, opts.size).launch
      launch.warmup, launch.calls, launch.timeout = wc[1], wc[2], 120
      local t0 = sys.now()
      local rec = mode == "fresh" and bench.cuda_judge(spec.straightforward, launch, judge)
                  or bench.cuda_judge_batch({{source = spec.straightforward, launch = launch}}, judge)[1]
      local wall = 1000 * (sys.now() - t0)
      if rec.status ~= "ok" then
        error("the straightforward kernel (" .. mode .. "): " .. rec.status .. ": " .. tostring(rec.log), 0)
      end
      local got = {wall = wall, start = rec.start_ms, compile = rec.compile_ms, load = rec.load_ms,
                   calls = rec.calls_ms, check = rec.check_ms}
      got["child rest"] = rec.child_ms - rec.start_ms - rec.compile_ms - rec.load_ms - rec.calls_ms
      got["request rest"] = rec.request_ms - rec.child_ms
      got["wall rest"] = wall - rec.request_ms - rec.check_ms
      for _, c in ipairs(columns) do phases[mode][c][i] = got[c] end
    end
  end
  for _, mode in ipairs(modes) do
    local row = {}
    for j, c in ipairs(columns) do row[j] = string.format("%.1f", median(phases[mode][c])) end
    print(string.format(line, wc[1] .. " + " .. wc[2] .. " " .. mode, table.unpack(row)))
  end
  print(string.format("%-14s fresh over warm, median wall: %.2fx", "", median(phases.fresh.wall) / median(phases.warm.wall)))
end
