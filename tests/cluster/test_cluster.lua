-- Benchmark workers over MPI, on this machine: `mpirun -np 3` gives one trainer (rank 0)
-- and two workers with a core each. The same kernels get the same statuses as in one
-- process; a worker killed mid-batch loses no kernel and counts none twice; nodes of
-- different kinds are refused unless allowed. Built without MPI, the engine refuses to
-- run as several processes.
local t = require "engine.test"
local exe = assert(os.getenv("ENGINE_TEST_EXE"), "ENGINE_TEST_EXE is not set")
local mpirun = os.getenv("MPIRUN") or ""
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")

local function sh(cmd)
  local pipe = io.popen(cmd .. " 2>&1")
  local text = pipe:read("a")
  return pipe:close(), text
end

-- mpirun as root, keeping the job when a rank dies, 3 processes on however many cores.
local function launch(apps)
  return string.format("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 %q --oversubscribe "
                       .. "--enable-recovery %s", mpirun, apps)
end

local function run_job(mode, job, apps)
  local dir = t.tmpdir()
  json.write(dir .. "/in.json", job)
  local trainer = string.format("-np 1 %q %q %s %q %q", exe, here .. "/job.lua", mode, dir .. "/in.json",
                                dir .. "/out.json")
  local ok, log = sh(launch(apps and (trainer .. " : " .. apps) or (trainer:gsub("^%-np 1", "-np 3"))))
  t.ok(ok, log)
  return json.read(dir .. "/out.json"), log
end

local honest = [[
void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {
  for (int i = 0; i < M * N; i++) C[i] = 0;
  for (int i = 0; i < M; i++)
    for (int k = 0; k < K; k++)
      for (int j = 0; j < N; j++) C[i * N + j] += A[i * K + k] * B[k * N + j];
}
]]

-- The fourth and fifth are the first's object code: a request runs such a kernel once.
local kernels = {
  {honest, "ok"},
  {honest:gsub("%+= A", "+= 2 * A"), "verification_error"},
  {"void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) { *(volatile int *)0 = 1; }",
   "runtime_error"},
  {honest .. "// again", "ok"},
  {honest .. "/* and again */", "ok"},
  {"void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) { C[0] = ; }", "compile_error"},
  {"#include <stdio.h>\n" .. honest:gsub("{\n", "{\n  puts(\"hi\");\n", 1), "library_violation"},
  {"void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) { for (;;) C[0] = 1; }",
   "timeout"},
  {honest:gsub("C%[i%] = 0", "C[i] = 1"), "verification_error"},
}

local function sources()
  local list = {}
  for i, k in ipairs(kernels) do list[i] = k[1] end
  return list
end

local small = {problem = {M = 64, N = 64, K = 64}, timeout = 2, runs = 1, max_runs = 1}

if mpirun == "" then
  t.test("built without MPI, the engine refuses to run as several processes", function()
    local ok, log = sh("OMPI_COMM_WORLD_SIZE=3 " .. string.format("%q -e 'print(1)'", exe))
    t.ok(not ok, log)
    t.contains(log, "built without MPI")
    t.eq(cluster.size(), 1)
    t.eq(cluster.mpi, false)
  end)
  t.run()
  return
end

