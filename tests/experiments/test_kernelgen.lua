-- The synthetic kernel generator: reproducible from its seed, labels that the paper's
-- stage check agrees with, diversity, the chat examples, and the kernels themselves
-- through the engine's benchmark (every correct one verifies at even and odd sizes,
-- every defect fails the way it is labelled).
local t = require "engine.test"
local kernelgen = require "kernelgen"
local stages = require "stages"
local prompts = require "prompts"
local extract = require "extract"

local function same_list(a, b) return table.concat(a, ",") == table.concat(b, ",") end

t.test("the generator's random numbers", function()
  local a, b = kernelgen.rng(7), kernelgen.rng(7)
  for _ = 1, 50 do t.eq(a:next(), b:next()) end
  local r = kernelgen.rng("corpus")
  local seen = {}
  for _ = 1, 2000 do
    local x = r:int(-2, 3)
    t.ok(x >= -2 and x <= 3 and math.type(x) == "integer", "int in range")
    seen[x] = true
    local u = r:uniform()
    t.ok(u >= 0 and u < 1)
  end
  for x = -2, 3 do t.ok(seen[x], "every value drawn: " .. x) end
  local hits = 0
  for _ = 1, 4000 do if r:chance(0.25) then hits = hits + 1 end end
  t.ok(hits > 850 and hits < 1150, "chance(0.25) drew " .. hits .. " of 4000")
  t.eq(r:pick({"only"}), "only")
  t.raises(function() r:pick({}) end, "empty list")
  t.raises(function() kernelgen.rng(1.5) end, "seed must be an integer")
end)

t.test("a corpus reproduces from its seed whatever else draws random numbers", function()
  local one = kernelgen.corpus(30, {seed = 5})
  math.randomseed(99)
  for _ = 1, 10 do math.random() end
  local two = kernelgen.corpus(30, {seed = 5})
  local other = kernelgen.corpus(30, {seed = 6})
  local differs = false
  for i = 1, 30 do
    t.eq(two[i].completion, one[i].completion)
    t.eq(two[i].messages, one[i].messages)
    t.eq({two[i].kind, two[i].stage, two[i].defect}, {one[i].kind, one[i].stage, one[i].defect})
    differs = differs or other[i].completion ~= one[i].completion
  end
  t.ok(differs, "another seed gives another corpus")
end)

t.test("every stage's kernels pass its check and the detector finds exactly their label", function()
  local rng = kernelgen.rng(11)
  for s = 1, stages.count do
    local allowed = stages.get(s).allowed
    for n = 1, 120 do
      local k = kernelgen.kernel(rng, {allowed = allowed})
      local v = stages.check(s, k.code)
      t.ok(v.ok, string.format("stage %d kernel %d: %s\n%s", s, n, tostring(v.message), k.code))
      t.ok(same_list(v.used, k.techniques),
           string.format("stage %d: label {%s}, detected {%s}\n%s", s, table.concat(k.techniques, ","),
                         table.concat(v.used, ","), k.code))
      t.eq(k.expect, {"ok"})
      -- a defect keeps the technique set: its failure is the benchmark's, not the stage's
      local bad = kernelgen.kernel(rng, {params = k.params, defect = "random"})
      t.ok(same_list(stages.check(s, bad.code).used, k.techniques), bad.defect .. " changed the techniques")
      t.ne(bad.code, k.code, bad.defect)
    end
  end
end)

t.test("the front end's structural features agree with the labels too", function()
  local rng = kernelgen.rng(77)
  for n = 1, 150 do
    local s = rng:int(1, stages.count)
    local k = kernelgen.kernel(rng, {allowed = stages.get(s).allowed})
    local set = {}
    for _, x in ipairs(bench.features(k.code).techniques) do set[x == "openmp" and "omp" or x] = true end
    t.eq(stages.list(set), k.techniques, k.combo)
  end
end)

t.test("required techniques are used and the introduced one can be asked for", function()
  local rng = kernelgen.rng(3)
  for s = 2, stages.count do
    local intro = stages.get(s).introduces
    for _ = 1, 20 do
      local k = kernelgen.kernel(rng, {allowed = stages.get(s).allowed, require = {intro}})
      t.ok(stages.check(s, k.code, nil, {enforce_introduced = true}).ok, k.code)
    end
  end
  t.raises(function() kernelgen.kernel(rng, {allowed = {"omp"}, require = {"simd"}}) end,
           "required but not allowed")
  t.raises(function() kernelgen.kernel(rng, {allowed = {"vectorise"}}) end, "unknown technique 'vectorise'")
  t.raises(function() kernelgen.kernel(rng, {defect = "typo"}) end, "unknown defect 'typo'")
  local plain = kernelgen.kernel(rng, {allowed = {}})
  t.raises(function() kernelgen.kernel(rng, {params = plain.params, defect = "race"}) end,
           "no place for the defect 'race'")
  t.raises(function() kernelgen.kernel({}, {}) end, "kernelgen.rng")
end)

