-- Prompts in drawn words, for the pretraining corpus (pretrain.lua --wording_share). Every
-- prompt the generators write opens with one framing sentence and, when fixed, carries one
-- of eight emphases; a model trained on those alone reads an unfamiliar framing as an
-- unfamiliar task (docs/models.md, "Prompts in drawn words"). Here a prompt gets a framing
-- drawn from a few and an emphasis composed from pieces, so the task is learnt from its
-- prototype and statement. No piece is a held-out wording (prompts.reworded*): those stay
-- unseen, and heldout_split.check refuses a drawn prompt that collides with one.
--
--   local wordings = require "wordings"
--   wordings.vary(user_text, rng)        -- the text in drawn words (engine.rng's rng)
--   wordings.vary(user_text, rng, 1)     -- ... from version 1's framings (wordings.version: the current)
--   wordings.compose_framing(rng)        -- a framing composed of drawn pieces (version 4)
--   wordings.emphasis(list, rng)         -- an emphasis asking for the techniques `list`

local prompts = require "method.prompts"
local stages = require "method.stages"
local universe = require "universe"

local M = {}

-- The line every generated prompt opens with (prompts' task_lines).
M.standard = "Write a C function with exactly this signature:"
M.answer_format = "Answer with the complete C code in one ```c code block."

-- First lines, by the version that added them; a corpus draws from its version's and every
-- earlier one's (pretrain.json's wording_version; none recorded: 1). Version 1 speaks of the
-- prototype only as a function's signature, and models trained on it named their function
-- from words of held-out framings ("types", "parameter": docs/models.md, the seventh universe
-- model); version 2 adds more varied sentences, which call it a prototype, a header line, an
-- interface or a first line; version 3 adds sentences that themselves hold name-like words
-- (name, parameters, types, arguments) before the prototype, so that the name is learnt to
-- come from the prototype line and not from them. None ends in a held-out framing's last
-- word: a run of 8 words would then reach from it into the prototype. Version 4 adds no
-- listed sentence: half its draws are composed (M.composed, below), since each listed
-- version moved which held-out framing a model read, not how it read one (the eighth
-- universe model read framing 1 and lost framing 3: docs/models.md).
local added = {
  {
    M.standard,
    "Write the C function declared below; keep its signature exactly:",
    "Write a C function that has exactly the following signature:",
    "Implement this C function, keeping the signature exactly as shown:",
    "Write the body of the C function whose signature follows:",
    "Provide a C implementation of the function with this exact signature:",
    "Code the following C function; its signature must not change:",
    "Write C code for the function below, using exactly this signature:",
    "Here is the signature of a C function to write; keep it unchanged:",
    "Write this C function, with the signature exactly as given below:",
    "Complete a C function with precisely this signature:",
    "Write a C function matching this signature exactly:",
    "Your task: write a C function with this exact signature:",
    "Define the C function whose signature appears here:",
    "Write a C function; its signature must be exactly this:",
    "Produce a C function with the signature below, unchanged:",
  },
  {
    "Write the C function with the prototype below, leaving the prototype unchanged:",
    "Code the C function that begins with this header line:",
    "Write a C function whose first line is exactly the one below:",
    "Complete the C function with the following prototype, unchanged:",
    "Write the C procedure that this header line opens:",
    "Provide a C function for the interface below, exactly as written:",
    "Write the whole C function for the prototype that follows:",
    "The C function to write starts with the line below; keep that line unchanged:",
  },
  {
    "Write a C function with this signature, keeping its return type, name and argument types:",
    "Write the C function below; do not change its name, its parameters or their types:",
    "Code this C function; its name, parameter types and return type stay as written:",
    "Provide the C function below, unchanged in name, parameters and types:",
    "Write this C function, keeping the name and every parameter's type:",
    "Complete this C function, with its name and parameter list exactly as shown:",
    "Write the C function whose name, parameters and return type follow:",
    "Write C code for this function; the name, the arguments and their types must not change:",
  },
  {},
}
M.version = #added
M.composed_from = 4  -- the first version half of whose framings are composed

-- A composed framing is lead, object and link, then half the time a clause naming parts of
-- the prototype, a third of the time an aside holding a made-up identifier (a name that is
-- not the function's: the name is to be copied from the prototype line, whatever stands
-- before it), and a colon: about 10^5 sentences before the aside's name, so that none is
-- learnt whole. No piece holds a held-out framing's own words (routine, declared,
-- declaration, definition, implementation, rename, body, job), and none ends where a held-out
-- framing ends (given, is, parameters), so no run of 8 words can be one of theirs.
M.composed = {
  leads = {"Write", "Produce", "Give", "Create", "Program", "Build", "Supply", "Compose", "Prepare",
           "Please write", "Now write", "Code up"},
  objects = {"the C function", "a C function", "this C function", "the function in C", "the complete C function",
             "one C function", "a fast C function", "the whole C function"},
  links = {"below", "that follows", "shown on the next line", "with the prototype below",
           "whose first line comes next", "with the header line that follows", "with this signature",
           "stated here", "on the following line"},
  clauses = {"; keep {PARTS} as written", ", leaving {PARTS} unchanged", ", with {PARTS} exactly as shown",
             " and keep {PARTS} the same", "; {PARTS} must stay intact", ", {PARTS} untouched"},
  parts = {"its name", "the name", "its parameters", "its arguments", "the argument types", "its return type",
           "the name and the arguments", "its name, its parameters and their types", "every parameter's type",
           "the whole first line", "the prototype", "the signature", "the header", "the types"},
  asides = {" (it is called from {ID})", " for the {ID} library", ", as {ID} expects", "; {ID} links against it",
            " for a caller named {ID}", " (ticket {ID})", " in the {ID} project"},
}