t.test("a batch spread over two workers gets the statuses it gets in one process", function()
  local here_results = bench.evaluate_batch(sources(), small)
  local got = run_job("batch", {sources = sources(), options = small})
  t.eq(got.size, 3)
  t.eq(#got.workers, 2)
  local nodes = {}
  for i, r in ipairs(got.results) do
    t.eq(r.status, kernels[i][2], "kernel " .. i .. " through the workers")
    t.eq(here_results[i].status, kernels[i][2], "kernel " .. i .. " in one process")
    t.ok(r.node and r.node:match(":[12]$"), "measured by a worker: " .. tostring(r.node))
    nodes[r.node] = true
  end
  t.ok(#got.results == #kernels)
  -- Identical object code runs once per request, and the record names the batch's kernel
  -- that ran, wherever the request's part of the batch began.
  t.eq({here_results[4].same_code_as, here_results[5].same_code_as}, {0, 0})
  for i, r in ipairs(got.results) do
    if r.same_code_as then
      local ran = got.results[r.same_code_as + 1]
      t.ok(r.same_code_as + 1 < i and ran.same_code_as == nil, "kernel " .. i .. " shares with " .. r.same_code_as)
      t.eq(r.times, ran.times, "kernel " .. i .. " took the calls of kernel " .. r.same_code_as + 1)
    end
  end
  local n = 0
  for _ in pairs(nodes) do n = n + 1 end
  t.eq(n, 2, "both workers measured some")
  -- they split this machine's cores between them
  for _, w in ipairs(got.workers) do
    t.eq(w.cores, math.max(1, sys.cpu_count() // 2), "worker " .. w.rank .. "'s cores")
    t.ok(w.alive)
  end
  local after = got.workers_after_batch
  t.eq(after[1].kernels + after[2].kernels, #kernels, "each kernel counted once")
  -- OpenBLAS is measured where the kernels are
  t.eq(got.reference.status, "ok")
  t.ok(got.reference.node:match(":[12]$"), got.reference.node)
  -- its fastest thread count, searched on the worker's own share of the cores
  t.ok(got.reference.threads >= 1 and got.reference.threads <= got.workers[1].cores,
       "reference threads " .. got.reference.threads)
end)

-- Enough work that a kill after two seconds lands in the middle on any machine: 32 naive
-- kernels at 256^3, unoptimised, 9 calls each. Timed calls on a worker are one at a
-- time whatever its cores, so each worker has 16 x 9 single-threaded calls to make
-- (about 7 s on a 2-core EPYC, 4 s on a 16-core Xeon).
local function slow_batch()
  local list = {}
  for i = 1, 32 do list[i] = honest .. "// " .. i end
  return list, {problem = {M = 256, N = 256, K = 256}, opt = "O0", threads = 1, runs = 8, max_runs = 8}
end

t.test("a worker killed mid-batch loses no kernel and counts none twice", function()
  local srcs, opts = slow_batch()
  local got = run_job("kill", {sources = srcs, options = opts, victims = {2}, kill_after = 2})
  t.eq(got.error, nil)
  t.eq(#got.results, #srcs)
  local by_node = {}
  for i, r in ipairs(got.results) do
    t.eq(r.status, "ok", "kernel " .. i)
    by_node[r.node] = (by_node[r.node] or 0) + 1
  end
  local w1, w2 = got.workers[1], got.workers[2]
  t.ok(w1.alive and not w2.alive, "worker 2 is dropped")
  t.contains(w2.lost, "heartbeat")
  t.ok(w2.kernels < #srcs // 2, "worker 2 was killed before its share: " .. w2.kernels)
  t.eq(w1.kernels + w2.kernels, #srcs, "each kernel counted once")
  t.eq(by_node[w1.host .. ":1"], w1.kernels)
  t.eq(by_node[w2.host .. ":2"] or 0, w2.kernels)
end)

t.test("with every worker gone, the trainer evaluates the rest when allowed to mix nodes", function()
  local srcs, opts = slow_batch()
  local got = run_job("kill", {sources = srcs, options = opts, victims = {1, 2}, kill_after = 2,
                               mixed = true})
  t.eq(got.error, nil)
  t.eq(#got.results, #srcs)
  local here_count = 0
  for i, r in ipairs(got.results) do
    t.eq(r.status, "ok", "kernel " .. i)
    if r.node:match(":0$") then here_count = here_count + 1 end
  end
  t.ok(here_count > 0, "some kernels were evaluated by rank 0")
  t.eq(here_count + got.workers[1].kernels + got.workers[2].kernels, #srcs)
  -- without permission to mix, rank 0 (all cores) is not a worker's kind (a core)
  if sys.cpu_count() > 1 then
    got = run_job("kill", {sources = srcs, options = opts, victims = {1, 2}, kill_after = 2})
    t.contains(got.error, "not comparable")
  end
end)

t.test("workers of different kinds are refused unless mixed nodes are allowed", function()
  local worker = string.format("%q", exe)
  local got = run_job("mixed", {sources = sources(), options = small},
                      "-np 1 " .. worker .. " : -np 1 -x ENGINE_TARGET=x86-64-v2 " .. worker)
  t.contains(got.refused, "not comparable")
  t.contains(got.refused, "target x86-64-v2")
  for i, r in ipairs(got.results) do t.eq(r.status, kernels[i][2], "kernel " .. i) end
end)

-- The single process gets the cores a worker gets, so both measure on the same kind.
local share = math.max(1, sys.cpu_count() // 2)
local common = "--steps=2 --G=4 --prompts_per_step=1 --runs=1 --configs=lr=0 --seed=5"
local single_dir  -- the single process's run of `common`

t.test("experiment 1 through two workers records what one process records", function()
  local dir = t.tmpdir()
  single_dir = dir .. "/one"
  local ok, log = sh(string.format("taskset -c 0-%d %q experiment1.lua --out=%q %s", share - 1, exe,
                                   dir .. "/one", common))
  t.ok(ok, log)
  ok, log = sh(launch(string.format("-np 3 %q experiment1.lua --out=%q %s", exe, dir .. "/mpi", common)))
  t.ok(ok, log)
  local name = "/beta=0,lr=0,opt=O3"
  local one = store.open(dir .. "/one" .. name, {read_only = true})
  local mpi = store.open(dir .. "/mpi" .. name, {read_only = true})
  local a, b = one:samples{}, mpi:samples{}
  t.eq(#b, #a)
  t.eq(#a, 8)
  for i = 1, #a do
    t.eq(b[i].completion, a[i].completion, "sample " .. i .. ": the same kernel")
    t.eq(b[i].status, a[i].status, "sample " .. i .. ": the same status")
    t.ok(a[i].extra.node == nil, "one process: no node")
    if b[i].status ~= "format_violation" then
      t.ok(b[i].extra.node and b[i].extra.node:match(":[12]$"), "measured by a worker")
    end
  end
  -- the run says which machines measured it
  local nodes = mpi:get("nodes")
  t.eq(#nodes, 2)
  t.eq(mpi:get("machine").cores, share)
  t.eq(one:get("machine").cores, share)
  one:close()
  mpi:close()
end)

t.test("experiment 1 with --async=1: the worker evaluates while rank 0 samples on cores of its own", function()
  local dir = t.tmpdir()
  -- rank 0 on the cores the workers time on: refused before anything is made (mpirun
  -- --enable-recovery exits 0 whatever rank 0's status: the message tells)
  local ok, log = sh(launch(string.format("-np 3 %q experiment1.lua --out=%q %s --async=1", exe, dir .. "/shared",
                                          common)))
  t.contains(log, "a benchmark worker times kernels on this process's cores")
  t.ok(not sys.exists(dir .. "/shared"), "no run directory was made")
  -- rank 0 keeps `share` cores, the worker gets the others: the same kernels and statuses
  -- as the single process (lr = 0: the policy never changes, so sampling ahead is exact)
  local reserve = string.format("-x ENGINE_RANK0_CORES=%d --bind-to none -np 2", share)
  ok, log = sh(launch(string.format("%s %q experiment1.lua --out=%q %s --async=1", reserve, exe, dir .. "/async",
                                    common)))
  t.ok(ok, log)
  local name = "/beta=0,lr=0,opt=O3"
  local one = store.open(single_dir .. name, {read_only = true})
  local run = store.open(dir .. "/async" .. name, {read_only = true})
  local a, b = one:samples{}, run:samples{}
  t.eq(#b, #a)
  for i = 1, #a do
    t.eq(b[i].completion, a[i].completion, "sample " .. i .. ": the same kernel")
    t.eq(b[i].status, a[i].status, "sample " .. i .. ": the same status")
  end
  t.eq(run:get("machine").cores, sys.cpu_count() - share, "the worker has the cores rank 0 left")
  for _, m in ipairs(run:metrics()) do
    if m.kind == "step" then t.eq(m.staleness, 0) end
  end
  one:close()
  run:close()
  -- learning: the second step trains on samples one update old, with the sampling policy's
  -- log-probs
  ok, log = sh(launch(string.format("%s %q experiment1.lua --out=%q %s --async=1", reserve, exe, dir .. "/learn",
                                    (common:gsub("%-%-configs=lr=0", "--lr=1e-5 --beta=0 --opt=O3")))))
  t.ok(ok, log)
  run = store.open(dir .. "/learn/beta=0,lr=1e-05,opt=O3", {read_only = true})
  local staleness = {}
  for _, m in ipairs(run:metrics()) do
    if m.kind == "step" then
      staleness[#staleness + 1] = m.staleness
      t.ok(m.train ~= nil, "step " .. m.step .. " was trained on")
    end
  end
  t.eq(staleness, {0, 1})
  t.eq(run:get("updates"), 2)
  run:close()
end)

t.test("one mpirun: two trainer ranks and a benchmark worker (ENGINE_TRAINERS=2)", function()
  local job = engine.root .. "/tests/lua/ranks_job.lua"
  local alone, mpi = t.tmpdir(), t.tmpdir()
  local ok, log = sh(string.format("%q %q %q 2 fixed", exe, job, alone))
  t.ok(ok, log)
  ok, log = sh("ENGINE_TRAINERS=2 " .. launch(string.format("-np 3 %q %q %q 2 fixed", exe, job, mpi)))
  t.ok(ok, log)
  t.eq(io.open(mpi .. "/job.txt"):read("l"), "3 processes, 1 workers, rank 1 trains")
  local function logprobs(dir)
    local v = {}
    for line in io.lines(dir .. "/logprobs.txt") do v[#v + 1] = tonumber(line) end
    return v
  end
  local a, b = logprobs(alone), logprobs(mpi)
  t.eq(#b, #a)
  for i = 1, #a do t.near(b[i], a[i], 1e-5, "logprob " .. i) end
end)

t.run()
