local t = require "engine.test"

local engine_exe = assert(os.getenv("ENGINE_TEST_EXE"), "ENGINE_TEST_EXE is not set")

t.test("samples, metrics and state round-trip through Lua", function()
  local dir = t.tmpdir() .. "/run"
  local run = store.open(dir, {config = {lr = 5e-7, opt = "O3"}, log_file = false})
  t.eq(run:resumed(), false)
  local seed = run:add_sample{status = "ok", gflops = 12.5, stage = 1, prompt = "p",
                              code = "void f(){}", timings = {times = {0.1, 0.2}}}
  local child = run:add_sample{parent_id = seed, status = "ok", gflops = 30.0, stage = 2,
                               iteration = 1, extra = {features = {"simd"}}}
  t.eq(run:samples{order_by = "gflops", descending = true}[1].id, child)
  t.eq(run:sample(seed).timings.times, {0.1, 0.2})
  t.eq(run:sample(child).extra.features, {"simd"})
  local chain = run:lineage(child)
  t.eq(#chain, 2)
  t.eq(chain[1].id, seed)
  run:log{step = 1, reward = -10}
  t.eq(run:metrics()[1].reward, -10)
  run:set("pool", {stage1 = {seed}})
  t.eq(run:get("pool").stage1, {seed})
  t.eq(run:get("missing", 42), 42)
  t.eq(run:config().opt, "O3")
  run:close()
  t.raises(function() run:count() end, "closed")
end)

t.test("atomic rolls back everything when the step fails", function()
  local run = store.open(t.tmpdir() .. "/run", {log_file = false})
  t.raises(function()
    run:atomic(function()
      run:add_sample{status = "ok"}
      run:log{step = 1}
      run:set("step", 1)
      error("evaluation crashed")
    end)
  end, "evaluation crashed")
  t.eq(run:count(), 0)
  t.eq(#run:metrics(), 0)
  t.eq(run:get("step"), nil)
  t.eq(run:in_transaction(), false)
  t.eq(run:atomic(function(a, b) return a + b end, 2, 3), 5)
end)

t.test("bad sample fields are reported by name", function()
  local run = store.open(t.tmpdir() .. "/run", {log_file = false})
  t.raises(function() run:add_sample{status = "ok", gflop = 3} end, "unknown option 'gflop'")
  t.raises(function() run:add_sample{gflops = 3} end, "needs a status")
  t.raises(function() run:add_sample{status = "ok", iteration = "one"} end,
           "option 'iteration' must be an integer")
  t.raises(function() run:samples{order_by = "speed"} end, "expected one of")
end)

-- A script killed with SIGKILL mid-run and started again ends with every step exactly once.
t.test("a killed script resumes without losing or repeating a step", function()
  local dir = t.tmpdir() .. "/run"
  local script = t.tmpdir() .. "/steps.lua"
  local f = assert(io.open(script, "w"))
  f:write([[
local dir, die_at = arg[1], tonumber(arg[2])
local run = store.open(dir, {config = {steps = 10}})
for step = run:get("step", 0) + 1, 10 do
  run:atomic(function()
    run:add_sample{iteration = step, status = "ok"}
    run:log{step = step}
    if step == die_at then os.execute("kill -9 " .. sys.pid()) end
    run:set("step", step)
  end)
end
]])
  f:close()
  local ok, how, code = os.execute(string.format("%q %q %q 6 2>/dev/null", engine_exe, script, dir))
  t.eq(ok, nil)
  t.ok((how == "signal" and code == 9) or (how == "exit" and code == 128 + 9),
       "the first run was killed")
  t.ok(os.execute(string.format("%q %q %q 0", engine_exe, script, dir)))
  local run = store.open(dir, {log_file = false})
  t.eq(run:get("step"), 10)
  t.eq(run:count(), 10)
  local steps = {}
  for line in io.lines(dir .. "/metrics.jsonl") do steps[#steps + 1] = json.decode(line).step end
  t.eq(steps, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
  for i = 1, 10 do t.eq(run:count{iteration = i}, 1, "iteration " .. i) end
end)

-- One engine at a time per run: a second open, in this process or another engine, is
-- refused with the directory and the holder's pid; a killed holder frees the run.
t.test("a run open in one engine is refused to a second, and freed when it is killed", function()
  local dir = t.tmpdir() .. "/run"
  local run = store.open(dir, {log_file = false})
  t.eq(store.holder(dir), sys.pid())
  t.raises(function() store.open(dir, {log_file = false}) end,
           dir .. " is already open in this process (pid " .. sys.pid() .. ")")
  run:close()
  t.eq(store.holder(dir), nil)

  -- another engine holds the run until it is killed
  local script = t.tmpdir() .. "/hold.lua"
  local f = assert(io.open(script, "w"))
  f:write([[
local run = store.open(arg[1], {log_file = false})
io.stdout:write(sys.pid(), "\n")
io.stdout:flush()
sys.sleep(60)
]])
  f:close()
  local holder = io.popen(string.format("exec %q %q %q", engine_exe, script, dir))
  local pid = math.tointeger(tonumber(holder:read("l")))
  t.ok(pid, "the holder started")
  t.eq(store.holder(dir), pid)
  t.raises(function() store.open(dir, {log_file = false}) end,
           dir .. " is in use by another engine (pid " .. pid .. ")")
  -- a third engine gets the same one-line refusal
  local third = io.popen(string.format("%q -e %q 2>&1", engine_exe,
                                       "store.open('" .. dir .. "', {log_file = false})"))
  local said = third:read("a")
  t.ok(not third:close(), "the third engine failed")
  t.contains(said, "in use by another engine (pid " .. pid .. ")")
  -- a reader takes no lock: a report of a live run
  local reader = store.open(dir, {read_only = true})
  t.eq(reader:read_only(), true)
  t.raises(function() reader:set("step", 1) end, "opened read-only")
  reader:close()
  os.execute("kill -9 " .. pid)
  holder:close()
  t.eq(store.holder(dir), nil)
  local again = store.open(dir, {log_file = false})
  t.eq(again:resumed(), true)
  again:close()
end)

t.test("the run's log file receives log lines", function()
  local dir = t.tmpdir() .. "/run"
  local run = store.open(dir)
  log.info("written to the run log", {step = 4})
  run:close()
  local text = io.open(dir .. "/run.log"):read("a")
  t.ok(text:find("written to the run log step=4"), text)
end)

t.run()
