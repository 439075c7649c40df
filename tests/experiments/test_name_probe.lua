-- name_probe.lua: a name scored piece by piece where the policy's own answer names its function.
local t = require "engine.test"
local args = require "engine.args"
local name_probe = dofile(engine.scripts[1] .. "/name_probe.lua")

t.test("the head is the answer up to its definition's name, or a fence and the type", function()
  local answer = "Here:\n```c\n#include <omp.h>\n#define MIN(a, b) ((a) < (b) ? (a) : (b))\n"
    .. "static double hsum(double x) { return x; }\ndouble   my_dot (int n) {\n  return 0;\n}\n```"
  t.eq(name_probe.head(answer, "double"),
       "Here:\n```c\n#include <omp.h>\n#define MIN(a, b) ((a) < (b) ? (a) : (b))\n"
         .. "static double hsum(double x) { return x; }\ndouble")
  t.eq(name_probe.head(answer, "void"), "```c\nvoid")  -- no line starts with void and a name
  t.eq(name_probe.head("no code", "void"), "```c\nvoid")
end)

t.test("the copy score is the mean probability of the pieces after the first", function()
  t.near(name_probe.copy_score({{piece = "z", p = 0.2}, {piece = "or", p = 1}, {piece = "b", p = 0.5}}), 0.75, 1e-12)
  t.eq(name_probe.copy_score({{piece = "axpy", p = 0.9}}), nil)
  t.eq(name_probe.copy_score({}), nil)
end)

t.test("the copy probe's three names, each in pieces that spell it, with probabilities", function()
  local opts = args.parse({[0] = "name_probe.lua", "--max_tokens=96", "--also=axpy"}, name_probe.spec)
  local r = name_probe.run(opts)
  t.eq(#r.rows, 3)
  local entries = {}
  for i, row in ipairs(r.rows) do
    entries[i] = row.entry
    local spelt = {}
    for j, x in ipairs(row.pieces) do
      t.ok(x.p >= 0 and x.p <= 1 + 1e-6, row.entry .. " piece " .. j .. ": " .. x.p)
      spelt[j] = x.piece
    end
    -- the pieces start where the tokens part from the head's (a merge may take its end along)
    t.ok(table.concat(spelt):sub(-#row.entry) == row.entry, table.concat(spelt, "|"))
    t.eq(#row.also.axpy > 0, true)
  end
  t.eq(entries, {"daxpy_v2", "scale_add", "zorbel_kiv"})
  t.ok(r.copy_score >= 0 and r.copy_score <= 1)
end)

t.test("a held-out task is probed at its held-out size, a training task at its training size", function()
  local tasks = require "engine.tasks"
  t.eq(tasks.asked_size(tasks.get("cholesky")), "heldout")
  t.eq(tasks.asked_size(tasks.get("axpy")), "train")
  -- the held-out tasks' own names, probed: no task without a training size stops it
  local dir = t.tmpdir()
  local spec = assert(io.open(engine.root .. "/stdlib/tasks/fft.lua")):read("a")
  local f = assert(io.open(dir .. "/fft.lua", "w"))
  f:write(spec)
  f:close()
  local r = name_probe.run(args.parse({[0] = "name_probe.lua", "--max_tokens=48", "--task_dir=" .. dir}, name_probe.spec))
  t.eq(#r.rows, 1)
  t.eq(r.rows[1].entry, "fft")
end)

t.test("a folder without tasks is a clear error", function()
  local opts = args.parse({[0] = "name_probe.lua", "--task_dir=" .. t.tmpdir()}, name_probe.spec)
  t.raises(function() name_probe.run(opts) end, "no task in")
end)
