-- Run directories are safe: nothing is made before the options and the model are checked,
-- one engine at a time writes a run, and the mistakes a user makes (a bad model, a run in
-- use, other options on --resume, a damaged checkpoint) end in one clear line.
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
package.path = here .. "/?.lua;" .. package.path

local t = require "engine.test"
local cli = require "core.cli"
local primitives = require "primitives"
local runs = require "run.runs"

local engine_exe = assert(os.getenv("ENGINE_TEST_EXE"), "ENGINE_TEST_EXE is not set")
local exp1 = dofile(engine.scripts[1] .. "/experiment1.lua")
local exp2 = dofile(engine.scripts[1] .. "/experiment2.lua")

local engine = primitives.engine

-- A user's mistake: status 1, its message on the last line, no traceback.
local function one_line(text, out, ok, code)
  t.ok(not ok and code == 1, "status 1: " .. out)
  local last = out:match("([^\n]*)\n$")
  t.ok(last and last:find(text, 1, true), "the last line says " .. text .. ": " .. out)
  t.ok(not out:find("stack traceback", 1, true), "no traceback: " .. out)
end

local parse = primitives.parse

local E1 = {"--profile=paper", "--G=2", "--prompts_per_step=1", "--size=32", "--opt=O3",
            "--lr=5e-7", "--beta=0.0"}

t.test("a missing or malformed --model leaves no run directory, and the fixed command runs", function()
  local dir = t.tmpdir()
  local out = dir .. "/runs"
  one_line("--model=" .. dir .. "/missing: no Hugging Face checkpoint there",
           engine("experiment1.lua", "--model=" .. dir .. "/missing", "--out=" .. out))
  t.ok(not sys.exists(out), "no run directory was made")
  sys.mkdir(dir .. "/garbled")
  t.write(dir .. "/garbled/config.json", "{not json")
  one_line("config.json is not a model's JSON configuration",
           engine("experiment2.lua", "--model=" .. dir .. "/garbled", "--out=" .. out))
  t.ok(not sys.exists(out), "no run directory was made")
  sys.mkdir(dir .. "/noweights")
  t.write(dir .. "/noweights/config.json", '{"model_type": "qwen2"}')
  one_line("--model=" .. dir .. "/noweights: cannot load the model on ",
           engine("experiment1.lua", "--model=" .. dir .. "/noweights", "--out=" .. out))
  t.ok(not sys.exists(out), "no run directory was made")
  -- --debug shows where it came from
  local text = engine("experiment1.lua", "--model=" .. dir .. "/missing", "--out=" .. out, "--debug")
  t.contains(text, "stack traceback:")
  -- in-process, with a policy whose load fails: the same
  local deps = primitives.deps()
  if primitives.fake then
    deps.policy.load = function() error("safetensors: truncated file\nframe #0", 0) end
    local ok, err = pcall(exp1.run, parse(exp1, "experiment1", {"--out=" .. out, "--steps=1",
                                                                 table.unpack(E1)}), deps)
    t.ok(not ok and cli.is_user_error(err), tostring(err))
    t.eq(tostring(err), "--model=fake-model: cannot load the model on cpu: safetensors: "
                        .. "truncated file")
    t.ok(not sys.exists(out), "no run directory was made")
    -- the corrected command needs no --resume and no cleaning up
    local done = exp1.run(parse(exp1, "experiment1", {"--out=" .. out, "--steps=1",
                                                      table.unpack(E1)}), primitives.deps())
    t.eq(done[1].steps, 1)
  end
end)

t.test("impossible values are refused before anything is made", function()
  local out = t.tmpdir() .. "/runs"
  for _, case in ipairs{{"experiment1.lua", "--steps=-1", "--steps must be at least 1"},
                        {"experiment2.lua", "--iterations=0", "--iterations must be at least 1"},
                        {"experiment1.lua", "--timeout=-2", "--timeout must be greater than 0"},
                        {"experiment2.lua", "--size=0", "--size must be at least 1"},
                        {"pretrain.lua", "--steps=0", "--steps must be at least 1"}} do
    local text, ok, code = engine(case[1], case[2], "--out=" .. out)
    t.ok(not ok and code == 2, case[2] .. " exits 2: " .. text)
    t.eq(text, case[1] .. ": " .. case[3] .. ", got " .. case[2]:match("=(.*)$") .. "\n")
    t.ok(not sys.exists(out), case[2] .. ": no run directory was made")
  end
end)

