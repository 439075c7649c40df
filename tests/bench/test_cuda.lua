-- CUDA kernels: what this machine offers, and NVRTC's in-memory compile. A machine
-- without a GPU, its driver or NVRTC says so and why, and a compile there is "unavailable"
-- with the same reason; on the GPU node (ENGINE_EXPECT_CUDA=1, set by the device
-- scripts) the GPU is found and kernels compile, fail with NVRTC's diagnostics, or miss
-- an entry. Both are this machine's right outcome; neither is skipped.
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

t.test("bad arguments name the problem", function()
  t.raises(function() bench.cuda_compile({}) end, "bench.cuda_compile")
  t.raises(function() bench.cuda_compile(add, {entry = "add"}) end, "unknown option 'entry'")
  t.raises(function() bench.cuda_compile(add, {timeout = 0}) end, "timeout must be more than 0")
end)

t.run()
