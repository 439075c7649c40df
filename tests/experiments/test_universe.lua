-- The generated universe of tasks (scripts/pretraining/universe.lua): reproducible from its
-- seed, thousands of distinct computations, every spec one the suite accepts, none with a
-- held-out task's shape, and in every family both kernels verify against the reference
-- through the harness while a kernel one coefficient off does not.
local t = require "engine.test"
local tasks = require "engine.tasks"
local stages = require "method.stages"
local universe = require "universe"
local args = require "engine.args"
local json = require "engine.json"

t.test("the same seed draws the same tasks; another seed draws others", function()
  local a, b, c = universe.draw(7, 60), universe.draw(7, 60), universe.draw(8, 60)
  local same, other = 0, 0
  for i = 1, 60 do
    if universe.spec_source(a[i].spec) == universe.spec_source(b[i].spec)
       and a[i].kernels.optimised == b[i].kernels.optimised then same = same + 1 end
    if a[i].spec.statement ~= c[i].spec.statement then other = other + 1 end
  end
  t.eq(same, 60)
  t.ok(other >= 55, other .. " of 60 statements differ between seeds 7 and 8")
end)

t.test("thousands of distinct computations over every family", function()
  local list = universe.draw(1, 3000)
  local statements, families = {}, {}
  local distinct = 0
  for _, u in ipairs(list) do
    local entry = tasks.parse_prototype(u.spec.prototype).entry
    local key = u.spec.statement .. "|" .. u.spec.prototype:gsub(entry, "f", 1)
    if not statements[key] then distinct = distinct + 1; statements[key] = true end
    families[u.spec.family] = (families[u.spec.family] or 0) + 1
  end
  t.ok(distinct >= 2500, distinct .. " distinct of 3000")
  -- 16 families share 3000 draws, about 188 each; window's, drawn again where it has
  -- conv1d's shape (about one in four), about 145: at least 105 each, about 3 standard
  -- deviations below that
  for _, f in ipairs(universe.families) do
    t.ok((families["universe_" .. f] or 0) >= 105, f .. ": " .. tostring(families["universe_" .. f]))
  end
end)

t.test("every spec is one the suite accepts, named apart, with no held-out task's shape", function()
  local list = universe.draw(3, 400)
  local dir = universe.write_dir(list, t.tmpdir() .. "/u")
  local held = {}
  for _, h in ipairs(tasks.list("heldout")) do held[universe.shape_of(tasks.get(h.name))] = h.name end
  for _, u in ipairs(list) do
    local spec = tasks.load_file(dir .. "/" .. u.spec.name .. ".lua")
    t.eq(spec.split, "train")
    t.ok(spec.name:match("^u%d+_"), spec.name)
    t.eq(held[universe.shape_of(spec)], nil, spec.name .. " has a held-out task's shape")
    t.ok(tasks.resolve_spec(spec, "train") and tasks.resolve_spec(spec, "test"), spec.name)
  end
  -- the functions have names of many kinds, none a held-out task's
  local entries, heldout_entries = {}, {}
  for _, h in ipairs(tasks.list("heldout")) do heldout_entries[h.entry] = true end
  for _, u in ipairs(list) do
    local entry = tasks.parse_prototype(u.spec.prototype).entry
    t.ok(not heldout_entries[entry] and not entry:match("^u%d"), entry)
    entries[entry] = true
  end
  local kinds = 0
  for _ in pairs(entries) do kinds = kinds + 1 end
  t.ok(kinds >= 200, kinds .. " function names among 400 tasks")
  -- the shape tells a held-out task's domain apart: fft's own spec is refused
  t.eq(universe.same_shape_as_heldout(tasks.get("fft")), "fft")
end)

