-- The synthetic kernel generator: reproducible from its seed, labels that the paper's
-- stage check agrees with, diversity, the chat examples, and the kernels themselves
-- through the engine's benchmark (every correct one verifies at even and odd sizes,
-- every defect fails the way it is labelled).
local t = require "engine.test"
local kernelgen = require "kernelgen"
local stages = require "method.stages"
local prompts = require "method.prompts"
local extract = require "method.extract"

local function same_list(a, b) return table.concat(a, ",") == table.concat(b, ",") end

-- The machine's vector ISA: avx512 natively here, avx2 under ENGINE_TARGET=x86-64-v3
-- (CTest runs this file both ways). Kernels sent to the benchmark use what it can run.
local simd = bench.machine().simd
local machine_isa = nil  -- AVX-512 and AVX2 kernels
if simd ~= "avx512" then machine_isa = "avx2" end

local function bits(code) return stages.vector_bits(stages.detect(code).simd) end

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
    t.eq({two[i].kind, two[i].stage, two[i].defect, two[i].isa}, {one[i].kind, one[i].stage, one[i].defect, one[i].isa})
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
    for _, x in ipairs(kernelc.features(k.code).techniques) do set[x == "openmp" and "omp" or x] = true end
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
  for _, kind in ipairs(kernelgen.kinds) do
    for n = 1, 30 do
      local isa = n % 2 == 0 and "avx2" or "avx512"
      local task = {M = 128, N = 128, K = 128, opt = "O3", isa = isa}
      local ex = kernelgen.example(rng, {kind = kind, task = task, defect_rate = 0})
      t.eq(ex.kind, kind)
      t.eq(ex.isa, isa)
      t.eq(ex.task.isa, isa)
      -- the answer uses the prompt's ISA or none; an AVX2 prompt never gets AVX-512
      if isa == "avx2" then
        t.ok(bits(ex.kernel.code) <= 256, "AVX2 prompt, " .. bits(ex.kernel.code) .. "-bit answer")
        if ex.input and ex.input.defect ~= "wrong_isa" then
          t.ok(bits(ex.input.code) <= 256, "AVX2 prompt, wider kernel in it")
        end
      else
        t.ok(bits(ex.kernel.code) == 0 or bits(ex.kernel.code) == 512,
             "AVX-512 prompt, " .. bits(ex.kernel.code) .. "-bit answer")
      end
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
        t.contains(user, isa == "avx2" and "AVX2/FMA" or "AVX-512")
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
        t.contains(user, "add " .. stages.name(stages.get(ex.stage).introduces, isa))
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
  t.raises(function() kernelgen.example(rng, {isa = "neon"}) end, "unknown ISA 'neon'")
  -- without an ISA: the paper's AVX-512, whatever the machine
  t.eq(kernelgen.example(rng, {kind = "fixed"}).task.isa, "avx512")
end)