-- What the machine cannot hold: more threads than its cores, a --size whose measurement
-- inputs do not fit, a --G whose sampling does not fit in memory (on the CPU).
t.test("options beyond what the machine holds are refused in one line, before anything is made", function()
  local out = t.tmpdir() .. "/runs"
  local cores = bench.machine().cores
  for _, case in ipairs{
    {"experiment1.lua", "--size=20000", "--size=20000: at most "},
    {"experiment2.lua", "--size=20000", "--size=20000: at most "},
    {"experiment1.lua", "--threads=9999", "--threads=9999: at most " .. cores .. ", the cores"},
    {"experiment2.lua", "--threads=" .. (cores + 1), "--threads=" .. (cores + 1) .. ": at most " .. cores},
    {"experiment1.lua", "--G=1000000", "--G=1000000: 1000000 completions x 2 prompt(s) of up to "},
    {"experiment2.lua", "--G=1000000", "--G=1000000: 1000000 completions x 1 prompt(s) of up to "},
  } do
    local text, ok, code = engine(case[1], case[2], "--device=cpu", "--out=" .. out)
    one_line(case[3], text, ok, code)
    t.ok(not sys.exists(out), case[2] .. ": no run directory was made")
  end
  -- the G bound's reason
  t.contains(engine("experiment1.lua", "--G=1000000", "--device=cpu", "--out=" .. out),
             "for the policy's key/value cache and logits")
end)

t.test("an --out holding another experiment's runs is refused; report.lua refuses a mix", function()
  local out = t.tmpdir() .. "/runs"
  exp1.run(parse(exp1, "experiment1", {"--out=" .. out, "--steps=1", table.unpack(E1)}),
           primitives.deps())
  one_line("--out=" .. out .. " holds runs of experiment1 (beta=0,lr=5e-07,opt=O3): experiment2's "
           .. "runs need a directory of their own",
           engine("experiment2.lua", "--out=" .. out, "--iterations=1"))
  local entries = sys.listdir(out)
  table.sort(entries)
  t.eq(entries, {"beta=0,lr=5e-07,opt=O3", "yardsticks.json"}, "no run of experiment 2 was made")
  local ok, err = pcall(exp2.run, parse(exp2, "experiment2", {"--out=" .. out, "--iterations=1",
                                                              "--resume"}), primitives.deps())
  t.ok(not ok and cli.is_user_error(err), "--resume too: " .. tostring(err))
  -- a directory that mixes them all the same (runs moved into it): no report of both
  local other = t.tmpdir() .. "/runs2"
  exp2.run(parse(exp2, "experiment2", {"--out=" .. other, "--iterations=1", "--profile=paper",
                                       "--G=2", "--size=32", "--pool_size=2", "--opt=O3",
                                       "--lr=5e-7"}), primitives.deps())
  assert(os.rename(other .. "/lr=5e-07,opt=O3", out .. "/lr=5e-07,opt=O3"))
  one_line(out .. " mixes runs of experiment1 (beta=0,lr=5e-07,opt=O3) and experiment2 "
           .. "(lr=5e-07,opt=O3): report each experiment's runs from a directory of their own",
           engine("report.lua", out))
  t.ok(not sys.exists(out .. "/report"), "no report was written")
end)

