-- Several ranks from one script (engine --ranks=N, engine/parallel/trainer_ranks): the script sees one
-- policy and one trainer; the ranks share sampling and training and take one update.
local t = require "engine.test"

local engine_exe = assert(os.getenv("ENGINE_TEST_EXE"), "ENGINE_TEST_EXE is not set")
local job = engine.root .. "/tests/lua/ranks_job.lua"

-- Runs the job; returns whether it succeeded and what it printed.
local function run(ranks, out, ...)
  local cmd = string.format("%s --ranks=%d %s %s %s 2>&1", engine_exe, ranks, job, out,
                            table.concat({...}, " "))
  local p = io.popen(cmd)
  local text = p:read("a")
  local ok = p:close()
  return ok, text
end

local function logprobs(dir)
  local values = {}
  for line in io.lines(dir .. "/logprobs.txt") do values[#values + 1] = tonumber(line) end
  return values
end

local function near_all(a, b, tol, what)
  t.eq(#a, #b, what .. ": lengths")
  for i = 1, #a do t.near(a[i], b[i], tol, what .. "[" .. i .. "]") end
end

t.test("two ranks take the update one rank takes on the same batch", function()
  local one, two, none = t.tmpdir(), t.tmpdir(), t.tmpdir()
  local ok, text = run(1, one, 2, "fixed")
  t.ok(ok, text)
  ok, text = run(2, two, 2, "fixed")
  t.ok(ok, text)
  ok, text = run(1, none, 0, "fixed")
  t.ok(ok, text)
  near_all(logprobs(two), logprobs(one), 1e-5, "2 ranks against 1")
  -- and the update moved the policy, so the comparison above says something
  local moved = 0
  for i, v in ipairs(logprobs(one)) do moved = math.max(moved, math.abs(v - logprobs(none)[i])) end
  t.ok(moved > 1e-3, "training changed the log-probs by " .. moved)
end)

t.test("on CUDA two ranks take one rank's update; without CUDA the load fails on every rank by name", function()
  local one, two = t.tmpdir(), t.tmpdir()
  if policy.cuda_available() then
    local ok, text = run(1, one, 2, "fixed", "device=cuda")
    t.ok(ok, text)
    ok, text = run(2, two, 2, "fixed", "device=cuda")  -- rank r on cuda:(r % devices)
    t.ok(ok, text)
    near_all(logprobs(two), logprobs(one), 1e-4, "2 CUDA ranks against 1")
  else
    local ok, text = run(2, two, 2, "fixed", "device=cuda")
    t.ok(not ok, "a policy on CUDA loaded on a machine without it")
    t.contains(text, "loading the policy failed on rank 0")
  end
end)

t.test("a collective backend other than gloo or nccl is refused by name", function()
  local p = io.popen(string.format("ENGINE_DIST_BACKEND=mpi %s --ranks=2 %s %s 0 fixed 2>&1",
                                   engine_exe, job, t.tmpdir()))
  local text = p:read("a")
  t.ok(not p:close(), "an unknown backend was accepted")
  t.contains(text, "ENGINE_DIST_BACKEND is 'mpi': gloo or nccl")
end)

t.test("pol:sample spreads a call over the ranks and keeps its shape", function()
  local dir = t.tmpdir()
  local ok, text = run(3, dir, 0, "shapes")
  t.ok(ok, text)
  t.eq(io.open(dir .. "/shapes.txt"):read("l"), "2 followers")
end)

t.test("a killed rank ends the run with an error, and the run resumes from its checkpoint", function()
  local whole, broken = t.tmpdir(), t.tmpdir()
  local ok, text = run(2, whole, 4)
  t.ok(ok, text)
  ok, text = run(2, broken, 4, "kill-after=2")
  t.ok(not ok, "the run went on without its rank")
  t.contains(text, "rank 1 (pid ")
  t.contains(text, "was killed by signal 9")
  ok, text = run(2, broken, 4, "resume")
  t.ok(ok, text)
  near_all(logprobs(broken), logprobs(whole), 1e-6, "resumed against whole")
end)

t.run()
