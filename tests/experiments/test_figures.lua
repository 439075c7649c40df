-- Line plots through gnuplot: lines with gaps, series with nothing to show, failures.
local t = require "engine.test"
local figures = require "figures"

local function png(path)
  local f = assert(io.open(path, "rb"), path .. " was not written")
  local bytes = f:read("a")
  f:close()
  t.eq(bytes:sub(1, 8), "\137PNG\r\n\26\n", path .. " is a PNG")
  return bytes
end

t.test("lines with gaps, and series with no value at all", function()
  local dir = t.tmpdir()
  figures.lines{file = dir .. "/a.png", title = "mean reward per step", xlabel = "step",
                ylabel = "reward", series = {
                  {name = "lr=5e-07,opt=O3", points = {{1, -20}, {2, nil}, {3, 4.5}}},
                  {name = "lr=0,opt=O3", points = {{1, nil}, {2, nil}}},
                }}
  t.ok(#png(dir .. "/a.png") > 2000)
  local data = io.open(dir .. "/a.dat"):read("a")
  t.contains(data, "# lr=5e-07,opt=O3\n1 -20\n2 NaN\n3 4.5\n")
  t.ok(not data:find("lr=0,opt=O3", 1, true), "the empty series is left out")
  figures.lines{file = dir .. "/b.png", series = {{name = "x", points = {}}}}
  png(dir .. "/b.png")
  t.contains(io.open(dir .. "/b.gp"):read("a"), "no data")
end)

t.test("a gnuplot failure is an error with its message", function()
  local saved = figures.gnuplot
  figures.gnuplot = "false"
  local ok, err = pcall(figures.lines, {file = t.tmpdir() .. "/c.png", series = {}})
  figures.gnuplot = saved
  t.ok(not ok)
  t.contains(err, "gnuplot failed on")
end)

t.run()