t.test("a corpus names both ISAs, each example answered in its own", function()
  local list = kernelgen.corpus(300, {seed = 12})
  local st = kernelgen.stats(list)
  t.ok(st.isas.avx512 > 110 and st.isas.avx2 > 110, string.format("avx512 %s, avx2 %s",
       tostring(st.isas.avx512), tostring(st.isas.avx2)))
  local simd_seen = {avx512 = 0, avx2 = 0}
  for _, ex in ipairs(list) do
    local b = bits(ex.kernel.code)
    local user = ex.messages[2].content
    if ex.isa == "avx2" then
      t.ok(b <= 256, ex.kind .. ": an AVX2 prompt answered with " .. b .. "-bit vectors")
      t.contains(user, "not AVX-512")
    else
      t.ok(b == 0 or b == 512, ex.kind .. ": an AVX-512 prompt answered with " .. b .. "-bit vectors")
      t.ok(not user:find("AVX2"), "the paper's prompt")
    end
    if b > 0 then simd_seen[ex.isa] = simd_seen[ex.isa] + 1 end
  end
  t.ok(simd_seen.avx512 > 40 and simd_seen.avx2 > 40, "SIMD answers in both ISAs")
  for _, ex in ipairs(kernelgen.corpus(40, {seed = 12, isa = "avx2"})) do t.eq(ex.isa, "avx2") end
  for _, ex in ipairs(kernelgen.corpus(40, {seed = 12, isa = {avx512 = 1}})) do t.eq(ex.isa, "avx512") end
  t.raises(function() kernelgen.corpus(3, {isa = "sve"}) end, "unknown ISA 'sve'")
  t.raises(function() kernelgen.corpus(3, {isa = {avx = 1}}) end, "bad isa entry")
  -- single kernels: the ISA asked for, or either
  local rng = kernelgen.rng(5)
  for _ = 1, 40 do
    local k = kernelgen.kernel(rng, {allowed = stages.get(6).allowed, require = {"simd"}, isa = "avx2"})
    t.eq(bits(k.code), 256)
    k = kernelgen.kernel(rng, {allowed = stages.get(6).allowed, require = {"simd"}, isa = "avx512"})
    t.eq(bits(k.code), 512)
  end
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
local function covering_kernels(rng, n, isa)
  local seen, out = {}, {}
  local tries = 0
  while #out < n and tries < 2000 do
    tries = tries + 1
    local s = rng:int(1, stages.count)
    local k = kernelgen.kernel(rng, {allowed = stages.get(s).allowed, require = {stages.get(s).introduces},
                                     isa = isa})
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
  local good, seen = covering_kernels(rng, 18, machine_isa)
  local keys = {"micro:scalar", "micro:stile", "micro:unroll_k", "micro:unroll_j", "micro:vrow",
                "micro:vikj", "micro:vtile", "omp:for", "omp:collapse", "omp:manual", "tail:scalar",
                "isa:avx2"}
  if simd == "avx512" then  -- AVX-512 kernels and their masked tails only where they run
    keys[#keys + 1] = "tail:mask"
    keys[#keys + 1] = "isa:avx512"
  else
    t.ok(not seen["isa:avx512"], "no AVX-512 kernel for a machine without it")
  end
  for _, key in ipairs(keys) do
    t.ok(seen[key], "covered: " .. key)
  end
  local bad = {}
  for _, name in ipairs(kernelgen.defect_names) do
    for _ = 1, 500 do
      local k = kernelgen.kernel(rng, {allowed = stages.get(rng:int(2, 6)).allowed, isa = machine_isa})
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

t.test("a kernel's neighbours (kernelgen.mutate) differ in one part, keep their labels and verify", function()
  local rng = kernelgen.rng(47)
  local isa = machine_isa or "avx512"
  local sources, labels, parts = {}, {}, {}
  local k = kernelgen.kernel(rng, {fixed = true, isa = isa})
  for n = 1, 60 do
    local params, part = kernelgen.mutate(rng, k.params, isa)
    parts[part:match("^[+-]") and "technique" or part] = true
    local m = kernelgen.kernel(rng, {params = params})
    t.ok(same_list(stages.list(stages.detect(m.code)), m.techniques), string.format("%s: label {%s}\n%s", part, table.concat(m.techniques, ","), m.code))
    local from, to = table.concat(k.techniques, ","), table.concat(m.techniques, ",")
    if part:match("^[+-]") then t.ne(from, to, part .. " changes the technique set")
    else t.eq(to, from, part .. " keeps the technique set") end
    if simd ~= "avx512" then t.ok(not m.code:find("_mm512_", 1, true), "no AVX-512 for this machine") end
    sources[#sources + 1], labels[#labels + 1] = m.code, part
    if n % 3 == 0 then k = m end  -- walk on: later neighbours start from other kernels
  end
  for _, part in ipairs{"micro", "c_mode", "omp", "cb", "technique"} do t.ok(parts[part], "changed: " .. part) end
  local results = bench.evaluate_batch(sources, {threads = 2, runs = 1, warmup = 0, timeout = 1.5,
                                                 problem = {M = 37, N = 53, K = 29, c_init = "nan"}})
  for i, r in ipairs(results) do
    t.eq(r.status, "ok", labels[i] .. ": " .. tostring(r.message) .. "\n" .. sources[i])
  end
  t.raises(function() kernelgen.mutate(rng, {}, isa) end, "params must come from a kernel")
  t.raises(function() kernelgen.mutate(rng, k.params, "neon") end, "unknown ISA 'neon'")
end)

t.test("AVX2 repair examples teach turning AVX-512 intrinsics into AVX2 ones", function()
  local rng = kernelgen.rng(17)
  local list, sources = {}, {}
  for i = 1, 6 do
    local ex = kernelgen.example(rng, {kind = "repair", isa = "avx2", defect = "wrong_isa",
                                       stage = rng:int(4, 6), defect_rate = 0})
    t.eq(ex.input.defect, "wrong_isa")
    t.eq(bits(ex.input.code), 512)
    t.eq(bits(ex.kernel.code), 256)
    t.eq(ex.kernel.code, ex.input.correct_code, "the same kernel in AVX2")
    t.eq(ex.input.techniques, ex.kernel.techniques)
    t.contains(ex.messages[2].content, ex.message)
    t.ok(ex.message:find("_mm512_", 1, true), ex.message)
    list[i], sources[i] = ex, ex.input.code
  end
  -- they come up in corpora too, and only with AVX2 prompts
  local seen = 0
  for _, ex in ipairs(kernelgen.corpus(400, {seed = 3, mix = {repair = 1}})) do
    if ex.input.defect == "wrong_isa" then
      seen = seen + 1
      t.eq(ex.isa, "avx2")
    end
  end
  t.ok(seen >= 20, "wrong_isa repairs in a corpus: " .. seen)
  t.raises(function() kernelgen.example(rng, {kind = "repair", isa = "avx512", defect = "wrong_isa"}) end,
           "needs an AVX2 prompt")
  -- on this machine: they run where it has AVX-512, and elsewhere fail exactly as the message says
  local results = bench.evaluate_batch(sources, {threads = 2, runs = 1, warmup = 0, timeout = 1.5,
                                                 problem = {M = 37, N = 53, K = 29, c_init = "nan"}})
  for i, r in ipairs(results) do
    if simd == "avx512" then
      t.eq(r.status, "ok", tostring(r.message))
    else
      t.eq(r.status, "compile_error")
      t.eq(r.message:match("^[^\n]*"), list[i].message, "the message is the engine's")
    end
  end
end)

t.test("AVX-512 kernels run where the machine has AVX-512 and are compile errors elsewhere", function()
  local rng = kernelgen.rng(41)
  local list, sources = {}, {}
  for i = 1, 4 do
    list[i] = kernelgen.kernel(rng, {allowed = stages.get(4).allowed, require = {"simd"}, isa = "avx512"})
    sources[i] = list[i].code
  end
  local results = bench.evaluate_batch(sources, {threads = 2, runs = 1, warmup = 0, timeout = 1.5,
                                                 problem = {M = 37, N = 53, K = 29, c_init = "nan"}})
  for i, r in ipairs(results) do
    if simd == "avx512" then
      t.eq(r.status, "ok", list[i].combo .. ": " .. tostring(r.message))
    else
      t.eq(r.status, "compile_error", list[i].combo)
      t.ok(r.message:match("^kernel%.c:%d+:%d+: error: inlining failed in call to 'always_inline' "
                           .. "'_mm512_[%w_]+': target specific option mismatch %(the target flags do "
                           .. "not enable AVX512F%)"), r.message)
    end
  end
end)

t.test("fixed names: each role's first name of render.name_sets, drawn ones by default, and the answers verify", function()
  local sets = require("kernelgen.render").name_sets
  local others = {}
  for _, set in pairs(sets) do
    for i = 2, #set do
      for _, n in ipairs(type(set[i]) == "table" and set[i] or {set[i]}) do others[n] = true end
    end
  end
  for _, set in pairs(sets) do  -- a name first in one role is no other name
    for _, n in ipairs(type(set[1]) == "table" and set[1] or {set[1]}) do others[n] = nil end
  end
  local function names_in(text)
    local found = {}
    for n in pairs(others) do if text:find("%f[%w_]" .. n .. "%f[^%w_]") then found[#found + 1] = n end end
    table.sort(found)
    return found
  end
  local drawn, fixed = kernelgen.corpus(40, {seed = 8}), kernelgen.corpus(40, {seed = 8, names = "fixed"})
  local explicit, drawn_found, sources = kernelgen.corpus(40, {seed = 8, names = "drawn"}), 0, {}
  for i = 1, 40 do
    t.eq(explicit[i].completion, drawn[i].completion, "drawn is the default")
    t.eq(names_in(fixed[i].completion), {}, fixed[i].completion)
    drawn_found = drawn_found + #names_in(drawn[i].completion)
    local k = fixed[i].kernel  -- a share of the answers carry a defect on purpose (defect_rate)
    if not k.defect and (fixed[i].isa == "avx2" or simd == "avx512") then sources[#sources + 1] = k.code end
  end
  t.ok(drawn_found > 10, "drawn names use the other names: " .. drawn_found)
  t.ok(#sources >= 10, #sources .. " answers to run")
  for i, r in ipairs(bench.evaluate_batch(sources, {threads = 2, runs = 1, warmup = 0, problem = {M = 37, N = 53, K = 29}})) do
    t.eq(r.status, "ok", tostring(r.message) .. "\n" .. sources[i])
  end
  t.raises(function() kernelgen.corpus(1, {names = "short"}) end, "names must be drawn or fixed")
end)

t.run()
