-- The task suite's synthetic kernels (scripts/pretraining/kernelgen/tasks.lua): every
-- kernel verifies through the engine's benchmark at the task's test size and at a second
-- odd size, its label is what stages.detect() finds, the examples keep their stage's
-- rules, a corpus reproduces from its seed, and no held-out task is named.
local t = require "engine.test"
local kt = require "kernelgen.tasks"
local kernelgen = require "kernelgen"
local stages = require "stages"
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
    kinds[a[i].kind] = true
  end
  t.ok(same, "the same seed, the same corpus")
  t.ok(differ, "another seed, another corpus")
  for _, name in ipairs(kt.tasks) do t.ok((tasks[name] or 0) >= 10, name .. " in the corpus") end
  t.ok(kinds.fixed and kinds.write, "both kinds")
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

t.run()
