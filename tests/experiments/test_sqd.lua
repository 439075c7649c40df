-- SQD's selection arithmetic and pool bookkeeping on synthetic nodes.
local t = require "engine.test"
local sqd = require "method.sqd"
local prompts = require "method.prompts"

-- n successful nodes with GFLOPS 1..n (ids 1..n) and e failed ones after them.
local function pool(n, e, stage)
  local out = {}
  for i = 1, n do out[#out + 1] = {id = i, stage = stage, status = "ok", gflops = i, code = "ok" .. i} end
  for i = 1, e do
    out[#out + 1] = {id = n + i, stage = stage, status = "compile_error", code = "bad" .. i,
                     message = "error " .. i}
  end
  return out
end

local function ids(picks, action)
  local out = {}
  for _, p in ipairs(picks) do if p.action == action then out[#out + 1] = p.node.id end end
  return out
end

t.test("shares are rounded up so one success is still deepened", function()
  local want_top = {[0] = 0, 1, 1, 2, 2, 2, 3, 3, 4, 4, 4}
  local want_30 = {[0] = 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 3}
  for n = 0, 10 do
    t.eq(sqd.share(0.4, n), want_top[n], "40% of " .. n)
    t.eq(sqd.share(0.3, n), want_30[n], "30% of " .. n)
  end
end)

t.test("top 40% deepened, next 30% improved, 30% of the errors repaired", function()
  local picks = sqd.select(pool(10, 5, 2), 2, {rng = sqd.rng(3)})
  t.eq(ids(picks, "deepen"), {10, 9, 8, 7})
  t.eq(ids(picks, "improve"), {6, 5, 4})
  local repaired = ids(picks, "repair")
  t.eq(#repaired, 2)
  for _, id in ipairs(repaired) do t.ok(id >= 11 and id <= 15, "a failed node") end
  for _, p in ipairs(picks) do
    t.eq(p.stage, p.action == "deepen" and 3 or 2, p.action .. " stage")
  end
  -- the same generator seed makes the same choice (a resumed run repeats it)
  t.eq(ids(sqd.select(pool(10, 5, 2), 2, {rng = sqd.rng(3)}), "repair"), repaired)
  local seen = {}
  for seed = 1, 20 do
    seen[table.concat(ids(sqd.select(pool(10, 5, 2), 2, {rng = sqd.rng(seed)}), "repair"), ",")] = true
  end
  local distinct = 0
  for _ in pairs(seen) do distinct = distinct + 1 end
  t.ok(distinct > 3, "different seeds repair different nodes")
end)

t.test("small pools, ties and the last stage", function()
  t.eq(#sqd.select({}, 1), 0)
  local one = sqd.select(pool(1, 0, 1), 1)
  t.eq({one[1].action, one[1].stage}, {"deepen", 2})
  t.eq(#one, 1)
  local two = sqd.select(pool(2, 1, 4), 4)
  t.eq({ids(two, "deepen"), ids(two, "improve"), ids(two, "repair")}, {{2}, {1}, {3}})
  local tied = {{id = 5, status = "ok", gflops = 7}, {id = 3, status = "ok", gflops = 7},
                {id = 9, status = "ok", gflops = 8}}
  t.eq(ids(sqd.select(tied, 1), "deepen"), {9, 3}, "ties go to the older kernel")
  local last = sqd.select(pool(5, 0, 6), 6)
  for _, p in ipairs(last) do
    t.eq({p.action, p.stage}, {"improve", 6}, "nothing is deeper than stage 6")
  end
  t.eq(#last, 4)
end)

t.test("the plan covers every stage, then the seed", function()
  local seed = {id = 100, stage = 1, status = "ok", gflops = 0.5, code = prompts.seed_kernel}
  local plan = sqd.plan({}, seed)
  t.eq(#plan, 1)
  t.eq({plan[1].node.id, plan[1].action, plan[1].stage, plan[1].seed}, {100, "improve", 1, true})
  local pools = {pool(3, 0, 1), nil, pool(0, 4, 3)}
  plan = sqd.plan(pools, seed, {rng = sqd.rng(1)})
  -- stage 1: 3 ok -> 2 deepened, 1 improved; stage 3: 4 failed -> 2 repaired; the seed
  t.eq(#plan, 2 + 1 + 2 + 1)
  t.eq({plan[1].action, plan[2].action, plan[3].action, plan[4].action, plan[5].action},
       {"deepen", "deepen", "improve", "repair", "repair"})
  t.eq(plan[#plan].node.id, 100)
end)

t.test("children are filed by stage; a bounded pool keeps the best and some errors", function()
  local children = {}
  for i = 1, 3 do children[#children + 1] = {id = i, stage = 2, status = "ok", gflops = i} end
  for i = 4, 8 do children[#children + 1] = {id = i, stage = 2, status = "timeout"} end
  children[#children + 1] = {id = 9, stage = 5, status = "ok", gflops = 1}
  local all = sqd.file(children)
  t.eq(#all[2], 8)
  t.eq(#all[5], 1)
  t.eq(#all[1], 0)
  local bounded = sqd.file(children, {pool_size = 4, rng = sqd.rng(2)})
  -- 3 of 8 succeeded: ceil(4 * 3 / 8) = 2 best successes, then 2 of the 5 errors
  local ok, bad = sqd.split(bounded[2])
  t.eq({ok[1].id, ok[2].id}, {3, 2})
  t.eq(#ok, 2)
  t.eq(#bad, 2)
  t.eq(#bounded[5], 1)
  local stored = sqd.pool_ids(bounded)
  t.eq(#stored, 6)
  t.eq(stored[1], {})
  t.eq(stored[5], {9})
  t.raises(function() sqd.file({{id = 1, stage = 7, status = "ok", gflops = 1}}) end,
           "child 1 has no valid stage")
end)

t.test("each selection's prompt says what to do", function()
  local node = {id = 1, stage = 3, status = "ok", gflops = 2, code = "void k(){}"}
  local deepen = sqd.prompt({node = node, action = "deepen", stage = 4}, {M = 256})
  t.contains(deepen[2].content, "Stage 4 of 6")
  -- the SIMD the machine has: AVX-512 natively here, AVX2/FMA under ENGINE_TARGET=x86-64-v3
  local simd = bench.machine().simd
  t.contains(deepen[2].content, "add " .. require("method.stages").isa(simd).name .. " SIMD intrinsics")
  t.contains(sqd.prompt({node = node, action = "deepen", stage = 4}, {isa = "avx2"})[2].content,
             "add AVX2/FMA SIMD intrinsics")
  t.contains(sqd.prompt({node = node, action = "deepen", stage = 4}, {isa = "avx512"})[2].content,
             "add AVX-512 SIMD intrinsics")
  t.contains(deepen[2].content, "void k(){}")
  local improve = sqd.prompt({node = node, action = "improve", stage = 3}, {})
  t.contains(improve[2].content, "Stage 3 of 6")
  t.contains(improve[2].content, "Make it faster")
  local broken = {id = 2, stage = 3, status = "compile_error", code = "void k(", message = "expected ')'"}
  local repair = sqd.prompt({node = broken, action = "repair", stage = 3}, {})
  t.contains(repair[2].content, "expected ')'")
  t.contains(repair[2].content, "This kernel fails")
  t.raises(function() sqd.prompt({node = node, action = "mutate", stage = 3}) end, "unknown action 'mutate'")
end)

t.run()