t.test("64 stage-6 kernels are diverse", function()
  local rng = kernelgen.rng(2026)
  local list = {}
  for i = 1, 64 do list[i] = kernelgen.kernel(rng, {allowed = stages.get(6).allowed}) end
  local st = kernelgen.stats(list)
  t.ok(st.technique_sets >= 6, "technique combinations: " .. st.technique_sets)
  t.ok(st.combos >= 32, "kernel configurations: " .. st.combos)
  t.ok(st.top_text_share <= 0.10, "top text share " .. st.top_text_share)
  t.ok(st.lines.mean >= 25 and st.lines.mean <= 90, "mean length " .. st.lines.mean)
end)

t.test("examples are the experiments' prompts with an answer in the asked format", function()
  local rng = kernelgen.rng(8)
  local task = {M = 128, N = 128, K = 128, opt = "O3"}
  for _, kind in ipairs(kernelgen.kinds) do
    for _ = 1, 15 do
      local ex = kernelgen.example(rng, {kind = kind, task = task, defect_rate = 0})
      t.eq(ex.kind, kind)
      t.eq(ex.messages[1].role, "system")
      t.eq(ex.messages[2].role, "user")
      t.eq(ex.defect, nil)
      local text = ex.completion
      t.ok(text:match("^[^\n`]*\n?\n?```c\n") ~= nil, "at most a sentence before the code: " .. text:sub(1, 80))
      t.eq(select(2, text:gsub("```", "")), 2, "one fenced block")
      t.eq(extract.kernel(text), ex.kernel.code)
      t.ok(stages.check(ex.stage, ex.kernel.code).ok)
      local user = ex.messages[2].content
      if kind == "fixed" then
        local found = false
        for _, m in ipairs(prompts.fixed(task)) do found = found or t.deep_equal(m, ex.messages) end
        t.ok(found, "one of the eight fixed prompts")
        t.eq(ex.stage, 6)
      elseif kind == "write" then
        t.eq(ex.messages, prompts.write(ex.stage, task))
      elseif kind == "improve" then
        t.eq(ex.messages, prompts.improve(ex.input.code, ex.stage, task))
        t.ne(ex.input.code, ex.kernel.code)
        local after = {}
        for _, tech in ipairs(ex.kernel.techniques) do after[tech] = true end
        for _, tech in ipairs(ex.input.techniques) do
          t.ok(after[tech], "the faster kernel keeps " .. tech)
        end
      elseif kind == "advance" then
        t.eq(ex.messages, prompts.advance(ex.input.code, ex.stage - 1, task))
        local want = {stages.get(ex.stage).introduces}
        for _, tech in ipairs(ex.input.techniques) do want[#want + 1] = tech end
        t.eq(ex.kernel.techniques, stages.list((function()
          local set = {}
          for _, x in ipairs(want) do set[x] = true end
          return set
        end)()), "the new technique added, the others kept")
        t.contains(user, "add " .. stages.names[stages.get(ex.stage).introduces])
      elseif kind == "repair" then
        t.ok(ex.input.defect ~= nil)
        t.ok(ex.message and #ex.message > 0)
        t.contains(user, ex.input.code:gsub("%s+$", ""))
        t.contains(user, ex.message)
        t.eq(ex.kernel.code, ex.input.correct_code, "the same kernel, fixed")
      end
    end
  end
  t.raises(function() kernelgen.example(rng, {kind = "explain"}) end, "unknown kind 'explain'")
end)

t.test("a corpus follows its mix and defect rate", function()
  local list = kernelgen.corpus(600, {seed = 4, defect_rate = 0.2})
  local st = kernelgen.stats(list)
  t.eq(st.n, 600)
  t.ok(st.kinds.fixed > 170 and st.kinds.fixed < 250, "fixed " .. tostring(st.kinds.fixed))
  t.ok(st.kinds.repair > 30 and st.kinds.repair < 95, "repair " .. tostring(st.kinds.repair))
  local defective = 0
  for _, n in pairs(st.defects) do defective = defective + n end
  t.ok(defective > 85 and defective < 160, "defective targets " .. defective)
  local only = kernelgen.corpus(20, {seed = 4, mix = {repair = 1}})
  for _, ex in ipairs(only) do t.eq(ex.kind, "repair") end
  t.raises(function() kernelgen.corpus(3, {mix = {chat = 1}}) end, "bad mix entry")
  t.raises(function() kernelgen.corpus(-1) end, "non-negative integer")
end)

-- Kernels chosen to cover every micro-kernel, OpenMP style, vector tail and blocking.
local function covering_kernels(rng, n)
  local seen, out = {}, {}
  local tries = 0
  while #out < n and tries < 2000 do
    tries = tries + 1
    local s = rng:int(1, stages.count)
    local k = kernelgen.kernel(rng, {allowed = stages.get(s).allowed, require = {stages.get(s).introduces}})
    local p = k.params
    local keys = {"micro:" .. p.micro.kind, "isa:" .. tostring(p.micro.isa), "tail:" .. tostring(p.micro.tail),
                  "omp:" .. (p.omp and p.omp.style or "-"), "cb:" .. (p.cb and p.cb.order or "-"),
                  "mode:" .. p.c_mode, "pf:" .. (p.pf and p.pf.fn or "-")}
    local new = false
    for _, key in ipairs(keys) do if not seen[key] then new = true end end
    if new or tries > 400 then
      for _, key in ipairs(keys) do seen[key] = true end
      out[#out + 1] = k
    end
  end
  return out, seen
end

local function statuses(list) local s = {} for i, r in ipairs(list) do s[i] = r.status end return s end

t.test("through the benchmark: correct kernels verify, defects fail as labelled", function()
  local rng = kernelgen.rng(31)
  local good, seen = covering_kernels(rng, 18)
  for _, key in ipairs({"micro:scalar", "micro:stile", "micro:unroll_k", "micro:unroll_j", "micro:vrow",
                        "micro:vikj", "micro:vtile", "omp:for", "omp:collapse", "omp:manual",
                        "tail:mask", "tail:scalar", "isa:avx2", "isa:avx512"}) do
    t.ok(seen[key], "covered: " .. key)
  end
  local bad = {}
  for _, name in ipairs(kernelgen.defect_names) do
    for _ = 1, 500 do
      local k = kernelgen.kernel(rng, {allowed = stages.get(rng:int(2, 6)).allowed})
      local ok, d = pcall(kernelgen.kernel, rng, {params = k.params, defect = name})
      if ok then bad[#bad + 1] = d; break end
    end
  end
  t.eq(#bad, #kernelgen.defect_names, "a kernel for every defect")
  -- NaN in C before the call: a kernel that does not overwrite C fails
  local opts = {threads = 2, runs = 1, warmup = 0, timeout = 1.5}
  local odd = {M = 37, N = 53, K = 29, c_init = "nan"}
  local sources = {}
  for i, k in ipairs(good) do sources[i] = k.code end
  for _, problem in ipairs({{M = 64, N = 64, K = 64, c_init = "nan"}, odd, {M = 1, N = 3, K = 2, c_init = "nan"}}) do
    opts.problem = problem
    local results = bench.evaluate_batch(sources, opts)
    for i, r in ipairs(results) do
      t.eq(r.status, "ok", string.format("%dx%dx%d %s: %s\n%s", problem.M, problem.N, problem.K,
                                          good[i].combo, r.message, good[i].code))
    end
  end
  opts.problem = odd
  local bsources = {}
  for i, k in ipairs(bad) do bsources[i] = k.code end
  local results = bench.evaluate_batch(bsources, opts)
  for i, r in ipairs(results) do
    local k = bad[i]
    local expected = false
    for _, s in ipairs(k.expect) do expected = expected or s == r.status end
    if kernelgen.defects[k.defect].may_pass and r.status == "ok" then expected = true end
    t.ok(expected, string.format("%s gave %s (expected %s): %s\n%s", k.defect, r.status,
                                 table.concat(k.expect, " or "), r.message, k.code))
    if r.status == "compile_error" and k.compile_message then
      t.eq(k.compile_message, r.message:match("^[^\n]*"), "the message is the engine's")
    end
  end
  t.eq(statuses(bench.evaluate_batch({bad[1].correct_code}, opts)), {"ok"})
end)

t.run()
