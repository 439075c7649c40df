-- The task suite's synthetic kernels (scripts/pretraining/kernelgen/tasks/init.lua): every
-- kernel verifies through the engine's benchmark at the task's test size and at a second
-- odd size, its label is what stages.detect() finds, the examples keep their stage's
-- rules (improve adds techniques, advance adds the next stage's), repair inputs fail with
-- the status and message their prompt states, a corpus reproduces from its seed and
-- keeps the mix, and no held-out task is named.
local t = require "engine.test"
local kt = require "kernelgen.tasks"
local kernelgen = require "kernelgen"
local stages = require "method.stages"
local etasks = require "engine.tasks"

-- The machine's vector ISA: AVX-512 kernels are evaluated only where it has AVX-512; AVX2
-- kernels run on both (their labels are checked either way).
local machine_isa = bench.machine().simd == "avx512" and "avx512" or "avx2"

-- A second size for each task, odd and not a multiple of any vector width or block.
local odd = {
  axpy = {n = 777}, dot = {n = 1003}, nrm2 = {n = 1013}, asum = {n = 517},
  jacobi2d_5 = {n = 141}, jacobi2d_9 = {n = 131}, jacobi3d_7 = {n = 67},
  gemv_n = {m = 45, n = 611}, gemv_t = {m = 53, n = 611}, ger = {m = 29, n = 151},
  symv = {n = 301}, trsv = {n = 203}, spmv_csr = {rows = 251, cols = 173, per_row = 19},
  prefix_sum = {n = 3001}, col_sums = {m = 301, n = 139}, transpose = {m = 83, n = 101},
  gemm_tn = {m = 45, n = 147, k = 133}, gemm_batched = {batch = 23, m = 7, n = 19, k = 5},
  syrk = {n = 83, k = 45}, trmm = {m = 141, n = 75}, trsm = {m = 133, n = 77},
}

local function same_list(a, b) return table.concat(a, ",") == table.concat(b, ",") end
local function labels(code) return stages.list(stages.detect(code)) end

local function subset(list, of)
  local ok = {}
  for _, x in ipairs(of) do ok[x] = true end
  for _, x in ipairs(list) do if not ok[x] then return false, x end end
  return true
end

t.test("the covered tasks are training tasks with a second size", function()
  t.ok(#kt.tasks >= 4, #kt.tasks)
  for _, name in ipairs(kt.tasks) do
    local spec = etasks.get(name)
    t.eq(spec.split, "train", name)
    t.ok(odd[name], "a second size for " .. name)
  end
  t.raises(function() kt.kernel(kernelgen.rng(1), "matmul", {}) end, "not covered")
  t.raises(function() kt.kernel(kernelgen.rng(1), "axpy", {allowed = {}, require = {"simd"}}) end, "not allowed")
end)

-- Kernels for one task: plain, each technique alone, random sets, all of its techniques.
local function kernels_for(rng, name, isa, count)
  local own = etasks.get(name).techniques
  local out = {kt.kernel(rng, name, {allowed = {}, isa = isa})}
  for _, tech in ipairs(own) do out[#out + 1] = kt.kernel(rng, name, {allowed = {tech}, require = {tech}, isa = isa}) end
  out[#out + 1] = kt.kernel(rng, name, {require = own, isa = isa})
  while #out < count do out[#out + 1] = kt.kernel(rng, name, {isa = isa}) end
  return out
end

t.test("labels are what stages.detect finds, in the task's prototype and techniques", function()
  local rng = kernelgen.rng(11)
  for _, name in ipairs(kt.tasks) do
    local spec = etasks.get(name)
    local seen = {}
    for n = 1, 150 do
      local k = kt.kernel(rng, name, {isa = n % 2 == 0 and "avx2" or "avx512"})
      t.ok(same_list(k.techniques, labels(k.code)), string.format("%s: label %s, detected %s\n%s", name,
           table.concat(k.techniques, ","), table.concat(labels(k.code), ","), k.code))
      t.ok(k.code:find(spec.prototype, 1, true), name .. ": the prototype")
      t.ok(subset(k.techniques, spec.techniques), name .. ": only the spec's techniques")
      t.eq(k.task, name)
      seen[table.concat(k.techniques, "+")] = true
      if k.isa == "avx2" then t.ok(not k.code:find("_mm512_", 1, true), "no AVX-512 in an AVX2 kernel") end
    end
    local n = 0
    for _ in pairs(seen) do n = n + 1 end
    t.ok(n >= 2 ^ #spec.techniques * 0.75, string.format("%s: %d technique sets", name, n))
  end
end)

t.test("every kernel verifies at the test size and at an odd size", function()
  local rng = kernelgen.rng(5)
  for _, name in ipairs(kt.tasks) do
    local ks = kernels_for(rng, name, machine_isa, 12)
    if machine_isa == "avx512" then
      for _, k in ipairs(kernels_for(rng, name, "avx2", 6)) do ks[#ks + 1] = k end
    end
    local sources = {}
    for i, k in ipairs(ks) do
      sources[i] = k.code
      t.ok(same_list(k.techniques, labels(k.code)), name .. ": label")
    end
    for _, size in ipairs({"test", odd[name]}) do
      local results = bench.evaluate_batch(sources, {task = name, size = size, threads = 2, runs = 1,
                                                     max_runs = 1, warmup = 0})
      for i, r in ipairs(results) do
        t.eq(r.status, "ok", string.format("%s at %s (%s, %s): %s\n%s", name,
             type(size) == "table" and etasks.size_text(size, " = ", ", ") or size, table.concat(ks[i].techniques, "+"),
             ks[i].isa, r.message, ks[i].code))
      end
    end
  end
end)

t.test("examples: the task's prompt, the code in the answer, the stage's rules", function()
  local rng = kernelgen.rng(23)
  for _, name in ipairs(kt.tasks) do
    local spec = etasks.get(name)
    local ladder = stages.for_task(name)
    for _, isa in ipairs({"avx512", "avx2"}) do
      local exs = {kt.example(rng, {task = name, kind = "fixed", isa = isa})}
      for s = 1, ladder.count do
        exs[#exs + 1] = kt.example(rng, {task = name, kind = "write", stage = s, isa = isa})
        exs[#exs + 1] = kt.example(rng, {task = name, kind = "write", stage = s, isa = isa})
      end
      for _, ex in ipairs(exs) do
        t.eq(ex.task, name)
        t.eq(ex.isa, isa)
        local user = ex.messages[#ex.messages].content
        t.ok(user:find(spec.prototype, 1, true), name .. ": the prompt names the prototype")
        t.ok(ex.completion:find("```c\n", 1, true) and ex.completion:find(ex.kernel.code:gsub("%s+$", ""), 1, true),
             name .. ": the answer holds the code")
        t.ok(same_list(ex.techniques, labels(ex.kernel.code)), name .. ": the example's label")
        if ex.kind == "write" then
          local v = ladder.check(ex.stage, ex.kernel.code)
          t.ok(v.ok, string.format("%s stage %d: %s", name, ex.stage, v.message or ""))
        else
          t.eq(ex.stage, ladder.count)
        end
        if isa == "avx2" then t.ok(not ex.kernel.code:find("_mm512_", 1, true), "AVX2 prompt, no AVX-512") end
      end
    end
  end
end)

-- The task's output as the engine's messages name it.
local function output_name(name)
  local spec = etasks.get(name)
  for _, p in ipairs(etasks.resolve_spec(spec, "test").params) do
    if p.role == "out" or p.role == "inout" then return p.name .. "[" end
  end
  return "the return value"
end

local function has(list, x)
  for _, y in ipairs(list) do if y == x then return true end end
  return false
end

-- The checks every improve, advance and repair example of `name` at stage s keeps
-- without running it.
local function check_pair(ex, name, s, isa, ladder)
  local what = string.format("%s %s stage %d (%s)", name, ex.kind, s, isa)
  local input, answer = ex.input, ex.kernel
  t.eq(ex.task, name)
  t.eq(ex.isa, isa)
  local user = ex.messages[#ex.messages].content
  t.ok(user:find(input.code:gsub("%s+$", ""), 1, true), what .. ": the prompt holds the input")
  t.ok(ex.completion:find(answer.code:gsub("%s+$", ""), 1, true), what .. ": the answer holds the code")
  t.ok(same_list(answer.techniques, labels(answer.code)), what .. ": the answer's label")
  t.ok(input.code ~= answer.code, what .. ": the answer differs from the input")
  if isa == "avx2" then
    t.ok(not input.code:find("_mm512_", 1, true) and not answer.code:find("_mm512_", 1, true),
         what .. ": AVX2 prompt, no AVX-512")
  end
  t.ok(ladder.check(s, input.code).ok, what .. ": the input keeps its stage")  -- a defect adds no technique
  if ex.kind ~= "repair" then t.ok(same_list(input.techniques, labels(input.code)), what .. ": the input's label") end
  if ex.kind == "improve" then
    t.eq(ex.stage, s)
    t.ok(subset(input.techniques, answer.techniques), string.format("%s: %s not within %s", what,
         table.concat(input.techniques, "+"), table.concat(answer.techniques, "+")))
    local may = kt.techniques(name, ladder.get(s).allowed)
    if #input.techniques < #may then
      t.ok(#answer.techniques > #input.techniques, what .. ": more of the stage's techniques")
    end
    t.ok(ladder.check(s, answer.code).ok, what .. ": the answer keeps the stage")
  elseif ex.kind == "advance" then
    local new = ladder.get(s + 1).introduces
    t.eq(ex.stage, s + 1)
    t.ok(not has(input.techniques, new), what .. ": the input lacks " .. new)
    local want = {}
    for _, tech in ipairs(stages.techniques) do
      if has(input.techniques, tech) or tech == new then want[#want + 1] = tech end
    end
    t.ok(same_list(answer.techniques, want), string.format("%s: %s from %s, adding %s", what,
         table.concat(answer.techniques, "+"), table.concat(input.techniques, "+"), new))
    t.ok(ladder.check(s + 1, answer.code).ok, what .. ": the answer is at the next stage")
  else
    t.eq(ex.stage, s)
    t.ok(ex.defect and ex.input.expect, what .. ": a defect and its status")
    t.ok(user:find(ex.message, 1, true), what .. ": the prompt holds the message")
    t.ok(ladder.check(s, answer.code).ok, what .. ": the answer keeps the stage")
    if ex.input.expect == "compile_error" then
      t.ok(ex.message:match("^kernel%.c:%d+:%d+: error: "), what .. ": a compiler's message: " .. ex.message)
    else
      t.eq(ex.input.expect, "verification_error", what)
      t.ok(ex.message:find("^wrong result in call 1 %(warm%-up%): " .. output_name(name):gsub("%p", "%%%0")),
           what .. ": the engine's message, naming the output: " .. ex.message)
    end
    if ex.defect == "missing_remainder" then
      for var, v in pairs(ex.size) do t.ok(v % 2 == 1, what .. ": an odd size, " .. var .. " = " .. v) end
      t.ok(user:find(etasks.size_text(ex.size, " = ", ", "), 1, true), what .. ": the prompt names it")
    end
  end
end

t.test("improve, advance and repair examples: their pairs and the stages' rules", function()
  local rng = kernelgen.rng(31)
  local defects_seen = {}
  for _, name in ipairs(kt.tasks) do
    local ladder = stages.for_task(name)
    for _, isa in ipairs({"avx512", "avx2"}) do
      for s = 1, ladder.count do
        for _ = 1, 2 do
          check_pair(kt.example(rng, {task = name, kind = "improve", stage = s, isa = isa}), name, s, isa, ladder)
          check_pair(kt.example(rng, {task = name, kind = "repair", stage = s, isa = isa}), name, s, isa, ladder)
          if s < ladder.count then
            check_pair(kt.example(rng, {task = name, kind = "advance", stage = s, isa = isa}), name, s, isa, ladder)
          end
        end
      end
      local ex = kt.example(rng, {task = name, kind = "repair", isa = isa})
      defects_seen[ex.defect] = true
    end
    t.raises(function() kt.example(rng, {task = name, kind = "advance", stage = ladder.count}) end, "below")
  end
  for _, d in ipairs({"missing_semicolon", "missing_brace", "undeclared_variable", "missing_remainder", "off_by_one"}) do
    t.ok(defects_seen[d], "a random repair draws " .. d)
  end
  t.raises(function() kt.example(rng, {task = "axpy", kind = "polish"}) end, "unknown kind")
  t.raises(function() kt.example(rng, {task = "axpy", kind = "repair", stage = 1, defect = "missing_remainder"}) end,
           "no axpy kernel at stage 1")
end)

-- Each of a task's examples to run: improve and advance inputs and answers, and a repair
-- of every defect: {code, expect, what, message (ours, for a repair input)}.
local function runs_for(rng, name, isa)
  local ladder = stages.for_task(name)
  local out = {}
  local function add(code, expect, what, message)
    out[#out + 1] = {code = code, expect = expect, what = what, message = message}
  end
  for _ = 1, 2 do
    for _, kind in ipairs({"improve", "advance"}) do
      local ex = kt.example(rng, {task = name, kind = kind, isa = isa})
      add(ex.input.code, "ok", kind .. " input")
      add(ex.kernel.code, "ok", kind .. " answer")
    end
  end
  local td = require "kernelgen.tasks.defects"
  for _, d in ipairs(td.names) do
    local ok, ex = pcall(kt.example, rng, {task = name, kind = "repair", stage = ladder.count, isa = isa, defect = d})
    if ok then
      add(ex.input.code, ex.input.expect, "repair input (" .. d .. ")", ex.message)
      add(ex.kernel.code, "ok", "repair answer (" .. d .. ")")
    else
      -- wrong_intrinsic needs a vector assigned from an intrinsic it knows a slip of
      t.ok(d == "wrong_intrinsic" and tostring(ex):find("has a site", 1, true),
           string.format("%s (%s): %s", name, isa, tostring(ex)))
    end
  end
  local ex = kt.example(rng, {task = name, kind = "repair", isa = isa})
  add(ex.input.code, ex.input.expect, "repair input (" .. ex.defect .. ")", ex.message)
  add(ex.kernel.code, "ok", "repair answer (" .. ex.defect .. ")")
  return out
end

t.test("improve and advance kernels verify; repair inputs fail as their message says, answers verify", function()
  local rng = kernelgen.rng(37)
  local statuses = {}
  for _, name in ipairs(kt.tasks) do
    local list = {}
    for _, isa in ipairs({"avx512", "avx2"}) do
      local runs = runs_for(rng, name, isa)  -- drawn for both ISAs: the same examples on every machine
      if isa == "avx2" or machine_isa == "avx512" then
        for _, r in ipairs(runs) do r.isa = isa; list[#list + 1] = r end
      end
    end
    local sources = {}
    for i, r in ipairs(list) do sources[i] = r.code end
    local results = bench.evaluate_batch(sources, {task = name, size = odd[name], threads = 2, runs = 1,
                                                   max_runs = 1, warmup = 0})
    for i, res in ipairs(results) do
      local r = list[i]
      local what = string.format("%s %s (%s)", name, r.what, r.isa)
      t.eq(res.status, r.expect, string.format("%s: %s\n%s", what, tostring(res.message), r.code))
      statuses[res.status] = (statuses[res.status] or 0) + 1
      if r.message and res.status == r.expect then
        if r.expect == "compile_error" then
          t.eq(res.message, r.message, what .. ": the compiler's message")
        else
          local named = r.message:match("^wrong result in call 1 %(warm%-up%): ([^=]-)[%[=]")
          t.ok(res.message:find("wrong result in call 1 (timed): " .. named, 1, true),
               string.format("%s: the engine names %s: %s", what, named, res.message))
        end
      end
    end
  end
  t.ok((statuses.ok or 0) > 0 and (statuses.compile_error or 0) > 0 and (statuses.verification_error or 0) > 0,
       "every status seen")
end)

t.test("a corpus reproduces from its seed, covers every task and names no held-out one", function()
  local n = 15 * #kt.tasks  -- the corpus goes round the tasks: at least 10 examples each
  local a = kt.corpus(n, {seed = 9})
  local b = kt.corpus(n, {seed = 9})
  local c = kt.corpus(n, {seed = 10})
  t.eq(#a, n)
  local same, differ, tasks, kinds = true, false, {}, {}
  for i = 1, #a do
    same = same and a[i].completion == b[i].completion and a[i].messages[2].content == b[i].messages[2].content
    differ = differ or a[i].completion ~= c[i].completion
    tasks[a[i].task] = (tasks[a[i].task] or 0) + 1
    kinds[a[i].kind] = (kinds[a[i].kind] or 0) + 1
  end
  t.ok(same, "the same seed, the same corpus")
  t.ok(differ, "another seed, another corpus")
  for _, name in ipairs(kt.tasks) do t.ok((tasks[name] or 0) >= 10, name .. " in the corpus") end
  for _, kind in ipairs(kt.kinds) do
    t.ok(math.abs((kinds[kind] or 0) / n - kt.default_mix[kind]) < 0.08,
         string.format("%s: %d of %d examples", kind, kinds[kind] or 0, n))
  end
  for _, ex in ipairs(kt.corpus(#kt.tasks, {seed = 2, mix = {repair = 1}})) do t.eq(ex.kind, "repair") end
  t.raises(function() kt.corpus(1, {mix = {polish = 1}}) end, "bad mix entry")
  local heldout = etasks.list("heldout")
  t.ok(#heldout >= 3)
  for i, ex in ipairs(a) do
    local text = ex.completion
    for _, m in ipairs(ex.messages) do text = text .. "\n" .. m.content end
    for _, task in ipairs(heldout) do
      t.ok(not text:find("%f[%w_]" .. task.entry .. "%f[^%w_]"), string.format("example %d names %s", i, task.entry))
    end
  end
end)

-- A role's other names: with names = "fixed" none of them stands in a kernel.
local other_names = {"hadd", "lanes", "reduce_vec", "sum_lanes", "NPART", "CHUNKS", "BLOCK", "TILE", "pad", "sh",
                     "tid", "nth", "team", "coef", "vsum", "crow"}

local function names_in(text)
  local found = {}
  for _, n in ipairs(other_names) do
    if text:find("%f[%w_]" .. n .. "%f[^%w_]") then found[#found + 1] = n end
  end
  return found
end

t.test("fixed names: one name a role, drawn ones by default, and every kernel verifies", function()
  local n = 4 * #kt.tasks
  local drawn, fixed = kt.corpus(n, {seed = 3}), kt.corpus(n, {seed = 3, names = "fixed"})
  local explicit = kt.corpus(n, {seed = 3, names = "drawn"})
  local drawn_found = 0
  for i = 1, n do
    t.eq(explicit[i].completion, drawn[i].completion, "drawn is the default")
    t.eq(fixed[i].task, drawn[i].task, "the tasks in turn")
    t.eq(names_in(fixed[i].completion), {}, fixed[i].completion)
    drawn_found = drawn_found + #names_in(drawn[i].completion)
  end
  t.ok(drawn_found > n / 4, "drawn names use the other names: " .. drawn_found)
  -- every answer verifies, by task
  local by_task = {}
  for _, ex in ipairs(fixed) do
    if ex.isa == "avx2" or machine_isa == "avx512" then
      by_task[ex.task] = by_task[ex.task] or {}
      table.insert(by_task[ex.task], ex.kernel.code)
    end
  end
  for name, sources in pairs(by_task) do
    local results = bench.evaluate_batch(sources, {task = name, size = odd[name], threads = 2, runs = 1, max_runs = 1,
                                                   warmup = 0})
    for i, r in ipairs(results) do t.eq(r.status, "ok", name .. ": " .. tostring(r.message) .. "\n" .. sources[i]) end
  end
  t.raises(function() kt.corpus(1, {names = "short"}) end, "names must be drawn or fixed")
end)

t.run()