t.test("a function's name does not tell its family: it has to be copied from the prototype", function()
  -- learn each word of a name's most frequent family from 600 tasks, then guess the family
  -- of 600 others from their names' words: names in a family's own words are guessed
  -- nearly always, names drawn apart from the family about as often as the largest family
  local function words(entry)
    local out = {}
    for w in entry:gmatch("[%a]+") do out[#out + 1] = w end
    return out
  end
  local seen = {}
  for _, u in ipairs(universe.draw(11, 600)) do
    for _, w in ipairs(words(tasks.parse_prototype(u.spec.prototype).entry)) do
      seen[w] = seen[w] or {}
      seen[w][u.spec.family] = (seen[w][u.spec.family] or 0) + 1
    end
  end
  local right, asked, names = 0, 0, {}
  for _, u in ipairs(universe.draw(12, 600)) do
    local entry = tasks.parse_prototype(u.spec.prototype).entry
    names[entry] = true
    local votes = {}
    for _, w in ipairs(words(entry)) do
      for fam, n in pairs(seen[w] or {}) do votes[fam] = (votes[fam] or 0) + n end
    end
    local best, most = nil, 0
    for fam, n in pairs(votes) do if n > most then best, most = fam, n end end
    asked = asked + 1
    if best == u.spec.family then right = right + 1 end
  end
  t.ok(right / asked < 0.3, string.format("%d of %d families guessed from the name", right, asked))
  -- from version 10 a name is made-up words, words routines are named with, or either with a
  -- mark, about a third each; and no part of a name the models are tested on as unseen
  local function made_up_word(w)
    local cv = "^[bdfgklmnprstvz][aeiou]"
    local syllables = 0
    while w:find(cv) do w, syllables = w:sub(3), syllables + 1 end
    return syllables >= 2 and syllables <= 3 and (w == "" or w:find("^[bdfgklmnprstvz]$") ~= nil)
  end
  local listed = {}
  for _, w in ipairs(universe.NAME_WORDS) do listed[w] = true end
  local function of_words(name)  -- listed words, joined by "_" or by nothing
    if name == "" then return true end
    for i = 1, #name do
      if listed[name:sub(1, i)] and of_words((name:sub(i + 1):gsub("^_", ""))) then return true end
    end
    return false
  end
  local function made_up_name(name)
    local first, second = name:match("^([%a]+)_([%a]+)$")
    for _, w in ipairs(first and {first, second} or {name}) do if not made_up_word(w) then return false end end
    return true
  end
  local function unmarked(name)
    for _, m in ipairs({"_%d+x%d+$", "_f64$", "_nt$", "_tn$", "_ip$", "_ex$", "_d$", "_x%d$", "_%a%d$", "_%d$", "%d$"}) do
      local base = name:gsub(m, "")
      if base ~= name then return base, true end
    end
    return name, false
  end
  local kinds, count = {made_up = 0, words = 0, marked = 0}, 0
  for entry in pairs(names) do
    count = count + 1
    local base, marked = unmarked(entry)
    local kind = made_up_name(base) and "made_up" or of_words(base) and "words" or nil
    t.ok(kind, entry .. " is made-up words or listed words, with a mark or none")
    if kind then kinds[marked and "marked" or kind] = kinds[marked and "marked" or kind] + 1 end
    t.eq(universe.holds_unseen_part(entry), nil, entry)
  end
  for kind, n in pairs(kinds) do t.ok(n >= 150, n .. " names of kind " .. kind .. " among 600") end
  t.ok(not made_up_word("dax") and not made_up_word("kernel") and made_up_word("zorabel") and made_up_word("tume"))
  t.ok(of_words("tile_merge") and of_words("blendstep") and not of_words("merger"))
  -- every part of a name the models are tested on as unseen is one no drawn name holds
  local tested = {}
  for _, task in ipairs(tasks.list("heldout")) do tested[#tested + 1] = task.name end
  for _, dir in ipairs({"user-tasks", "copy-probe-tasks"}) do
    for file in io.popen("ls " .. engine.scripts[1] .. "/../../data/train/" .. dir):lines() do
      tested[#tested + 1] = file:match("^(.+)%.lua$")
    end
  end
  t.ok(#tested >= 14, #tested .. " names tested as unseen")
  for _, name in ipairs(tested) do
    for part in name:gmatch("[^_]+") do t.ok(universe.holds_unseen_part(part), part .. " of " .. name .. " is refused") end
  end
  t.ok(count >= 550, count .. " distinct names among 600 tasks")
end)

t.test("the vectors' names are drawn per task, and every one the prototype has the statement names", function()
  local outputs, kept, renamed_inputs = {}, 0, 0
  for _, u in ipairs(universe.draw(5, 300)) do
    local p = tasks.parse_prototype(u.spec.prototype)
    local words = {}
    for w in (u.spec.statement .. " " .. u.spec.reference):gmatch("[%a_][%w_]*") do words[w] = true end
    local params = {}
    for _, a in ipairs(p.params) do params[a.name] = true end
    -- a renamed vector's old name is gone from the statement: not indexed, not described
    for _, old in ipairs({"x", "y", "z", "a", "b", "c"}) do
      if not params[old] then
        local st = u.spec.statement
        t.ok(not st:find("%f[%w_]" .. old .. "%[") and not st:find("%f[%w_]" .. old .. " holds")
             and not st:find("%f[%w_]" .. old .. " is an") and not st:find("in " .. old .. "[,.]")
             and not st:find("^" .. old .. " "), u.spec.name .. ": " .. old .. " renamed but still named\n" .. st)
      end
    end
    for _, a in ipairs(p.params) do
      if a.type:find("%*") then
        t.ok(words[a.name], u.spec.name .. ": " .. a.name .. " in the statement and the reference\n" .. u.spec.statement)
        t.ok(u.spec.args[a.name], u.spec.name .. ": " .. a.name .. " has its args entry")
        if a.const then
          if not ({x = true, y = true, z = true, a = true, b = true, c = true, A = true, B = true})[a.name] then
            renamed_inputs = renamed_inputs + 1
          end
        else
          outputs[a.name] = (outputs[a.name] or 0) + 1
          if a.name == "y" then kept = kept + 1 end
        end
      end
    end
  end
  local names = 0
  for _ in pairs(outputs) do names = names + 1 end
  t.ok(names >= 8, names .. " names of an output among 300 tasks")
  t.ok(kept >= 20 and kept <= 200, kept .. " outputs still named y")
  t.ok(renamed_inputs >= 100, renamed_inputs .. " inputs renamed")
  -- from version 9 every renamed vector gets a made-up name (syllables no list holds)
  local made_up = 0
  for name, count in pairs(outputs) do
    if name:match("^[bdfgklmnprstvz][aeiou][bdfgklmnprstvz][aeiou][bdfgklmnprstvz]?[aeiou]?[bdfgklmnprstvz]?$") then
      made_up = made_up + count
    end
  end
  t.ok(made_up >= 120, made_up .. " outputs under made-up names among 300 tasks")
  -- a dimension's "x" is not a vector's
  local tri = universe.task(5, 1, "triangular").spec.statement
  t.contains(tri, "n x n")
end)

t.test("no kernel declares a local under a parameter's name (the vector it names would be hidden)", function()
  -- up to version 8 a 2-D filter's vectors could be named a, b and c, its loops' counters:
  -- its reference and kernels did not compile, 84 tasks in 2,000
  local types = {"int", "long", "double", "float", "char", "unsigned", "size_t"}
  for _, u in ipairs(universe.draw(7, 2000)) do
    local params = tasks.parse_prototype(u.spec.prototype).params
    for _, code in ipairs({u.spec.reference, u.kernels.plain, u.kernels.optimised}) do
      local body = code:sub((code:find("{", 1, true)))
      for _, p in ipairs(params) do
        for _, ty in ipairs(types) do
          t.ok(not body:find("%f[%w_]" .. ty .. "%s+%**%s*" .. p.name .. "%f[^%w_]"),
               u.spec.name .. " declares " .. ty .. " " .. p.name .. " in its body")
        end
      end
    end
  end
end)

-- The slip a kernel of a factorisation or a transform family could make while getting the
-- loops right: L not divided by d, the transform's sign flipped (the angle halved for the
-- 2-point one), a butterfly's difference taken as a sum.
local slips = {
  universe_ldlt = function(code) return (code:gsub(" / [%w_]+%[[ij]%];", ";", 1)) end,
  universe_dft_blocks = function(code)
    -- the 2-point transform is its own inverse (its sines vanish): there the angle is halved
    if code:match("nb = n / (%d+);") == "2" then return (code:gsub("2%.0 %* pi", "pi")) end
    if code:find("sn = %-sin") then return (code:gsub("sn = %-sin", "sn = sin")) end
    return (code:gsub("sn = sin", "sn = -sin"))
  end,
  universe_hadamard = function(code)
    local wrong = code:gsub("= p %- q;", "= p + q;", 1)
    if wrong == code then wrong = code:gsub("%? %-", "? ", 1) end
    return wrong
  end,
  -- the first that applies: a difference's sign flipped (or a leading minus dropped), the
  -- ReLU taken for an absolute value, the absolute value dropped, a clamp's lower bound
  -- taken for an upper one, a sum taken for a difference, a stencil's end moved, the
  -- expression negated
  universe_signed = function(code)
    for _, swap in ipairs({{"%] %- ", "] + "}, {"%) %- ", ") + "}, {"= %-", "= "}, {"fmax%(0%.0, ", "fabs("},
                           {"fabs%(", "("}, {"fmin%(fmax%(", "fmin(fmin("}, {"%] %+ ", "] - "},
                           {"%[0%] = ", "[0] = 1.0 + "}, {"(%] = )([%w(])", "%1-%2"}}) do
      local wrong, k = code:gsub(swap[1], swap[2], 1)
      if k > 0 then return wrong end
    end
    return code
  end,
}

-- The tasks of `list` known to the suite (their spec files under the test's dir/sub).
local function added(list, sub)
  tasks.add_dir(universe.write_dir(list, t.tmpdir() .. "/" .. sub))
end

-- A task's straightforward and optimised kernels both verify at its test size.
local function both_verify(u)
  for _, which in ipairs({"plain", "optimised"}) do
    local r = bench.evaluate(u.kernels[which], {task = u.spec.name, size = "test", threads = 2})
    t.eq(r.status, "ok", u.spec.name .. " " .. which .. ": " .. tostring(r.message))
  end
end

-- Tasks of each family, both kernels judged at the test size.
t.test("in every family both kernels verify, use their techniques, and a wrong one fails", function()
  local list = {}
  for i, f in ipairs(universe.families) do
    for k = 0, 2 do list[#list + 1] = universe.task(11, 100 * k + i, f) end
  end
  added(list, "u")
  for _, u in ipairs(list) do
    local name = u.spec.name
    both_verify(u)
    local used = stages.detect(u.kernels.optimised)
    for _, tech in ipairs(u.spec.techniques) do
      t.ok(used[tech], name .. "'s optimised kernel uses " .. tech)
    end
    -- the first coefficient or offset changed: the check must see it
    local wrong = u.kernels.plain:gsub("(%d+)%.(%d+)", function(a, b) return a .. "." .. b .. "1" end, 1)
    if wrong == u.kernels.plain then wrong = u.kernels.plain:gsub("%+ (%d+)%]", "+ 1 + %1]", 1) end
    if wrong == u.kernels.plain then wrong = u.kernels.plain:gsub("s %+= ", "s -= ", 1) end
    if wrong == u.kernels.plain and slips[u.spec.family] then wrong = slips[u.spec.family](u.kernels.plain) end
    t.ok(wrong ~= u.kernels.plain, name .. ": a wrong twin")
    local r = bench.evaluate(wrong, {task = name, size = "test", threads = 1})
    t.ok(r.status ~= "ok", name .. "'s wrong twin was " .. r.status)
    local slip = slips[u.spec.family]
    if slip then
      local slipped = slip(u.kernels.plain)
      t.ok(slipped ~= u.kernels.plain, name .. ": a slipped twin")
      local s = bench.evaluate(slipped, {task = name, size = "test", threads = 1})
      t.eq(s.status, "verification_error", name .. "'s slipped twin: " .. tostring(s.message))
    end
  end
end)

-- The factorisation, transform and signed families' variants, each verified: the first
-- task of a seed that shows a variant not yet seen (a factor's triangle and the reference's
-- loop order; a block's length, the transform's sign and the layouts; Hadamard's length and
-- wording; a signed task's kind, function or ends, and wording), both kernels and the
-- family's slip.
t.test("every variant of the factorisation, transform and signed families verifies, and its slip fails", function()
  local function variants(u)
    local st, plain = u.spec.statement, u.kernels.plain
    if u.spec.family == "universe_ldlt" then
      return {"triangle " .. (st:find("upper") and "upper" or "lower"),
              "loop " .. (plain:find("for %(int i = 0; i < n; %+%+i%) {\n    for %(int j = 0; j < i") and "rows"
                          or "columns"),
              "shift " .. tostring(st:find("+ [%d.]+ %* I") ~= nil)}
    elseif u.spec.family == "universe_dft_blocks" then
      local forward = st:find("exp%(%-") or st:find("forward")
      return {"length " .. st:match("in n/(%d+) blocks"), "sign " .. (forward and "-" or "+"),
              "input " .. tostring(st:find("column b of") ~= nil), "output " .. tostring(st:find("k%*%(n/") ~= nil)}
    elseif u.spec.family == "universe_signed" then
      -- its kind with its function (or a stencil's ends), and the statement's words for them
      local kind = st:find("1 <= i <= n %- 2") and "stencil" or st:find("sum over 0 <= j") and "rows" or "elementwise"
      local form
      if kind == "stencil" then
        form = st:find("%[0%] = [%w_]+%[0%]") and "copy" or st:find("= 0%.0 %(n >= 3%)") and "zero" or "constant"
      else
        form = plain:find("fmin%(fmax%(") and "clamp" or plain:find("fmax%(0%.0, ") and "relu"
               or plain:find("fabs%(") and "abs" or (kind == "rows" and "square" or "none")
      end
      local words = (st:find("fmax%(") or st:find("fmin%(") or st:find("fabs%(")) and "C"
                    or (st:find("max%(") or st:find("min%(") or st:find("|", 1, true)) and "math" or nil
      return {kind .. " " .. form, words and ("words " .. words) or nil}
    else
      return {"length " .. st:match("multiple of (%d+)"), "butterflies " .. tostring(st:find("v%[j %+ h%]") ~= nil)}
    end
  end
  local list, seen = {}, {}
  for _, f in ipairs({"ldlt", "dft_blocks", "hadamard", "signed"}) do
    for i = 1, 60 do
      local u = universe.task(21, i, f)
      local new = false
      for _, v in ipairs(variants(u)) do
        if not seen[f .. " " .. v] then seen[f .. " " .. v], new = true, true end
      end
      if new then list[#list + 1] = u end
    end
  end
  local count = 0
  for _ in pairs(seen) do count = count + 1 end
  -- ldlt, dft_blocks, hadamard, signed (4 elementwise and 4 row forms, 3 stencil ends, 2 wordings)
  t.eq(count, 3 * 2 + (4 + 3 * 2) + (5 + 2) + (4 + 4 + 3 + 2), "every variant drawn")
  added(list, "v")
  for _, u in ipairs(list) do
    local name = u.spec.name
    both_verify(u)
    local slipped = slips[u.spec.family](u.kernels.plain)
    t.ok(slipped ~= u.kernels.plain, name .. ": a slipped twin")
    local r = bench.evaluate(slipped, {task = name, size = "test", threads = 1})
    t.eq(r.status, "verification_error", name .. "'s slipped twin: " .. tostring(r.message))
  end
end)

t.test("universe_tasks.lua writes fresh draws as task files, by family, less those a corpus holds", function()
  local universe_tasks = dofile(engine.scripts[1] .. "/universe_tasks.lua")
  local base = t.tmpdir() .. "/u"
  local function run(extra)
    local argv = {[0] = "universe_tasks.lua"}
    for _, a in ipairs(extra) do argv[#argv + 1] = a end
    return universe_tasks.run(args.parse(argv, universe_tasks.spec))
  end
  local r = run{"--out=" .. base .. "-all", "--seed=77", "--draws=6", "--count=4"}
  t.eq(#r.kept, 4)
  tasks.add_dir(base .. "-all")
  for _, s in ipairs(r.kept) do t.eq(tasks.get(s.name).statement, s.statement) end
  local near = run{"--out=" .. base .. "-near", "--seed=78", "--draws=300", "--count=10", "--families=window,ldlt",
                   "--per_family=2"}
  t.eq(#near.kept, 4)
  local by = {}
  for _, s in ipairs(near.kept) do by[s.family] = (by[s.family] or 0) + 1 end
  t.eq(by.universe_window, 2)
  t.eq(by.universe_ldlt, 2)
  -- a corpus holding the first task's statement (as a JSON file stores it) leaves that task out
  local corpus = base .. "-corpus.jsonl"
  t.write(corpus, json.encode({prompt = "Task: " .. r.kept[1].statement .. " Write it."}) .. "\n")
  local fewer = run{"--out=" .. base .. "-fewer", "--seed=77", "--draws=6", "--count=4", "--corpus=" .. corpus}
  t.eq(#fewer.left_out, 1)
  t.eq(fewer.left_out[1].name, r.kept[1].name)
  for _, s in ipairs(fewer.kept) do t.ok(s.name ~= r.kept[1].name) end
  t.raises(function() run{"--out=" .. base .. "-none", "--seed=78", "--draws=5", "--families=nonesuch"} end, "nonesuch")
  os.execute(string.format("rm -rf %q", base:match("^(.*)/u$")))
end)

t.run()
