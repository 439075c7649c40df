-- The report over seeds: runs that differ only in their seed are one configuration, its
-- figures a mean and a 95% Student t interval; the gains over lr = 0 are paired by seed
-- and said to exclude 0 or not; the figures' data carry the band. One seed per
-- configuration keeps the report as it was. report.lua A B compares two directories.
-- The runs are written directly into run stores, with figures chosen per seed.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
package.path = here .. "/?.lua;" .. package.path

local t = require "engine.test"
local results = require "report.results"
local seed_results = require "report.seed_results"
local primitives = require "primitives"

local function close(a, b, tol, what)
  t.ok(a and b and math.abs(a - b) <= (tol or 1e-9), string.format("%s: %s vs %s", what or "",
                                                                     tostring(a), tostring(b)))
end

-- One run: its best kernel at `best` GFLOPS (peak 100, OpenBLAS 10) and a mean reward per
-- step from `rewards`.
local function make_run(root, config, seed, best, rewards, machine, control)
  local sweep = require "engine.sweep"
  local dir = root .. "/" .. sweep.name(config)
  local run = store.open(dir, {config = {experiment = "experiment1", config = config, seed = seed,
                                         isa = "avx512"}, log_file = false})
  run:set("machine", machine or {cores = 2, peak_gflops = 100.0})
  if control then run:set("control", control) end
  run:set("reference", {gflops = 10.0, best = 10.0, median = 10.0, threads = 2})
  for step, r in ipairs(rewards) do
    run:add_sample{iteration = step, prompt = "", completion = "", status = "ok",
                   code = "void matmul_optimized(void) {}\n", reward = r,
                   gflops = step == #rewards and best or best / 2, timings = {}, extra = {}}
    run:log{kind = "step", step = step, mean_reward = r, max_gflops = best, kernels = 1,
            counts = {ok = 1}}
  end
  run:close()
  return dir
end

-- report.lua in a child engine, without gnuplot whatever the machine has
local function report(...)
  return primitives.engine_with({ENGINE_GNUPLOT = ""}, "report.lua", ...)
end

t.test("the 95% interval is Student's t with n - 1 degrees of freedom", function()
  local iv = seed_results.interval({1, 2, 3})
  t.eq(iv.n, 3)
  close(iv.mean, 2)
  close(iv.half, 4.303 * 1 / math.sqrt(3), 1e-3, "t(0.975, 2) * sd / sqrt(n)")
  close(iv.lo, 2 - iv.half)
  local two = seed_results.interval({10, 14})
  close(two.half, 12.706 * math.sqrt(8) / math.sqrt(2), 1e-2, "n = 2: t(0.975, 1) = 12.706")
  t.eq(seed_results.interval({5}).half, nil, "one value: no interval")
  close(seed_results.interval({5}).mean, 5)
  t.eq(seed_results.interval({}).mean, nil)
  close(seed_results.t_quantile(10), 2.228, 1e-3)
  close(seed_results.t_quantile(30), 2.042, 1e-3)
  close(seed_results.t_quantile(45), 2.021, 1e-3, "between 40 and 60: the smaller df's")
  close(seed_results.t_quantile(10000), 1.980, 1e-3)
  -- Welch: two groups of 3 with sd 1 have 4 degrees of freedom
  local d = seed_results.difference({20, 21, 22}, {10, 11, 12})
  close(d.mean, 10)
  close(d.half, 2.776 * math.sqrt(2 / 3), 1e-3)
end)

-- lr = 0 with seeds 1..3; lr = 5e-7 clearly better at every seed; lr = 2e-7 not better.
local function seeded_sweep(root)
  local base = {opt = "O3", beta = 0.0}
  local function cfg(lr, seed)
    local c = {lr = lr, seed = seed}
    for k, v in pairs(base) do c[k] = v end
    return c
  end
  local values = {[0.0] = {best = {10, 11, 12}, final = {1, 2, 3}},
                  [5e-7] = {best = {20, 22, 21}, final = {11, 12, 14}},
                  [2e-7] = {best = {10, 13, 9}, final = {3, 0, 3}}}
  for lr, v in pairs(values) do
    for seed = 1, 3 do
      make_run(root, cfg(lr, seed), seed, v.best[seed], {-20, v.final[seed], v.final[seed],
                                                          v.final[seed]})
    end
  end
end

t.test("Table II over seeds: mean ± half-width, gains paired by seed, their verdicts", function()
  local root = t.tmpdir()
  seeded_sweep(root)
  local out, ok = report(root)
  t.ok(ok, out)
  local md = t.read(root .. "/report/report.md")
  t.contains(md, "9 runs: 3 configurations over seeds.")
  t.contains(md, "| configuration | best GFLOPS | peak ratio | vs yardstick | learning gain | "
                 .. "final mean reward | reward gain | samples | seeds |")
  local h = 4.3027 / math.sqrt(3)  -- sd 1 over three seeds
  -- the final mean reward is the mean of the last quarter of the steps: the last step
  t.contains(md, string.format("| beta=0,lr=0,opt=O3 | 11.00 ± %.2f | 11.0%% | 1.10 ± %.2fx | "
                               .. "(baseline) | 2.00 ± %.2f | (baseline) | 12 | 3 (1,2,3) |",
                               h, h / 10, h))
  -- lr = 5e-7: per-seed gains 10, 11, 9 (GFLOPS) and 10, 10, 11 (reward)
  local g = seed_results.interval({10, 11, 9})
  local r = seed_results.interval({10, 10, 11})
  t.contains(md, string.format("| beta=0,lr=5e-07,opt=O3 | 21.00 ± %.2f | 21.0%% | 2.10 ± %.2fx | "
                               .. "1.91x (+10.00 ± %.2f GFLOPS) | 12.33 ± %.2f | +%.2f ± %.2f | 12 | "
                               .. "3 (1,2,3) |", h, h / 10, g.half,
                               seed_results.interval({11, 12, 14}).half, r.mean, r.half))
  t.contains(md, string.format("- `beta=0,lr=5e-07,opt=O3` against `beta=0,lr=0,opt=O3` (3 paired "
                               .. "seeds): learning gain +10.00 ± %.2f GFLOPS, the interval [%+.2f, "
                               .. "%+.2f] excludes 0: better than lr = 0 beyond seed noise (sign test "
                               .. "3 of 3 positive, p = 0.25; permutation p = 0.25); reward gain", g.half, g.lo, g.hi))
  -- the exact tests cannot reject with three seeds, whatever the t interval says
  t.contains(md, "not distinguishable from lr = 0 (sign test 1 of 2 positive, p = 1; permutation p = 1)")
  -- lr = 2e-7: gains 0, +2, -3: not distinguishable
  local line = md:match("\n(%- `beta=0,lr=2e%-07,opt=O3` against[^\n]*)")
  t.ok(line, "a sentence for lr = 2e-7")
  t.contains(line, "learning gain -0.33 ± ")
  t.contains(line, "includes 0: not distinguishable from lr = 0")
  t.ok(not line:find("excludes", 1, true), line)
  -- the console ends with the same verdicts, intervals included
  local tail = out:match("report written to [^\n]*\n(.*)$")
  t.ok(tail, out)
  t.contains(tail, string.format("beta=0,lr=5e-07,opt=O3 against beta=0,lr=0,opt=O3 (3 paired seeds): "
                                 .. "learning gain +10.00 ± %.2f GFLOPS, the interval [%+.2f, %+.2f] "
                                 .. "excludes 0: better than lr = 0 beyond seed noise", g.half, g.lo, g.hi))
  t.contains(tail, "beta=0,lr=2e-07,opt=O3 against beta=0,lr=0,opt=O3 (3 paired seeds): learning gain -0.33 ± ")
  -- the figures' data: per step the mean and the band, and the script shades it
  local dat = t.read(root .. "/report/reward.dat")
  t.contains(dat, "# beta=0,lr=0,opt=O3 (3 seeds)\n1 -20 -20 -20\n" .. string.format(
             "2 2 %.10g %.10g\n", 2 - h, 2 + h))
  t.contains(t.read(root .. "/report/reward.gp"), "with filledcurves")
  -- Table III and the best kernel still name each run
  t.contains(md, "| beta=0,lr=5e-07,opt=O3,seed=2 |")
end)

t.test("one seed per configuration: the report as without seeds", function()
  local root = t.tmpdir()
  make_run(root, {opt = "O3", beta = 0.0, lr = 0.0}, 1, 10, {-20, 1})
  make_run(root, {opt = "O3", beta = 0.0, lr = 5e-7}, 1, 20, {-20, 5})
  local out, ok = report(root)
  t.ok(ok, out)
  local md = t.read(root .. "/report/report.md")
  t.contains(md, "Runs: `" .. root .. "`, 2 configurations.")
  t.contains(md, "| configuration | best GFLOPS | peak ratio | vs yardstick | learning gain | "
                 .. "final mean reward | reward gain | samples |\n")
  t.contains(md, "| beta=0,lr=0,opt=O3 | 10.00 | 10.0% | 1.00x | (baseline) | 1.00 | (baseline) | 2 |\n")
  t.contains(md, "| beta=0,lr=5e-07,opt=O3 | 20.00 | 20.0% | 2.00x | 2.00x (+10.00 GFLOPS) | 5.00 | +4.00 | 2 |\n")
  t.ok(not md:find("±", 1, true) and not md:find("seeds", 1, true), "no intervals, no seeds")
  t.contains(t.read(root .. "/report/reward.dat"), "# beta=0,lr=0,opt=O3\n1 -20\n2 1\n")
  t.ok(not t.read(root .. "/report/reward.gp"):find("filledcurves", 1, true), "no band")
  local exp = results.load(root)
  t.contains(md, results.table2(exp))
  t.contains(out, "beta=0,lr=5e-07,opt=O3 against beta=0,lr=0,opt=O3: best 20.00 against 10.00 GFLOPS, "
                  .. "one seed each: no interval, so no verdict on learning")
end)

t.test("the report shows each run's timing noise and warns above the bound", function()
  local controls = require "method.controls"
  local root = t.tmpdir()
  make_run(root, {opt = "O3", beta = 0.0, lr = 0.0}, 1, 20, {-20, 1}, nil, controls.summary{50, 51, 49, 50, 50})
  make_run(root, {opt = "O3", beta = 0.0, lr = 5e-7}, 1, 30, {-20, 5}, nil, controls.summary{50, 40, 55, 30, 50})
  local out, ok = report(root)
  t.ok(ok, out)
  local md = t.read(root .. "/report/report.md")
  t.contains(md, "## Timing noise")
  t.contains(md, "| beta=0,lr=0,opt=O3 | 5 | 50.00 | 1.4% | 1.02 |")
  local noisy = controls.summary{50, 40, 55, 30, 50}
  t.ok(controls.noisy(noisy) and not controls.noisy(controls.summary{50, 51, 49, 50, 50}))
  t.contains(md, string.format("**Timing noise above 5%%** in `beta=0,lr=5e-07,opt=O3` (%.1f%%)", 100 * noisy.cov))
  t.ok(not md:find("in `beta=0,lr=0,opt=O3`", 1, true), "the quiet run is not named")
end)

t.test("the measured peak is the yardstick; a kernel above it gets a warning, not a ratio", function()
  local root = t.tmpdir()
  local machine = {cores = 2, peak_gflops = 100.0, measured_peak_gflops = 50.0,
                   measured_peak_date = "2026-11-25"}
  make_run(root, {opt = "O3", beta = 0.0, lr = 0.0}, 1, 20, {-20, 1}, machine)
  make_run(root, {opt = "O3", beta = 0.0, lr = 5e-7}, 1, 60, {-20, 5}, machine)
  local out, ok = report(root)
  t.ok(ok, out)
  local md = t.read(root .. "/report/report.md")
  t.contains(md, "FP64 peak 50.0 GFLOPS measured 2026-11-25 (nominal 100.0)")
  t.contains(md, "| beta=0,lr=0,opt=O3 | 20.00 | 40.0% |")
  t.contains(md, "| beta=0,lr=5e-07,opt=O3 | 60.00 | above the peak: see below |")
  t.contains(md, "`beta=0,lr=5e-07,opt=O3`: its best kernel reads 60.0 GFLOPS, above the measured FP64 "
                 .. "peak of 50.0 GFLOPS.")
  t.ok(not md:find("120.0%", 1, true), "no ratio above 100%")
  t.eq(results.peak_ratio(60, 50), "above the peak: see below")
  t.eq(results.peak_ratio(25, 50), "50.0%")
  -- runs recorded before the peak was measured: the nominal one, named so
  t.ok(results.machine_text(results.load(root)):find("measured 2026-11-25", 1, true))
  local old = {configs = {{name = "a", config = {}, identity = {}, machine = {cores = 2, peak_gflops = 100.0}}}}
  t.contains(results.machine_text(old), "FP64 peak 100.0 GFLOPS nominal (not measured)")
end)

t.test("report.lua A B: each figure in both and the difference with its interval", function()
  local a, b = t.tmpdir(), t.tmpdir()
  for seed = 1, 3 do
    make_run(a, {opt = "O3", lr = 5e-7, seed = seed}, seed, 19 + seed, {-20, 5 + seed})
    make_run(b, {opt = "O3", lr = 5e-7, seed = seed}, seed, 9 + seed, {-20, 5 + seed})
  end
  local out, ok = report(a, b, "--out=" .. a .. "/cmp")
  t.ok(ok, out)
  local md = t.read(a .. "/cmp/compare.md")
  t.contains(out, md)
  local h = 4.3027 / math.sqrt(3)
  local d = seed_results.difference({20, 21, 22}, {10, 11, 12})
  t.contains(md, "| configuration | figure | A | B | A - B | 95% interval of A - B |")
  t.contains(md, string.format("| lr=5e-07,opt=O3 | best GFLOPS | 21.00 ± %.2f | 11.00 ± %.2f | "
                               .. "+10.00 ± %.2f | the interval [%+.2f, %+.2f] excludes 0: A is higher |",
                               h, h, d.half, d.lo, d.hi))
  t.contains(md, string.format("| lr=5e-07,opt=O3 | final mean reward | 7.00 ± %.2f | 7.00 ± %.2f | "
                               .. "+0.00 ± %.2f | the interval [%+.2f, %+.2f] includes 0: no "
                               .. "difference shown |", h, h, h * math.sqrt(2) / 4.3027 * 2.7764,
                               -h * math.sqrt(2) / 4.3027 * 2.7764, h * math.sqrt(2) / 4.3027 * 2.7764))
  -- directories of one configuration each are compared whatever their names
  local c = t.tmpdir()
  make_run(c, {opt = "O1", lr = 5e-7}, 1, 5, {-20, 1})
  out, ok = report(a, c, "--out=" .. c .. "/cmp")
  t.ok(ok, out)
  t.contains(t.read(c .. "/cmp/compare.md"), "| lr=5e-07,opt=O3 / lr=5e-07,opt=O1 | best GFLOPS | "
                                           .. string.format("21.00 ± %.2f | 5.00 | +16.00 | one value: no interval |", h))
  -- nothing in common: one line
  make_run(c, {opt = "O0", lr = 0.0}, 1, 5, {-20, 1})
  local text, ok2, code = report(a, c)
  t.ok(not ok2 and code == 1, text)
  t.contains(text, "report.lua: " .. a .. " and " .. c .. " hold no configuration in common\n")
end)

t.test("a held-out comparison beside the runs adds the protocol's primary metric, read by its seeds", function()
  local root = t.tmpdir()
  seeded_sweep(root)
  local seeds = require("fakes").heldout_seeds("beta=0,lr=5e-07,opt=O3", 3)
  json.write(root .. "/heldout.json", {parts = {"sizes"}, seeds = seeds})
  local out, ok = report(root)
  t.ok(ok, out)
  local md = t.read(root .. "/report/report.md")
  t.contains(md, "## Held out (the protocol's primary metric)")
  local iv = seed_results.interval({11, 12, 13})
  t.contains(md, string.format("| beta=0,lr=5e-07,opt=O3 | 3 | +12.00 ± %.2f | [%+.2f, %+.2f] | +11.00, +12.00, +13.00 | "
                               .. "3 of 3, p = 0.25 | 0.25 |", iv.half, iv.lo, iv.hi))
  t.contains(md, "exploratory: 3 seeds, where the protocol asks 10 before a claim")
  t.contains(out, "beta=0,lr=5e-07,opt=O3: held-out roofline-score gain +12.00")
  t.contains(md, "Held out: not audited (written before heldout.lua audited the model).")
  -- what the audit of the runs' model found is said beside each reading
  json.write(root .. "/heldout.json", {parts = {"sizes"}, seeds = seeds, label = "held-out parts seen in pretraining"})
  out = report(root)
  t.contains(out, "10 before a claim; held-out parts seen in pretraining")
  json.write(root .. "/heldout.json", {parts = {"sizes"}, seeds = seeds, label = "held out: unseen in pretraining (audited)"})
  out = report(root)
  t.contains(out, "10 before a claim.")
  -- one seed: the reading without an interval (the main job run with --seeds=1)
  json.write(root .. "/heldout.json", {parts = {"sizes"}, seeds = require("fakes").heldout_seeds("beta=0,lr=5e-07,opt=O3", 1)})
  out, ok = report(root)
  t.ok(ok, out)
  t.contains(t.read(root .. "/report/report.md"), "| beta=0,lr=5e-07,opt=O3 | 1 | +11.00 | no interval (one seed) | +11.00 |")
  t.contains(out, "held-out roofline-score gain +11.00 points (permutation p = 1)")
  -- without the file, no section
  os.remove(root .. "/heldout.json")
  report(root)
  t.ok(not t.read(root .. "/report/report.md"):find("Held out", 1, true), "no held-out section")
end)

t.run()