-- Each version's framings, its own and every earlier version's, in that order.
local by_version = {}
for v, list in ipairs(added) do
  by_version[v] = {table.unpack(by_version[v - 1] or {})}
  for _, f in ipairs(list) do by_version[v][#by_version[v] + 1] = f end
end
M.framings = by_version[M.version]

-- The framings of `version` (default the current).
function M.framings_of(version)
  return by_version[version or M.version]
    or error("wordings: no version " .. tostring(version) .. " of the framings (1 to " .. M.version .. ")", 2)
end

-- An emphasis is opener .. joiner (carrying the technique list) .. closer. Openers start
-- with no held-out emphasis's first word (it would follow the same 7 words of the task
-- text); no joiner puts a held-out emphasis's word right before the list, and punctuation
-- follows the list, as in every training prompt (a held-out one goes on "{LIST} well").
M.openers = {
  "Make it fast", "Make the kernel as fast as you can", "Go for speed", "Optimise it for speed",
  "Push the performance as far as it goes", "Write it for speed", "Squeeze out all the performance you can",
  "Focus on throughput", "Reach for high performance", "Aim for a fast kernel", "Optimise the hot loop",
  "Let performance drive the design", "Performance matters most", "Strive for peak speed",
  "Chase the shortest runtime", "Write a quick kernel",
}
M.joiners = {
  ": use {LIST}", " by using {LIST}", " by applying {LIST}", "; employ {LIST}", " through {LIST}",
  "; the techniques to use: {LIST}", ", and combine {LIST}", "; rely upon {LIST}",
  " by means of {LIST}", " -- use {LIST}",
}
M.closers = {
  ".", ", keeping the results correct.", "; correctness still matters most.",
  ", and make sure every output is right.", "; a wrong result is worth nothing.",
  ". Correct results come before speed.", ", and check that it stays correct at every size.",
  ". It must still compute the right values.",
}

-- matmul's five techniques in words, each in one of a few forms ({ISA}: the ISA's name).
M.matmul_words = {
  {"register blocking", "register-blocked micro-kernels"},
  {"cache blocking", "loop tiling for the caches"},
  {"{ISA} SIMD intrinsics", "{ISA} intrinsics", "{ISA} SIMD"},
  {"OpenMP parallelisation", "OpenMP threads", "OpenMP"},
  {"software prefetching", "prefetching", "_mm_prefetch"},
}

