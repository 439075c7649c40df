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

t.test("bounds and checks refuse impossible values with one line naming the option", function()
  local checked = {
    options = {
      {"steps", 200, "steps", min = 1},
      {"timeout", 8.0, "seconds", above = 0},
      {"top_p", 1.0, "nucleus", above = 0, max = 1},
      {"lr", {2e-7, 5e-7}, "rates", min = 0},
      {"device", "cpu", "where", check = function(v)
        if v == "cpu" or v == "cuda" then return true end
        return nil, "expected cpu or cuda, got '" .. v .. "'"
      end},
      {"heads", 4, "heads", min = 1},
      {"hidden", 64, "width", min = 1},
    },
    check = function(o)
      if o.hidden % o.heads ~= 0 then return "--hidden must be a multiple of --heads" end
    end,
    profiles = {bad = {steps = 0}},
  }
  local function refused(argv, text)
    local o, err = args.try_parse(argv, checked)
    t.eq(o, nil, table.concat(argv, " ") .. " was accepted")
    t.contains(err, text)
    t.ok(not err:find("\n"), "one line: " .. err)
  end
  refused({"--steps=-1"}, "--steps must be at least 1, got -1")
  refused({"--steps=0"}, "--steps must be at least 1, got 0")
  refused({"--timeout=0"}, "--timeout must be greater than 0, got 0")
  refused({"--timeout=-2.5"}, "--timeout must be greater than 0")
  refused({"--top_p=1.5"}, "--top_p must be at most 1, got 1.5")
  refused({"--lr=1e-4,-1e-4"}, "--lr: each value must be at least 0, got -0.0001")
  refused({"--device=gpu"}, "--device: expected cpu or cuda, got 'gpu'")
  refused({"--hidden=66"}, "--hidden must be a multiple of --heads")
  refused({"--profile=bad"}, "--steps must be at least 1, got 0")
  local o = assert(args.try_parse({"--steps=1", "--timeout=0.5", "--lr=0", "--device=cuda"}, checked))
  t.eq({o.steps, o.timeout, o.lr, o.device}, {1, 0.5, {0}, "cuda"})
  local _, _, help = args.try_parse({"--help"}, checked)
  t.contains(help, "(>= 1)")
  t.contains(help, "(> 0, <= 1)")
end)

t.run()
