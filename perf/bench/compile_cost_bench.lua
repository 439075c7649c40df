-- Where a kernel's compile goes, on the main job's own kernels: the default model samples
-- the main job's step (`--prompts` fixed prompts x `--G`, for each seed), and every
-- extracted kernel is compiled one after another in one process by kernelc (front end,
-- libgccjit, as, ld), by cc1 (`gcc -O3 -c -ftime-report`: its optimisation and code
-- generation apart from its parsing), and by kernelc again in a child engine with
-- KERNELC_TIME_REPORT=1 (libgccjit's passes, summed). Then one kernel's object is linked
-- both ways kernelc has linked (gcc's default libraries and start files; -nostdlib with
-- libgomp, libm and libgcc), alternately. The host's target flags throughout.
--
--   build/engine perf/bench/compile_cost_bench.lua [--seeds=3 --prompts=2 --G=16 --links=20]
local args = require "engine.args"
local extract = require "method.extract"
local prompts = require "method.prompts"
local read = require("core.outputs").read_text
local stats = require "core.stats"
local perf = dofile(engine.root .. "/perf/lib/perf.lua")

local opts = args.parse(arg, {
  description = "Where a kernel's compile goes (kernelc against cc1), on the main job's kernels",
  options = {
    {"seeds", 3, "steps sampled (seeds 1..N)", min = 1},
    perf.prompts(2),
    perf.G(16),
    perf.max_tokens(),
    {"links", 20, "links of one object each way", min = 1},
    perf.model(),
    {"compile_only", "", "(internal) compile every .c of this folder with kernelc and stop", type = "string"},
  },
})

local m = bench.machine()
local march = {}
for flag in m.march:gmatch("%S+") do march[#march + 1] = flag end

local function files_in(dir)
  local p = io.popen("ls " .. dir .. "/*.c 2>/dev/null")
  local list = {}
  for l in p:lines() do list[#list + 1] = l end
  p:close()
  return list
end
local function compile(src)
  return kernelc.compile_check(src, {opt = "O3", march = march, openmp = true})
end

if opts.compile_only ~= "" then
  for _, file in ipairs(files_in(opts.compile_only)) do
    io.stderr:write("FILE " .. file .. "\n")
    compile(read(file))
  end
  return
end

local median = stats.median
local function sum(xs)
  local s = 0
  for _, x in ipairs(xs) do s = s + x end
  return s
end

-- The kernels, as the main job samples and extracts them.
local work = os.tmpname()
os.remove(work)
assert(os.execute("mkdir -p " .. work))
local pol = policy.load(opts.model, {device = "cpu"})
local fixed = prompts.fixed_list({"matmul"}, {matmul = nil})
local files = {}
for seed = 1, opts.seeds do
  local texts = {}
  for i, p in ipairs(prompts.of_step(fixed, seed, opts.prompts)) do texts[i] = prompts.render(p.messages) end
  for _, g in ipairs(pol:sample(texts, {n = opts.G, temperature = 1.0, top_p = 1.0, max_tokens = opts.max_tokens,
                                        seed = seed})) do
    for _, c in ipairs(g) do
      local code = extract.kernel(c.text)
      if code then
        files[#files + 1] = string.format("%s/k%03d.c", work, #files + 1)
        local f = assert(io.open(files[#files], "w"))
        f:write(code)
        f:close()
      end
    end
  end
end
print(string.format("machine: %s, %d cores; target %s", m.model, m.cores, march[1] or "(none)"))
print(string.format("%d kernels extracted from %d steps of %d x %d completions (%s)", #files, opts.seeds,
                    opts.prompts, opts.G, opts.model))

-- kernelc, in this process.
local total, front, ok = {}, {}, {}
for _, file in ipairs(files) do
  local r = compile(read(file))
  if r.status == "ok" then
    total[#total + 1], front[#front + 1] = r.compile_ms, r.frontend_ms
    ok[file] = true
  end
end

-- A gcc -ftime-report's seconds (user) for one line, e.g. "phase opt and generate".
local function report_seconds(text, name)
  local s = 0
  for line in text:gmatch("[^\n]+") do
    local n, usr = line:match("^%s*(.-)%s+:%s+([%d.]+)%s+%(")
    if n == name then s = s + tonumber(usr) end
  end
  return s
end

-- cc1 on the same files (those kernelc compiled), object only.
local cc1, cc1_jt = {}, 0
local flags = table.concat(march, " ")
for _, file in ipairs(files) do
  if ok[file] then
    local p = io.popen(string.format("gcc -O3 %s -fopenmp -ffp-contract=fast -fPIC -c %s -o %s.o -ftime-report 2>&1",
                                     flags, file, file))
    local out = p:read("a")
    p:close()
    cc1[#cc1 + 1] = 1e3 * report_seconds(out, "phase opt and generate")
    cc1_jt = cc1_jt + report_seconds(out, "backwards jump threading")
  end
end

-- kernelc's passes, from a child engine with the time report on.
local p = io.popen(string.format("KERNELC_TIME_REPORT=1 %s %s --compile_only=%s 2>&1 >/dev/null", arg[-1], arg[0], work))
local reports = p:read("a")
p:close()
local by_file, current = {}, nil
for line in reports:gmatch("[^\n]+") do
  local file = line:match("^FILE (%S+)$")
  if file then
    current = file
    by_file[#by_file + 1] = {file = file, lines = {}}
  elseif current then
    table.insert(by_file[#by_file].lines, line)
  end
end
local jt, jt_masked, masked, opt_gen = 0, 0, 0, 0
for _, b in ipairs(by_file) do
  local file, report = b.file, table.concat(b.lines, "\n")
  local t = report_seconds(report, "backwards jump threading")
  jt = jt + t
  opt_gen = opt_gen + report_seconds(report, "phase opt and generate")
  if ok[file] and read(file):find("mask", 1, true) then
    jt_masked, masked = jt_masked + t, masked + 1
  end
end

print(string.format("\nkernelc, %d kernels that compile: a compile's median %.1f ms (mean %.1f), front end %.1f ms",
                    #total, median(total), sum(total) / #total, median(front)))
print(string.format("libgccjit's optimisation and code generation: %.2f s in all (%.1f ms a kernel)", opt_gen,
                    1e3 * opt_gen / #total))
print(string.format("cc1 -O3 on the same files, optimisation and code generation: median %.1f ms (mean %.1f), %.2f s in all",
                    median(cc1), sum(cc1) / #cc1, sum(cc1) / 1e3))
print(string.format("backwards jump threading: kernelc %.2f s, cc1 %.2f s; in kernelc, %.2f s of it in the %d kernels "
                    .. "that use masked loads or stores", jt, cc1_jt, jt_masked, masked))

-- One object linked both ways, alternately.
local object
for _, file in ipairs(files) do
  if ok[file] then object = file .. ".o" break end
end
assert(object, "no kernel compiled: nothing to link")
local ways = {
  {name = "gcc's defaults (start files, libc)", cmd = "gcc -shared -o %s.so %s -lgomp -lm"},
  {name = "-nostdlib -lgomp -lm -lgcc", cmd = "gcc -shared -nostdlib -o %s.so %s -lgomp -lm -lgcc"},
}
local times = {{}, {}}
for _ = 1, opts.links do
  for i, w in ipairs(ways) do
    local t0 = sys.now()
    assert(os.execute(string.format(w.cmd, work .. "/linked", object)))
    table.insert(times[i], (sys.now() - t0) * 1e3)
  end
end
print(string.format("\na link of %s, median of %d:", object:match("[^/]+$"), opts.links))
for i, w in ipairs(ways) do print(string.format("  %-36s %6.1f ms", w.name, median(times[i]))) end
os.execute("rm -rf " .. work)
