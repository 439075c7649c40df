local t = require "engine.test"
local args = require "engine.args"

local spec = {
  description = "test",
  options = {
    {"steps", 200, "steps"},
    {"lr", 5e-7, "learning rate"},
    {"opt", "O3", "level", choices = {"O0", "O1", "O3"}},
    {"lrs", {2e-7, 5e-7}, "rates"},
    {"resume", false, "resume"},
    {"model", nil, "model dir", type = "string"},
  },
  profiles = {small = {steps = 20, lr = 1e-4}},
}

t.test("defaults apply when nothing is given", function()
  local o = assert(args.try_parse({}, spec))
  t.eq(o.steps, 200)
  t.eq(o.opt, "O3")
  t.eq(o.resume, false)
  t.eq(o.model, nil)
  t.eq(o.lrs, {2e-7, 5e-7})
end)

t.test("--key=value, --key value, flags and positionals", function()
  local o = assert(args.try_parse({"--steps=5", "--opt", "O0", "--resume", "runs/x",
                                   "--lrs=1e-3,2e-3", "--model=m"}, spec))
  t.eq(o.steps, 5)
  t.eq(math.type(o.steps), "integer")
  t.eq(o.opt, "O0")
  t.eq(o.resume, true)
  t.eq(o._, {"runs/x"})
  t.eq(o.lrs, {1e-3, 2e-3})
  t.eq(o.model, "m")
  t.eq(assert(args.try_parse({"--no-resume"}, spec)).resume, false)
end)

t.test("bad options name the problem", function()
  local _, err = args.try_parse({"--stpes=5"}, spec)
  t.contains(err, "unknown option --stpes")
  _, err = args.try_parse({"--steps=many"}, spec)
  t.ok(err:find("expects an integer"), err)
  _, err = args.try_parse({"--opt=O9"}, spec)
  t.ok(err:find("not one of: O0, O1, O3"), err)
  _, err = args.try_parse({"--steps"}, spec)
  t.ok(err:find("needs a value"), err)
end)

t.test("profiles change defaults and explicit options win", function()
  local o = assert(args.try_parse({"--profile=small"}, spec))
  t.eq(o.steps, 20)
  t.eq(o.lr, 1e-4)
  o = assert(args.try_parse({"--profile=small", "--steps=7"}, spec))
  t.eq(o.steps, 7)
  local _, err = args.try_parse({"--profile=huge"}, spec)
  t.ok(err:find("huge"), err)
end)

t.test("--help lists every option with its default", function()
  local o, err, help = args.try_parse({"--help"}, spec)
  t.eq(o, nil)
  t.eq(err, nil)
  t.contains(help, "--steps=INTEGER")
  t.ok(help:find("default: 200"), help)
  t.ok(help:find("one of: O0, O1, O3"), help)
  t.ok(help:find("small: lr=0.0001 steps=20"), help)
end)

t.run()
