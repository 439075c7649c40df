-- The report of an experiment's runs: the paper's figures and tables.
--
--   engine report.lua runs/experiment1          # writes runs/experiment1/report/
--   engine report.lua runs/experiment2 --out=/tmp/r
--   engine report.lua runs/experiment2/lr=5e-07,opt=O3 --lineage=42   # one kernel's ancestry
--   engine report.lua runs/new runs/baseline    # compare two run directories: compare.md
--   engine report.lua runs/experiment3          # adds multi-turn against single-turn
--
-- Writes reward.png (mean reward per step or SQD iteration, one line per configuration:
-- Fig. 3 / Fig. 7), gflops.png (max GFLOPS: Fig. 4 / Fig. 8), report.md (Table II: best
-- GFLOPS, peak ratio, learning gain against lr = 0; Table III: techniques of each best
-- kernel, its SIMD column named after the vector ISA the prompts asked for; the best
-- kernel's source and lineage) and best_kernel.c. The console's last lines say whether
-- learning beat lr = 0 beyond seed noise, with the intervals.
--
-- Without gnuplot the figures are not drawn: report.md and best_kernel.c are written all
-- the same, with the figures' data (reward.dat, gflops.dat) and gnuplot scripts, and
-- report.md and the console say how to get the pictures (install gnuplot, run again).
--
-- Seeds (runs of --seeds, or any runs that differ only in their seed): they form one
-- configuration. Table II then gives each figure as "mean ± h", h the half-width of its 95%
-- interval over the seeds (Student t, n - 1 degrees of freedom), with a last column of
-- the seeds; learning and reward gains are the per-seed differences from the lr = 0 run
-- of the same seed, and a list under the table says for each learning configuration
-- whether that interval excludes 0 (a gain beyond seed noise). The figures draw the mean
-- over the seeds with a band of mean ± h. With one seed per configuration all is as it was.
--
-- Two directories, A and B (e.g. a new strategy and its baseline): compare.md (in --out,
-- default A/report) and the console give, for each configuration both hold (matched by
-- name without the seed; a directory of one configuration matches the other's one), each
-- figure of Table II in A and in B (mean ± h over seeds) and A - B with its 95% interval
-- (Welch's, the two sides being independent runs), and whether it excludes 0.
--
-- A held-out comparison beside the runs (engine heldout.lua DIR --out=DIR/heldout.json, as
-- the main job writes it) adds the protocol's primary metric per learning configuration:
-- the overall roofline-score gain over seeds with its t interval and exact tests, read as
-- exploratory below the protocol's ten seeds.
--
-- Experiment 3's runs (experiment3.lua) add, per configuration (turns x learning rate)
-- over seeds: the mean reward of all its kernels and its best kernel, each against the
-- single-turn control of the same learning rate, which evaluates as many kernels a step
-- (paired by seed); per turn the mean reward and the share that verified; and the last
-- turn's mean reward against the first's (paired within each seed's run).

local claims = require "report.claims"
local cli = require "core.cli"
local cuda_results = require "report.cuda_results"
local figures = require "report.figures"
local results = require "report.results"
local seed_results = require "report.seed_results"
local turn_results = require "report.turn_results"

local M = {}

M.spec = {
  description = "Plots and tables of an experiment's runs (experiment1.lua, experiment2.lua, "
    .. "experiment3.lua).",
  positional = "RUN_DIR [BASELINE_DIR]",
  options = {
    {"out", "", "where to write the report [default: RUN_DIR/report]"},
    {"lineage", 0, "print the lineage of sample ID of a configuration's RUN_DIR, and stop",
     min = 0},
    cli.debug_option,
  },
}

-- One report is of one experiment: a directory that mixes runs of experiment 1 and 2 would
-- set steps beside SQD iterations in one Table II. exp: results.load's.
function M.check_one_experiment(exp)
  local first
  for _, cfg in ipairs(exp.configs) do
    local kind = cfg.identity and cfg.identity.experiment
    if kind and first and kind ~= first.identity.experiment then
      cli.fail(string.format("%s mixes runs of %s (%s) and %s (%s): report each "
                             .. "experiment's runs from a directory of their own", exp.dir,
                             first.identity.experiment, first.name, kind, cfg.name))
    end
    first = first or (kind and cfg)
  end
end

-- Runs are opened read-only: a report of a run in progress neither waits for its engine
-- nor changes anything in it.
local function lineage(dir, id)
  if not sys.exists(dir .. "/config.json") then
    io.stderr:write("report.lua: --lineage needs one configuration's run directory, e.g. "
                    .. dir .. "/<config>\n")
    os.exit(2)
  end
  local run = cli.try(nil, store.open, dir, {read_only = true})
  local chain = cli.try(nil, run.lineage, run, id)
  run:close()
  if #chain == 0 then cli.fail(string.format("%s has no sample %d", dir, id)) end
  io.stdout:write(results.lineage_table(chain), "\n")
  for _, s in ipairs(chain) do
    io.stdout:write(string.format("--- sample %d (%s, stage %s, %s) ---\n%s\n", s.id,
                                  s.extra.action or "sample", tostring(s.stage or "-"),
                                  s.status, s.code ~= "" and s.code or s.completion))
  end
end

-- The protocol's seeds for a claim (docs/protocol.md): fewer make a run exploratory.
M.protocol_seeds = 10

-- The held-out comparison heldout.lua wrote beside the runs (DIR/heldout.json), read by
-- the protocol's rules: per learning configuration the overall roofline-score gain over
-- seeds, its exact tests, and what may be said of it. nil when there is none.
function M.heldout_section(dir)
  if not sys.exists(dir .. "/heldout.json") then return nil end
  local h = claims.heldout(claims.data(dir), "heldout.json")
  -- what the audit of the runs' model found (heldout.lua's label; none before it had one)
  local label = json.read(dir .. "/heldout.json").label or "not audited (written before heldout.lua audited the model)"
  local unseen = label == "held out: unseen in pretraining (audited)"
  local names = {}
  for name in pairs(h.configs) do names[#names + 1] = name end
  table.sort(names)
  local rows, said = {}, {}
  for _, name in ipairs(names) do
    local g = h.configs[name].overall.roofline
    local values = claims.map(g.values, function(v) return string.format("%+.2f", v) end)
    -- one seed has no interval
    local gain = g.half and string.format("%+.2f ± %.2f", g.mean, g.half) or string.format("%+.2f", g.mean)
    local spread = g.half and string.format("%s | [%+.2f, %+.2f]", gain, g.lo, g.hi)
                   or string.format("%s | no interval (one seed)", gain)
    rows[#rows + 1] = string.format("| %s | %d | %s | %s | %d of %d, p = %.3g | %.3g |",
                                    name, g.n, spread, table.concat(values, ", "),
                                    g.sign_positive, g.sign_n, g.sign_p, g.perm_p)
    local reading
    if g.n < M.protocol_seeds then
      reading = string.format("exploratory: %d seeds, where the protocol asks %d before a claim", g.n, M.protocol_seeds)
    elseif g.perm_p < 0.05 and g.mean > 0 then
      reading = "learning by the protocol's rule (permutation p < 0.05, a positive mean)"
    else
      reading = "no learning shown by the protocol's rule"
    end
    if not unseen then reading = reading .. "; " .. label end
    said[#said + 1] = string.format("- `%s`: held-out roofline-score gain %s points (permutation p = %.3g): %s.",
                                    name, gain, g.perm_p, reading)
  end
  return table.concat({
    "The protocol's primary metric (docs/protocol.md): the learned policy against the base model on "
      .. "prompts no run trained on (another size, other wordings, held-out tasks), both policies' "
      .. "kernels timed side by side; per seed, the mean over the parts of each policy's roofline "
      .. "score (a kernel's speed as a percentage of the machine's roofline, 0 when it fails), "
      .. "learned minus base. Held out: " .. label .. ".", "",
    "| configuration | seeds | overall roofline gain (points) | 95% t interval | per seed | sign test | "
      .. "permutation p |",
    "| --- | ---: | ---: | --- | --- | --- | ---: |",
    table.concat(rows, "\n"), "", table.concat(said, "\n"), ""}, "\n"), said
end

function M.main(argv)
  local opts, dirs = cli.parse_dirs(argv, M.spec,
                                    "engine report.lua RUN_DIR [BASELINE_DIR] [--out=DIR]", 2)
  local dir = dirs[1]
  if opts.lineage > 0 then return lineage(dir, opts.lineage) end
  if dirs[2] then return M.compare(dir, dirs[2], opts) end

  local exp = cli.try(nil, results.load, dir)
  M.check_one_experiment(exp)
  local out = opts.out ~= "" and opts.out or (dir .. "/report")
  sys.mkdir(out)
  local titles = {experiment2 = "Experiment 2 (SQD)", experiment3 = "Experiment 3 (multi-turn refinement)"}
  local title = titles[exp.kind] or "Experiment 1 (fixed prompts)"
  local xlabel = results.x_label(exp)
  local groups = seed_results.groups(exp)

  local missing  -- why the figures were not drawn
  local function plot(file, field, what)
    local series = {}
    if exp.seeded then  -- one line per configuration: the mean over its seeds, and a band
      for i, g in ipairs(groups) do
        series[i] = {name = g.name .. (#g.runs > 1 and string.format(" (%d seeds)", #g.runs) or ""),
                     points = seed_results.band_series(g, field), band = #g.runs > 1}
      end
    else
      for i, cfg in ipairs(exp.configs) do
        series[i] = {name = cfg.name, points = results.series(cfg, field)}
      end
    end
    local drawn, why = figures.lines{file = out .. "/" .. file,
                                     title = title .. ": " .. what .. " per " .. xlabel,
                                     xlabel = xlabel, ylabel = what, series = series,
                                     integer_x = exp.kind == "experiment2"}
    if not drawn then missing = why end
  end
  plot("reward.png", "mean_reward", "mean reward")
  plot("gflops.png", "max_gflops", "max GFLOPS")
  local rerun = "engine report.lua " .. dir .. (opts.out ~= "" and (" --out=" .. opts.out) or "")

  local md = {}
  local function add(...) for _, s in ipairs{...} do md[#md + 1] = s end end
  local cuda = cuda_results.section(exp)  -- nil unless the runs were on a CUDA task
  local machine_text = cuda and "" or results.machine_text(exp)  -- no CPU ISA in a CUDA prompt
  if exp.seeded then
    add("# " .. title, "", "Runs: `" .. dir .. "`, " .. #exp.configs .. " runs: " .. #groups
        .. " configurations over seeds.", "", machine_text)
  else
    add("# " .. title, "", "Runs: `" .. dir .. "`, " .. #exp.configs .. " configurations.", "",
        machine_text)
  end
  if missing then
    add("**The figures were not drawn**: " .. missing .. ". To get them, " .. figures.install_hint
        .. " and run `" .. rerun .. "` again. Their data are in `reward.dat` and `gflops.dat` "
        .. "(gnuplot scripts: `reward.gp`, `gflops.gp`).", "")
  else
    add("![mean reward](reward.png)", "", "![max GFLOPS](gflops.png)", "")
  end
  if exp.seeded then
    add("## Best kernels (Table II)", "",
        "Each figure is the mean ± the half-width of its 95% interval over the seeds (Student t, "
        .. "n - 1 degrees of freedom); the gains are per-seed differences from the lr = 0 run of "
        .. "the same seed. The figures draw the mean with a band of that interval.", "",
        seed_results.table2_seeds(exp))
    local gains = seed_results.gains_text(exp)
    if gains then
      add("Learning against lr = 0 (95% interval of the per-seed differences, paired by seed):", "",
          gains)
    end
  else
    add("## Best kernels (Table II)", "", results.table2(exp))
  end
  local turns = turn_results.turns_table(exp)
  if turns then
    add("## Turns against single-turn (equal evaluated kernels)", "",
        "A configuration of T turns plays G episodes per prompt and step, T kernels each; the "
        .. "single-turn control (turns = 1) samples G x the largest T kernels per prompt, so every "
        .. "configuration evaluates the same number of kernels a step. The mean reward is each kernel's own "
        .. "reward (--reward, Eq. 3 by default, whatever --turn_reward trained on) over all of a run's "
        .. "kernels; each figure is the mean ± "
        .. "the half-width of its 95% interval over the seeds, and the differences from the control "
        .. "are paired by seed.", "", turns,
        "### Per turn", "", turn_results.per_turn_table(exp))
    local said = turn_results.turns_text(exp)
    if said then add("Turns (95% interval of the paired differences):", "", said) end
  end
  local heldout, heldout_said = M.heldout_section(dir)
  if heldout then add("## Held out (the protocol's primary metric)", "", heldout) end
  local peak_warnings = seed_results.peak_warnings(exp)
  if peak_warnings then add(peak_warnings) end
  local noise = results.noise_text(exp)
  if noise then add("## Timing noise", "", noise) end
  local per_task = seed_results.tasks_table(exp)
  if per_task then
    add("## Per task (a mixture)", "",
        "A kernel's speed and reward count as a percentage of its task's roofline (the measured "
        .. "memory bandwidth, or the FP64 peak of its threads). The final mean reward is the mean over the "
        .. "last quarter of the steps (iterations), with its 95% interval over the seeds.", "", per_task)
  end
  if cuda then add("## Against libtorch (a CUDA task)", "", cuda)
  else add("## Techniques of the best kernels (Table III)", "", results.table3(exp)) end
  if exp.kind == "experiment2" then
    add("## SQD pools (kernels kept per stage after each iteration)", "", results.pools_table(exp))
  end

  local best = results.best(exp)
  if best then
    local kernel = best.best
    add("## The best kernel", "",
        string.format("%.2f GFLOPS, configuration `%s`, sample %d.", kernel.gflops, best.name,
                      kernel.id), "", cuda and "```cuda" or "```c", (kernel.code:gsub("%s+$", "")), "```", "")
    add("## Lineage of the best kernel", "", results.lineage_table(best.lineage))
    local f = assert(io.open(out .. (cuda and "/best_kernel.cu" or "/best_kernel.c"), "w"))
    f:write(string.format("/* best kernel: %.2f GFLOPS, %s, sample %d of %s */\n", kernel.gflops,
                          best.name, kernel.id, best.dir), kernel.code)
    f:close()
  else
    add("## The best kernel", "", "No configuration produced a successful kernel.", "")
    add("## Lineage of the best kernel", "", "(none)", "")
  end

  local f = assert(io.open(out .. "/report.md", "w"))
  f:write(table.concat(md, "\n"))
  f:close()
  print("report written to " .. out .. "/report.md")
  if missing then
    print("figures not drawn: " .. missing .. "; to get them, " .. figures.install_hint
          .. " and run again: " .. rerun)
  end
  for _, line in ipairs(seed_results.verdict_lines(exp)) do print(line) end
  for _, line in ipairs(heldout_said or {}) do print((line:gsub("^%- ", ""):gsub("`", ""))) end
  for line in (turn_results.turns_text(exp) or ""):gmatch("[^\n]+") do print((line:gsub("^%- ", ""):gsub("`", ""))) end
end

-- report.lua A B: A's figures against B's, with the intervals of their differences.
function M.compare(a_dir, b_dir, opts)
  local a = cli.try(nil, results.load, a_dir)
  local b = cli.try(nil, results.load, b_dir)
  M.check_one_experiment(a)
  M.check_one_experiment(b)
  local text, matched = seed_results.compare(a, b)
  local out = opts.out ~= "" and opts.out or (a_dir .. "/report")
  sys.mkdir(out)
  local f = assert(io.open(out .. "/compare.md", "w"))
  f:write(text)
  f:close()
  io.stdout:write(text, "\n")
  print("comparison written to " .. out .. "/compare.md")
  if matched == 0 then
    cli.fail(string.format("%s and %s hold no configuration in common", a_dir, b_dir))
  end
end

if cli.is_main() then cli.main(arg[0], M.main, arg) end
return M
