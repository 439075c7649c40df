-- The trainer's side of the cluster tests, run as rank 0 under mpirun:
--   mpirun -np 3 engine job.lua MODE IN.json OUT.json
-- IN holds {sources =, options =, kill_after =, victims =}; OUT gets what the test checks.
local mode, input, output = arg[1], arg[2], arg[3]
local job = json.read(input)
local out = {size = cluster.size(), mpi = cluster.mpi}

local function evaluate()
  local rs = bench.evaluate_batch(job.sources, job.options)
  local results = {}
  for i, r in ipairs(rs) do
    results[i] = {status = r.status, gflops = r.gflops, node = r.node, same_code_as = r.same_code_as, times = r.times}
  end
  return results
end

local function workers()
  local list = {}
  for i, w in ipairs(cluster.workers()) do
    list[i] = {rank = w.rank, host = w.host, pid = w.pid, kind = w.kind, alive = w.alive,
               lost = w.lost, kernels = w.kernels, cores = w.machine.cores}
  end
  return list
end

if mode == "batch" then
  out.workers_before = workers()
  out.results = evaluate()
  out.workers_after_batch = workers()
  local ref = bench.reference{problem = job.options.problem}
  out.reference = {status = ref.status, node = ref.node, threads = ref.options.threads}
elseif mode == "kill" then
  cluster.configure{worker_timeout = 3, mixed_nodes = job.mixed or false}
  local pids = {}
  for _, w in ipairs(cluster.workers()) do
    for _, v in ipairs(job.victims) do if w.rank == v then pids[#pids + 1] = w.pid end end
  end
  os.execute(string.format("(sleep %s; kill -9 %s) >/dev/null 2>&1 &", job.kill_after,
                           table.concat(pids, " ")))
  local t0 = sys.now()
  local ok, got = pcall(evaluate)
  out.seconds = sys.now() - t0
  if ok then out.results = got else out.error = tostring(got) end
elseif mode == "mixed" then
  local ok, err = pcall(evaluate)
  out.refused = not ok and tostring(err) or nil
  cluster.configure{mixed_nodes = true}
  out.results = evaluate()
end
out.workers = workers()
json.write(output, out)