t.test("a second engine on a run in use is refused, naming the holder", function()
  local dir = t.tmpdir()
  local out = dir .. "/runs"
  sys.mkdir(dir .. "/model")
  t.write(dir .. "/model/config.json", '{"model_type": "qwen2"}')  -- never loaded: refused first
  local config_dir = out .. "/beta=0,lr=5e-07,opt=O3"
  t.write(dir .. "/hold.lua", [[
local run = store.open(arg[1], {log_file = false})
io.stdout:write(sys.pid(), "\n")
io.stdout:flush()
sys.sleep(60)
]])
  local holder = io.popen(string.format("exec %q %q %q", engine_exe, dir .. "/hold.lua", config_dir))
  local pid = math.tointeger(tonumber(holder:read("l")))
  t.ok(pid, "the first engine holds the run")
  local argv = {"--model=" .. dir .. "/model", "--out=" .. out, "--resume", "--opt=O3",
                "--lr=5e-7", "--beta=0.0"}
  one_line(config_dir .. " is in use by another engine (pid " .. pid .. ")",
           engine("experiment1.lua", table.unpack(argv)))
  -- in-process: the check before the model loads, and store.open's own refusal after it
  if primitives.fake then
    local opts = parse(exp1, "experiment1", {"--out=" .. out, "--resume", "--steps=1",
                                             table.unpack(E1)})
    local ok, err = pcall(exp1.run, opts, primitives.deps())
    t.ok(not ok and cli.is_user_error(err))
    t.contains(tostring(err), "is in use by another engine (pid " .. pid .. ")")
    ok, err = pcall(runs.open_run, config_dir, {}, {resume = true})
    t.ok(not ok and cli.is_user_error(err))
    t.contains(tostring(err), config_dir .. " is in use by another engine (pid " .. pid .. ")")
  end
  os.execute("kill -9 " .. pid)
  holder:close()
  t.eq(store.holder(config_dir), nil, "the killed engine's lock is gone")
end)

