-- CUDA kernels: what this machine offers, and NVRTC's in-memory compile. A machine
-- without a GPU, its driver or NVRTC says so and why, and a compile there is "unavailable"
-- with the same reason; on the GPU node (ENGINE_EXPECT_CUDA=1, set by the device
-- scripts) the GPU is found and kernels compile, fail with NVRTC's diagnostics, or miss
-- an entry, and run on inputs the evaluation process draws fresh for every call, timed
-- by events, their outputs NaN until written, every call's outputs read back. What a CUDA
-- child prints (a kernel's printf) is kept in the record, bounded, and reaches no console, on
-- every machine. Both are this machine's right outcome; neither is skipped.
local t = require "engine.test"

local add = [[
extern "C" __global__ void add(const float *x, const float *y, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + y[i];
}
]]

local info = bench.cuda()
local expected = os.getenv("ENGINE_EXPECT_CUDA") == "1"

t.test("the machine says whether CUDA kernels can run here, and why not", function()
  t.eq(type(info.available), "boolean")
  if expected then t.ok(info.available, "ENGINE_EXPECT_CUDA=1, yet: " .. tostring(info.reason)) end
  if info.available then
    t.eq(info.reason, "")
    t.ok(info.device ~= "", "a device name")
    t.ok(info.capability:match("^%d+%.%d+$"), info.capability)
    t.eq(info.sm, "sm_" .. info.capability:gsub("%.", ""))
    t.ok(info.driver_version > 0 and info.nvrtc:match("^%d+%.%d+$"), info.nvrtc)
  else
    t.ok(info.reason:find("libcuda") or info.reason:find("GPU") or info.reason:find("NVRTC")
         or info.reason:find("driver"), info.reason)
  end
end)

if not info.available then
  t.test("without CUDA, a compile is unavailable and says why", function()
    local r = bench.cuda_compile(add, {entries = {"add"}})
    t.eq({r.status, r.log, r.cubin_bytes}, {"unavailable", info.reason, 0})
  end)
else
  t.test("a kernel compiles in memory for this GPU and its entry is found", function()
    local r = bench.cuda_compile(add, {entries = {"add"}})
    t.eq(r.status, "ok", r.log)
    t.eq(r.arch, info.sm)
    t.ok(r.cubin_bytes > 0 and r.compile_ms > 0)
    t.eq(r.entries, {"add"})
  end)

  t.test("NVRTC's diagnostics name the line; a missing entry is named", function()
    local broken = add:gsub("out%[i%] = x%[i%] %+ y%[i%];", "out[i] = x[i] + ;")
    local r = bench.cuda_compile(broken, {entries = {"add"}})
    t.eq(r.status, "compile_error")
    t.contains(r.log, "kernel.cu(3)")
    local missing = bench.cuda_compile(add, {entries = {"add", "scale"}})
    t.eq(missing.status, "load_error")
    t.contains(missing.log, "no extern \"C\" __global__ function scale")
  end)
end

-- Runs `script` in another engine process (this one's program: the shell's parent), its
-- stdout and stderr together as the console would show them.
local function console_of(script)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  f:write(script)
  f:close()
  local p = assert(io.popen('"$(readlink /proc/$PPID/exe)" ' .. path .. " 2>&1"))
  local out = p:read("a")
  p:close()
  os.remove(path)
  return out
end

local N = 1000
local function add_launch(extra)
  local l = {entry = "add", grid = {(N + 255) // 256}, block = {256},
             args = {{input = "f32", count = N}, {input = "f32", count = N}, {output = "f32", count = N}, {int = N}},
             warmup = 1, calls = 4}
  for k, v in pairs(extra or {}) do l[k] = v end
  return l
end

-- The positions where out differs from x + y of the run's verified call (NaN never equals).
local function wrong_sums(r)
  local x, y = r.inputs[1], r.inputs[2]
  local wrong = 0
  for i = 1, N do
    local got = r.outputs[1][i]
    if got ~= got or math.abs(got - (x[i] + y[i])) > 1e-6 then wrong = wrong + 1 end
  end
  return wrong
end

if not info.available then
  t.test("without CUDA, a run is unavailable and says why", function()
    local r = bench.cuda_run(add, add_launch())
    t.eq({r.status, r.log}, {"unavailable", info.reason})
    t.eq({r.times_ms, r.inputs}, {nil, nil})
    -- the inputs the evaluation process had ready to send are dropped, nothing waits
    local big = bench.cuda_run(add, add_launch{args = {{input = "f32", count = 1 << 22}, {output = "f32", count = 4}}})
    t.eq(big.status, "unavailable")
  end)
else
  t.test("a kernel runs on fresh inputs, its events timed per call, its output read", function()
    local r = bench.cuda_run(add, add_launch())
    t.eq(r.status, "ok", r.log)
    t.eq(#r.times_ms, 4)
    t.eq(#r.wall_ms, 4)
    t.eq({r.checked_calls, r.checked_per_call}, {5, N})  -- every call's outputs, warm-up's too
    t.eq({r.call_outputs, r.input_key}, {nil, nil})       -- the judge's, not a script's
    t.eq({r.kernel_output, r.kernel_output_bytes}, {"", 0})
    for i, ms in ipairs(r.times_ms) do t.ok(ms > 0 and ms <= r.wall_ms[i], ms .. " ms in " .. r.wall_ms[i]) end
    t.ok(r.median_ms > 0)
    t.eq({#r.inputs, #r.inputs[1], #r.inputs[2]}, {2, N, N})
    t.eq(wrong_sums(r), 0)
    -- where its time went: each phase inside the one that holds it
    local inside = r.start_ms + r.compile_ms + r.load_ms + r.calls_ms
    t.ok(r.start_ms > 0 and r.load_ms > 0 and r.calls_ms > 0, json.encode({r.start_ms, r.load_ms, r.calls_ms}))
    t.ok(inside <= r.child_ms and r.child_ms <= r.request_ms, json.encode({inside, r.child_ms, r.request_ms}))
  end)

  t.test("inputs differ between runs under a key no one holds, and repeat under a seed", function()
    local a, b = bench.cuda_run(add, add_launch()), bench.cuda_run(add, add_launch())
    t.ne(a.inputs[1][1], b.inputs[1][1])
    t.ne(a.inputs[1][1], a.inputs[2][1])
    for _, v in ipairs(a.inputs[1]) do t.ok(v >= -1 and v < 1, v) end
    local s1, s2 = bench.cuda_run(add, add_launch{seed = 5}), bench.cuda_run(add, add_launch{seed = 5})
    t.eq(s1.inputs[1][1], s2.inputs[1][1])
    t.eq(s1.inputs[2][N], s2.inputs[2][N])
    local other = bench.cuda_run(add, add_launch{seed = 5, calls = 5})  -- the verified call is another
    t.ne(other.inputs[1][1], s1.inputs[1][1])
  end)

  t.test("outputs the kernel leaves unwritten read NaN; work skipped after the first call shows", function()
    local half = add:gsub("if %(i < n%)", "if (i < n / 2)")
    local r = bench.cuda_run(half, add_launch())
    t.eq(r.status, "ok", r.log)
    t.eq(wrong_sums(r), N - N // 2)
    local once = [[
__device__ int done;
extern "C" __global__ void add(const float *x, const float *y, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (done) return;
  if (i < n) out[i] = x[i] + y[i];
  __syncthreads();
  if (i == 0) done = 1;
}
]]
    local skipped = bench.cuda_run(once, add_launch())
    t.eq(skipped.status, "ok", skipped.log)
    t.ok(wrong_sums(skipped) > 0, "a kernel that stops working after its first calls")
  end)

  -- A kernel's device printf: the driver writes it on the CUDA child's stdout, which the
  -- evaluation process captures; a forged verdict line stays in the record.
  local forged = [[
extern "C" __global__ void add(const float *x, const float *y, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) printf("FORGED: add ok, verified, 99999 GB/s\n");
  if (i < n) out[i] = x[i] + y[i];
}
]]
  local flood = [[
extern "C" __global__ void add(const float *x, const float *y, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { printf("FLOOD %d of %d\n", i, n); out[i] = x[i] + y[i]; }
}
]]

  t.test("hostile: a kernel's printf is kept in its record, bounded, and reaches no console", function()
    local r = bench.cuda_run(forged, add_launch())
    t.eq(r.status, "ok", r.log)
    t.eq(wrong_sums(r), 0)
    t.contains(r.kernel_output, "FORGED: add ok, verified, 99999 GB/s\n")
    t.eq(r.kernel_output_bytes, #r.kernel_output)
    t.eq(r.log:find("FORGED", 1, true), nil)
    -- a printf from every thread of every call: the device's buffer bounds it, 4 KiB kept
    local loud = bench.cuda_run(flood, add_launch())
    t.eq(loud.status, "ok", loud.log)
    t.eq(#loud.kernel_output, 4096)
    t.ok(loud.kernel_output_bytes > 4096, loud.kernel_output_bytes)
    t.ok(loud.kernel_output_bytes <= 5 * 64 * 1024, "the device's printf buffer, 64 KiB a call")
    local out = console_of(string.format([[
local launch = %s
local a = bench.cuda_run(%q, launch)
local b = bench.cuda_run(%q, launch)
print("statuses " .. a.status .. " " .. b.status .. ", kept " .. #a.kernel_output .. " and " .. #b.kernel_output)
]], "{entry = 'add', grid = {4}, block = {256}, args = {{input = 'f32', count = 1000}, {input = 'f32', count = 1000}, " ..
    "{output = 'f32', count = 1000}, {int = 1000}}}", forged, flood))
    -- the forged line once per call (this launch's calls are its own), the flood cut at 4 KiB
    local kept = tonumber(out:match("statuses ok ok, kept (%d+) and 4096"))
    local line = #"FORGED: add ok, verified, 99999 GB/s\n"
    t.ok(kept and kept > 0 and kept % line == 0, out)
    t.eq(out:find("FORGED", 1, true), nil, out)
    t.eq(out:find("FLOOD", 1, true), nil, "the flood reaches no console")
  end)

  t.test("a kernel that prints nothing has an empty kernel_output (the honest twin)", function()
    local r = bench.cuda_run(add, add_launch())
    t.eq({r.status, r.kernel_output, r.kernel_output_bytes}, {"ok", "", 0})
  end)

  t.test("a faulting kernel and a launch the GPU refuses are named", function()
    local fault = add:gsub("out%[i%] = x%[i%] %+ y%[i%];", "out[i + (1 << 28)] = x[i];")
    local r = bench.cuda_run(fault, add_launch())
    t.eq(r.status, "runtime_error")
    t.contains(r.log, "the kernel failed in call 1")
    local refused = bench.cuda_run(add, add_launch{shared_bytes = 200000})
    t.eq(refused.status, "launch_error")
    t.contains(refused.log, "launching add")
    local missing = bench.cuda_run(add, add_launch{entry = "scale"})
    t.eq(missing.status, "load_error")
  end)
end

t.test("a malformed launch names the problem before any process is asked", function()
  t.raises(function() bench.cuda_run(add, add_launch{grid = {0}}) end, "grid[1] must be an integer from 1")
  t.raises(function() bench.cuda_run(add, add_launch{block = {64, 64}}) end, "at most 1024 threads")
  t.raises(function() bench.cuda_run(add, add_launch{args = {{input = "f64", count = 4}}}) end, "\"f32\"")
  t.raises(function() bench.cuda_run(add, add_launch{args = {{input = "f32", count = 4}}}) end, "no output buffer")
  t.raises(function() bench.cuda_run(add, add_launch{grids = {1}}) end, "unknown launch field 'grids'")
  t.raises(function() bench.cuda_run(add, add_launch{entry = ""}) end, "needs entry")
  t.raises(function() bench.cuda_run(add, add_launch{timeout = 0}) end, "timeout must be more than 0")
end)

t.test("bad arguments name the problem", function()
  t.raises(function() bench.cuda_compile({}) end, "bench.cuda_compile")
  t.raises(function() bench.cuda_compile(add, {entry = "add"}) end, "unknown option 'entry'")
  t.raises(function() bench.cuda_compile(add, {timeout = 0}) end, "timeout must be more than 0")
end)

t.test("what a CUDA child prints is kept in the record, bounded, and reaches no console", function()
  -- a line through stdio, one on stderr: both kept, made printable
  local r = bench.cuda_sandbox()
  t.contains(r.kernel_output, "cuda_sandbox: a line on the child's stdout\n")
  t.contains(r.kernel_output, "cuda_sandbox: a line on the child's stderr\n")
  t.eq(r.kernel_output_bytes, #r.kernel_output)
  -- more than a pipe holds: read while the child prints, the first 4 KiB kept, all counted
  local big = bench.cuda_sandbox{print_bytes = 200000}
  t.eq(#big.kernel_output, 4096)
  t.eq(big.kernel_output_bytes, 200000 + #r.kernel_output)
  t.eq(big.fork, "EPERM")
  t.raises(function() bench.cuda_sandbox{print_bytes = -1} end, "print_bytes must be from 0")
  t.raises(function() bench.cuda_sandbox{lines = 1} end, "unknown option 'lines'")
  -- the honest twin and the hostile one in an engine of their own: the console shows the
  -- script's own lines only
  local out = console_of([[
local quiet = bench.cuda_sandbox()
local loud = bench.cuda_sandbox{print_bytes = 100000}
print("kept " .. #quiet.kernel_output .. " and " .. #loud.kernel_output .. " of " .. loud.kernel_output_bytes)
]])
  t.contains(out, "kept " .. #r.kernel_output .. " and 4096 of " .. (100000 + #r.kernel_output))
  t.eq(out:find("cuda_sandbox: a line", 1, true), nil, out)
  t.eq(out:find("xxxxxxxx", 1, true), nil, "the 100000 bytes printed reach no console")
end)

t.test("the warm CUDA child answers many requests in one process; a timeout replaces it", function()
  -- without a GPU too: the warm child's protocol, confinement and output are the driver's
  -- business only in its runs, so sandbox requests show them on every machine
  local rs = bench.cuda_batch({{op = "cuda_sandbox"}, {op = "cuda_sandbox", print_bytes = 100}, {op = "cuda_sandbox"}})
  t.eq(#rs, 3)
  t.eq({rs[2].cuda_child, rs[3].cuda_child}, {rs[1].cuda_child, rs[1].cuda_child})
  t.eq(rs[1].fork, "EPERM")  -- confined as every CUDA child
  -- what each printed stays with its own record
  local base = rs[1].kernel_output_bytes
  t.ok(base > 0, "the probe's two lines")
  t.eq({rs[2].kernel_output_bytes, rs[3].kernel_output_bytes}, {base + 100, base})
  t.ok(rs[1].child_ms > 0 and rs[1].child_ms <= rs[1].request_ms, "child_ms within the request")
  -- kept between requests
  t.eq(bench.cuda_batch({{op = "cuda_sandbox"}})[1].cuda_child, rs[1].cuda_child)
  -- past its timeout: killed, what it printed before kept, and the next item in a fresh child
  local slow = bench.cuda_batch({{op = "cuda_sandbox", spin_ms = 5000}, {op = "cuda_sandbox"}}, {timeout = 0.5})
  t.eq(slow[1].status, "runtime_error")
  t.contains(slow[1].log, "took longer than")
  t.eq(slow[1].cuda_child, rs[1].cuda_child)
  t.eq(slow[2].cuda_child, rs[1].cuda_child + 1)
  t.eq(slow[2].kernel_output_bytes, base)
  -- released: the next request starts another
  bench.cuda_release()
  t.eq(bench.cuda_batch({{op = "cuda_sandbox"}})[1].cuda_child, slow[2].cuda_child + 1)
  -- malformed items name themselves before any process is asked
  t.raises(function() bench.cuda_batch({{op = "cuda_probe"}}) end, "item 1: op must be cuda_run or cuda_sandbox")
  t.raises(function() bench.cuda_batch({{op = "cuda_sandbox"}, {op = "cuda_run", launch = {}}}) end, "item 2: no source")
  t.raises(function() bench.cuda_batch({{op = "cuda_run", source = add, launch = {entry = "add"}}}) end, "item 1: ")
  t.raises(function() bench.cuda_batch({}, {timeout = 0}) end, "timeout must be more than 0")
  t.eq(#bench.cuda_batch({}), 0)
end)

t.test("a CUDA request's child refuses processes, programs, the network and other processes", function()
  -- The filter is installed before the driver loads, on every machine: what it refuses
  -- does not depend on a GPU. On the GPU node the tests above ran under it.
  local r = bench.cuda_sandbox()
  for _, call in ipairs{"fork", "execve", "socket_inet", "kill_parent", "ptrace_parent", "process_vm_readv",
                        "unshare"} do
    t.eq(r[call], "EPERM", call)
  end
  -- what the driver may need stays: its own signals, local sockets
  t.eq(r.kill_self, "allowed")
  t.eq(r.socket_unix, "allowed")
end)

t.run()
