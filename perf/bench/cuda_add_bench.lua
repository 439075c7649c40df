-- A CUDA vector addition run by the harness (bench.cuda_run) at three sizes: the events'
-- median call, its CoV, the wall clock around the same calls, the bandwidth the median
-- implies (two reads and a write of 4 bytes an element) and NVRTC's compile time. On a
-- machine without CUDA it prints why and stops.
--   engine perf/bench/cuda_add_bench.lua
local src = [[
extern "C" __global__ void add(const float *x, const float *y, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + y[i];
}
]]
local info = bench.cuda()
print(json.encode(info))
if not info.available then return end
for _, n in ipairs{1000, 1 << 20, 1 << 24} do
  local l = {entry = "add", grid = {(n + 255) // 256}, block = {256},
             args = {{input = "f32", count = n}, {input = "f32", count = n}, {output = "f32", count = n}, {int = n}},
             warmup = 2, calls = 20}
  local r = bench.cuda_run(src, l)
  if r.status ~= "ok" then error("n = " .. n .. ": " .. r.status .. ": " .. r.log) end
  table.sort(r.wall_ms)
  print(string.format("n=%d status=%s events median %.4f ms cov %.3f  wall median %.4f ms  GB/s %.0f  compile %.1f ms",
                      n, r.status, r.median_ms, r.cov, r.wall_ms[#r.wall_ms // 2 + 1], 12 * n / r.median_ms / 1e6,
                      r.compile_ms))
end
