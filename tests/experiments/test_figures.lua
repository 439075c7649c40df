-- Line plots through gnuplot: lines with gaps, series with nothing to show, failures;
-- without gnuplot the data and scripts are still written, and report.lua still writes
-- report.md, saying how to get the figures.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local t = require "engine.test"
local figures = require "report.figures"
local engine_exe = assert(os.getenv("ENGINE_TEST_EXE"), "ENGINE_TEST_EXE is not set")
local has_gnuplot = figures.available()

local function png(path)
  local f = assert(io.open(path, "rb"), path .. " was not written")
  local bytes = f:read("a")
  f:close()
  t.eq(bytes:sub(1, 8), "\137PNG\r\n\26\n", path .. " is a PNG")
  return bytes
end

t.test("lines with gaps, and series with no value at all", function()
  if not has_gnuplot then return end  -- this machine has none: the tests below cover it
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

t.test("without gnuplot the data and the script are written, and the reason returned", function()
  local saved = figures.gnuplot
  for _, missing in ipairs{"", "/nonexistent/gnuplot", "engine-no-such-gnuplot"} do
    figures.gnuplot = missing
    t.eq(figures.available(), false, "'" .. missing .. "' is not available")
    local dir = t.tmpdir()
    local path, why = figures.lines{file = dir .. "/a.png", series = {
      {name = "lr=0", points = {{1, -20}, {2, 3}}}}}
    t.eq(path, nil)
    t.contains(why, "was not found")
    t.ok(not io.open(dir .. "/a.png"), "no PNG")
    t.contains(io.open(dir .. "/a.dat"):read("a"), "# lr=0\n1 -20\n2 3\n")
    t.contains(io.open(dir .. "/a.gp"):read("a"), "set output")
  end
  figures.gnuplot = saved
end)

-- report.lua on a small fake run, with gnuplot hidden (ENGINE_GNUPLOT="") and, where the
-- machine has it, with gnuplot.
t.test("report.lua writes report.md without gnuplot and says how to get the figures", function()
  local runs = t.tmpdir()
  local made = os.execute(string.format(
    "%q %q experiment1 --out=%q --steps=2 --profile=paper --G=2 --prompts_per_step=1 "
    .. "--size=32 --opt=O3 --lr=0.0,5e-7 --beta=0.0 >/dev/null 2>&1",
    engine_exe, here .. "/run_experiment.lua", runs))
  t.ok(made, "the fake run was made")
  local function report(env)
    local pipe = io.popen(string.format("%s %q report.lua %q 2>&1", env, engine_exe, runs))
    local out = pipe:read("a")
    t.ok(pipe:close(), "report.lua succeeded: " .. out)
    return out, io.open(runs .. "/report/report.md"):read("a")
  end
  local console, md = report("ENGINE_GNUPLOT=")
  t.contains(console, "report written to " .. runs .. "/report/report.md")
  t.contains(console, "figures not drawn: gnuplot ('') was not found; to get them, install gnuplot")
  t.contains(console, "engine report.lua " .. runs)
  t.contains(md, "**The figures were not drawn**")
  t.contains(md, "apt-get install gnuplot-nox")
  t.contains(md, "run `engine report.lua " .. runs .. "` again")
  t.contains(md, "| configuration | best GFLOPS | peak ratio | vs yardstick | learning gain |")
  t.ok(not md:find("![mean reward](reward.png)", 1, true), "no link to a missing figure")
  t.ok(not io.open(runs .. "/report/reward.png"), "no PNG")
  t.ok(io.open(runs .. "/report/reward.dat"), "the figure's data")
  if not has_gnuplot then return end
  os.remove(runs .. "/report/report.md")
  console, md = report("")
  t.ok(not console:find("figures not drawn", 1, true), console)
  t.contains(md, "![mean reward](reward.png)")
  t.ok(not md:find("not drawn", 1, true))
  png(runs .. "/report/reward.png")
  png(runs .. "/report/gflops.png")
end)

t.test("the report names the machine of every run, and says when runs were measured on different ones", function()
  local results = require "report.results"
  local xeon = {model = "Xeon", simd = "avx512", target = "sapphirerapids", cores = 4, peak_gflops = 300}
  local exp = {configs = {
    {name = "a", config = {}, identity = {}, machine = xeon, nodes = {{node = "n1:1"}, {node = "n1:2"}}},
    {name = "b", config = {}, identity = {}, machine = xeon, nodes = {{node = "n1:1"}, {node = "n1:2"}}}}}
  local text = results.machine_text(exp)
  t.contains(text, "Machine: Xeon, vector ISA AVX-512, target sapphirerapids, 4 cores, FP64 peak 300.0 GFLOPS nominal (not measured), "
                   .. "measured by 2 benchmark workers.")
  exp.configs[2].machine = {model = "EPYC", simd = "avx2", target = "znver3", cores = 2}
  exp.configs[2].nodes = nil
  text = results.machine_text(exp)
  t.contains(text, "Machines (their GFLOPS are not comparable with each other's): Xeon, vector ISA AVX-512")
  t.contains(text, "measured by 2 benchmark workers (a); EPYC, vector ISA AVX2")
  t.contains(text, "2 cores (b).")
end)

t.run()