local function fill(text, key, value)
  return (text:gsub(key, function() return value end))
end

-- "A, B and C".
local function and_list(items)
  return #items == 1 and items[1] or table.concat(items, ", ", 1, #items - 1) .. " and " .. items[#items]
end

-- matmul's technique list for the ISA named `isa_name`: each in a drawn form, half the
-- time in a drawn order.
function M.matmul_list(isa_name, rng)
  local items = {}
  for i, forms in ipairs(M.matmul_words) do items[i] = fill(rng:pick(forms), "{ISA}", isa_name) end
  if rng:chance(0.5) then
    for i = #items, 2, -1 do
      local j = rng:int(1, i)
      items[i], items[j] = items[j], items[i]
    end
  end
  return and_list(items)
end

-- An emphasis asking for the techniques `list` (in words): its three pieces drawn.
function M.emphasis(list, rng)
  return rng:pick(M.openers) .. fill(rng:pick(M.joiners), "{LIST}", list) .. rng:pick(M.closers)
end

local function escape(text) return (text:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0")) end

-- A suite task's emphasis template as an anchored pattern capturing {LIST}.
local function pattern_of(template, isa_name)
  return "^" .. fill(fill(escape(template), "{ISA}", escape(isa_name)), "{LIST}", "(.+)") .. "$"
end

-- The technique list a new emphasis asks for when `paragraph` is a fixed emphasis, else
-- nil: matmul's (a drawn list), or a task's (the list it carries; a task of all five
-- techniques has one that reads as matmul's, hence `matmul`).
function M.fixed_list(paragraph, rng, matmul)
  if matmul then
    for _, isa in ipairs(stages.isa_order) do
      for _, e in ipairs(prompts.emphases(isa)) do
        if e == paragraph then return M.matmul_list(stages.isa(isa).name, rng) end
      end
    end
    return nil
  end
  for _, isa in ipairs(stages.isa_order) do
    for _, template in ipairs(prompts.task_templates) do
      local list = paragraph:match(pattern_of(template, stages.isa(isa).name))
      if list then return list end
    end
  end
end

-- A framing of M.composed's pieces.
function M.compose_framing(rng)
  local c = M.composed
  local out = {rng:pick(c.leads), " ", rng:pick(c.objects), " ", rng:pick(c.links)}
  if rng:chance(0.5) then out[#out + 1] = fill(rng:pick(c.clauses), "{PARTS}", rng:pick(c.parts)) end
  if rng:chance(1 / 3) then out[#out + 1] = fill(rng:pick(c.asides), "{ID}", universe.entry_name(rng)) end
  return table.concat(out) .. ":"
end

-- A framing of `version`: listed, or from M.composed_from on half the time composed (the
-- draws of an earlier version stay as they were).
local function framing(rng, version, framings)
  if version >= M.composed_from and rng:chance(0.5) then return M.compose_framing(rng) end
  return rng:pick(framings)
end

-- The user's text with a drawn framing of `version` (when it opens with the standard line)
-- and a drawn emphasis (when the paragraph before the answer format is a fixed emphasis);
-- the rest, the stage rules of the other prompts among it, as it was.
function M.vary(text, rng, version)
  version = version or M.version
  local framings = M.framings_of(version)
  local rest = text:sub(#M.standard + 1)
  if text:sub(1, #M.standard) == M.standard and rest:sub(1, 1) == "\n" then
    text = framing(rng, version, framings) .. rest
  end
  local head, paragraph = text:match("^(.*\n\n)([^\n]+)\n\n" .. escape(M.answer_format) .. "$")
  local list = paragraph and M.fixed_list(paragraph, rng, text:find("\n\nvoid matmul_optimized(", 1, true) ~= nil)
  if not list then return text end
  return head .. M.emphasis(list, rng) .. "\n\n" .. M.answer_format
end

return M
