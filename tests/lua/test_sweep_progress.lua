local t = require "engine.test"
local sweep = require "engine.sweep"
local progress = require "engine.progress"

t.test("the product varies the first parameter slowest", function()
  local c = sweep.product{{"opt", {"O0", "O3"}}, {"lr", {2e-7, 5e-7}}, {"beta", {0, 0.001, 0.01}}}
  t.eq(#c, 12)
  t.eq(c[1], {opt = "O0", lr = 2e-7, beta = 0})
  t.eq(c[2], {opt = "O0", lr = 2e-7, beta = 0.001})
  t.eq(c[12], {opt = "O3", lr = 5e-7, beta = 0.01})
end)

t.test("map specs are taken in sorted order", function()
  local c = sweep.product{b = {1, 2}, a = {"x", "y"}}
  t.eq(c[2], {a = "x", b = 2})
end)

t.test("names are stable and selectors pick subsets", function()
  local c = sweep.product{{"opt", {"O0", "O3"}}, {"lr", {2e-7, 5e-7}}}
  t.eq(sweep.name(c[1]), "lr=2e-07,opt=O0")
  t.eq(#sweep.select(c, "opt=O3"), 2)
  t.eq(sweep.select(c, "opt=O3,lr=5e-7"), {c[4]})
  t.eq(sweep.select(c, "1,3"), {c[1], c[3]})
  t.raises(function() sweep.select(c, "7") end, "no configuration 7")
  t.raises(function() sweep.select(c, "beta=0") end, "unknown parameter 'beta'")
end)

t.test("run calls the function per configuration and can go on after errors", function()
  local c = sweep.product{{"x", {1, 2, 3}}}
  local r = sweep.run(c, function(config) return config.x * 2 end)
  t.eq(r[3].result, 6)
  r = sweep.run(c, function(config) if config.x == 2 then error("bad x") end return 0 end,
                {on_error = "continue"})
  t.ok(r[2].error:find("bad x"))
  t.eq(r[3].result, 0)
end)

local function capture()
  local lines = {}
  return {write = function(self, ...) for _, s in ipairs{...} do lines[#lines + 1] = s end end,
          flush = function() end, text = function() return table.concat(lines) end}
end

t.test("progress prints plain lines off a terminal", function()
  local out = capture()
  local bar = progress.new{total = 4, label = "train", stream = out, tty = false, interval = 0}
  for i = 1, 4 do bar:update(i, {reward = i * 1.5}) end
  bar:finish()
  local text = out:text()
  t.ok(text:find("train 1/4"), text)
  t.ok(text:find("train 4/4 .* reward=6\n"), text)
  t.ok(not text:find("\r"), "no carriage returns off a terminal")
  t.ok(text:find("ETA"), text)
end)

t.test("progress redraws one line on a terminal", function()
  local out = capture()
  local bar = progress.new{total = 10, stream = out, tty = true}
  bar:update(5)
  t.ok(out:text():find("^\r%[############............%] 5/10"), out:text())
  t.eq(progress.clock(3725), "1:02:05")
end)

t.run()