t.test("--resume with other options names them, and no option the command line lacks", function()
  local out = t.tmpdir()
  exp1.run(parse(exp1, "experiment1", {"--out=" .. out, "--steps=1", table.unpack(E1)}),
           primitives.deps())
  local other = {"--out=" .. out, "--resume", "--steps=2", table.unpack(E1)}
  other[#other + 1] = "--size=16"
  local ok, err = pcall(exp1.run, parse(exp1, "experiment1", other), primitives.deps())
  t.ok(not ok and cli.is_user_error(err), tostring(err))
  t.contains(tostring(err), "holds a run made with other options (they differ in: size)")
  t.ok(not tostring(err):find("replace_config"), tostring(err))
  -- the same options resume
  exp1.run(parse(exp1, "experiment1", {"--out=" .. out, "--resume", "--steps=2",
                                       table.unpack(E1)}), primitives.deps())
end)

t.test("a damaged checkpoint stops --resume with one line naming it", function()
  local out = t.tmpdir()
  local base = {"--out=" .. out, "--steps=1", table.unpack(E1)}
  exp1.run(parse(exp1, "experiment1", base), primitives.deps())
  local ckpt = out .. "/beta=0,lr=5e-07,opt=O3/checkpoints/update-1"
  t.write(ckpt .. "/trainer.json", "{damaged")
  local ok, err = pcall(exp1.run, parse(exp1, "experiment1", {"--resume", "--steps=2",
                                                              table.unpack(base)}),
                        primitives.deps())
  t.ok(not ok and cli.is_user_error(err), tostring(err))
  t.contains(tostring(err), "from its checkpoint " .. ckpt)
  t.ok(not tostring(err):find("\n"), "one line: " .. tostring(err))
  -- experiment 2 likewise, and the run is free again afterwards (the failed engine closed it)
  local out2 = t.tmpdir()
  local e2 = {"--out=" .. out2, "--iterations=1", "--profile=paper", "--G=2", "--size=32",
              "--pool_size=2", "--opt=O3", "--lr=5e-7"}
  exp2.run(parse(exp2, "experiment2", e2), primitives.deps())
  local ckpt2 = out2 .. "/lr=5e-07,opt=O3/checkpoints/update-1"
  t.write(ckpt2 .. "/trainer.json", "{damaged")
  ok, err = pcall(exp2.run, parse(exp2, "experiment2", {"--resume", "--iterations=2",
                                                        table.unpack(e2)}), primitives.deps())
  t.ok(not ok and cli.is_user_error(err), tostring(err))
  t.contains(tostring(err), "from its checkpoint " .. ckpt2)
  t.eq(store.holder(out2 .. "/lr=5e-07,opt=O3"), nil, "the failed run was closed")
end)

-- A checkpoint of binary garbage: the message names the file and what is wrong, and
-- quotes none of its bytes (a JSON parser's "last read: '...'" would, thousands of them).
local garbage = '{"updates": "' .. ("abcdefghij"):rep(300) .. "\255\254\1 \0 end"

t.test("a checkpoint of binary garbage stops --resume with one printable line naming the file", function()
  local out = t.tmpdir()
  local child = here .. "/run_experiment.lua"
  local text, ok = engine(child, "experiment1", "--out=" .. out, "--steps=1", table.unpack(E1))
  t.ok(ok, "the first step ran: " .. text)
  local ckpt = out .. "/beta=0,lr=5e-07,opt=O3/checkpoints/update-1"
  t.write(ckpt .. "/trainer.json", garbage)
  local code
  text, ok, code = engine(child, "experiment1", "--out=" .. out, "--steps=2", "--resume", table.unpack(E1))
  one_line(ckpt .. "/trainer.json: parse error at line 1", text, ok, code)
  local last = text:match("([^\n]*)\n$")
  t.ok(not last:find("[^\32-\126]"), "printable: " .. last)
  t.ok(not last:find("last read", 1, true) and not last:find(("abcdefghij"):rep(6), 1, true),
       "no bytes of the file: " .. last)
  t.ok(#last < 3 * #ckpt + 200, "short (three paths and the reason): " .. last)
  t.ok(not sys.exists(out .. "/beta=0,lr=5e-07,opt=O3/checkpoints/update-2"), "no step was made")
end)

-- The engine's own trainer (engine/train/checkpoint.cpp), without the Lua side's cleaning.
t.test("the engine's trainer names a damaged checkpoint file without quoting its bytes", function()
  if not (rawget(_G, "train") and rawget(_G, "policy")) then return end
  local dir = t.tmpdir()
  local text, ok = engine(here .. "/make_tiny_model.lua", dir .. "/model")
  t.ok(ok, text)
  local trainer = train.grpo(policy.load(dir .. "/model", {device = "cpu"}), {lr = 1e-4, beta = 0})
  sys.mkdir(dir .. "/ckpt")
  trainer:save(dir .. "/ckpt")
  local saved = assert(io.open(dir .. "/ckpt/trainer.json")):read("a")
  t.write(dir .. "/ckpt/trainer.json", garbage)
  local _, err = pcall(trainer.load, trainer, dir .. "/ckpt")
  t.contains(tostring(err), "train: corrupt " .. dir .. "/ckpt/trainer.json: ")
  t.ok(not tostring(err):find("last read", 1, true) and not tostring(err):find("[^\32-\126]"),
       "no bytes of the file: " .. tostring(err))
  t.write(dir .. "/ckpt/trainer.json", saved)
  t.write(dir .. "/ckpt/optimizer.pt", garbage)
  _, err = pcall(trainer.load, trainer, dir .. "/ckpt")
  t.contains(tostring(err), "train: cannot load the checkpoint " .. dir .. "/ckpt: ")
  t.ok(not tostring(err):find("\n") and not tostring(err):find("[^\32-\126]"),
       "one line, no bytes of the file: " .. tostring(err))
end)

t.test("a run made before an option existed resumes at the option's old value, not at another", function()
  local out = t.tmpdir()
  local e2 = {"--out=" .. out, "--profile=paper", "--G=2", "--size=32", "--pool_size=2", "--opt=O3",
              "--lr=5e-7"}
  exp2.run(parse(exp2, "experiment2", {"--iterations=1", table.unpack(e2)}), primitives.deps())
  -- the run as an older engine stored it: without the options added since
  local path = out .. "/lr=5e-07,opt=O3/config.json"
  local stored = json.read(path)
  t.eq(stored.update_groups, 1)
  stored.update_groups, stored.scale_rewards, stored.async = nil, nil, nil
  json.write(path, stored)
  local s = exp2.run(parse(exp2, "experiment2", {"--resume", "--iterations=2", table.unpack(e2)}),
                     primitives.deps())[1]
  t.eq(s.iterations, 2, "resumed with the values it computed with")
  local ok, err = pcall(exp2.run, parse(exp2, "experiment2", {"--resume", "--iterations=3",
                                                              "--scale_rewards=batch", table.unpack(e2)}),
                        primitives.deps())
  t.ok(not ok and cli.is_user_error(err), tostring(err))
  t.contains(tostring(err), "they differ in: scale_rewards")
end)

t.run()
