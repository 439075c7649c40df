local t = require "engine.test"

local engine_exe = assert(os.getenv("ENGINE_TEST_EXE"))

local function run(cmdline)
  local p = io.popen(cmdline .. " 2>&1")
  local out = p:read("a")
  local ok, _, code = p:close()
  return out, ok and 0 or code
end

-- A script of the given text, saved as `name` in a fresh directory: its path.
local function script_of(name, text)
  local script = t.tmpdir() .. "/" .. name
  t.write(script, text)
  return script
end

t.test("scripts get arg and ... as the standalone lua gives them", function()
  local script = script_of("args.lua", "print(arg[0], arg[1], arg[2], select('#', ...), ...)")
  local out, code = run(string.format("%q %q one two", engine_exe, script))
  t.eq(code, 0)
  t.eq(out, script .. "\tone\ttwo\t2\tone\ttwo\n")
end)

t.test("OpenBLAS runs kernels of the CPU's vector ISA, and a user's OPENBLAS_CORETYPE stays", function()
  local core, read_as = sys.openblas()
  -- Debian's libtorch does its BLAS through OpenBLAS; a pip libtorch (the GPU machine's)
  -- through MKL, and then the engine has no OpenBLAS to steer
  local maps = assert(io.open("/proc/self/maps")):read("a")
  if not maps:lower():find("openblas", 1, true) then
    t.eq(core, nil, "no OpenBLAS is loaded, yet the engine names its kernels")
    t.eq(read_as, nil)
    return
  end
  t.ok(core, "OpenBLAS is loaded and answers for its kernels")
  local isa = {}
  for _, name in ipairs(bench.machine().isa) do isa[name] = true end
  local old = {prescott = true, core2 = true, penryn = true, dunnington = true, nehalem = true, atom = true,
               sandybridge = true, barcelona = true, bulldozer = true, piledriver = true}
  if isa.avx2 and isa.fma then
    -- Debian 12's OpenBLAS reads CPUs newer than it as Prescott (SSE3): the engine then
    -- names the kernels itself, and says what OpenBLAS had read
    t.ok(not old[core:lower()], "OpenBLAS runs " .. core .. " kernels on a CPU with AVX2 and FMA")
    if read_as then t.ok(old[read_as:lower()], "the engine chose for OpenBLAS only where it read an old kind") end
  else
    t.eq(read_as, nil, "without AVX2 the engine leaves OpenBLAS's choice")
  end
  local out, code = run(string.format("env -u ENGINE_OPENBLAS_READ_AS OPENBLAS_CORETYPE=Prescott %q -e %q", engine_exe,
                                      "print(sys.openblas())"))
  t.eq(code, 0, out)
  t.eq(out, "Prescott\tnil\n", "the user's OPENBLAS_CORETYPE is kept as given")
end)

t.test("a bare script name is found in scripts/experiments", function()
  local out, code = run(string.format("cd %q && %q host_check.lua --steps=2 --out=%q",
                                      t.tmpdir(), engine_exe, t.tmpdir() .. "/hc"))
  t.eq(code, 0, out)
  t.ok(out:find("host check: 8 samples"), out)
end)

t.test("errors show a traceback with file and line", function()
  local script = script_of("bad.lua", "local x = 1\nlocal function f() error('no good') end\nf()\n")
  local out, code = run(string.format("%q %q", engine_exe, script))
  t.eq(code, 1)
  t.ok(out:find("bad.lua:2: no good", 1, true), out)
  t.ok(out:find("stack traceback"), out)
end)

t.test("syntax errors and unknown scripts are reported", function()
  local out, code = run(string.format("%q %q", engine_exe, script_of("syntax.lua", "if then\n")))
  t.eq(code, 1)
  t.ok(out:find("syntax.lua:1:"), out)
  out, code = run(string.format("%q no_such_script.lua", engine_exe))
  t.eq(code, 1)
  t.ok(out:find("cannot find script 'no_such_script.lua'"), out)
  out, code = run(string.format("%q --bogus", engine_exe))
  t.eq(code, 2)
  t.contains(out, "unknown option '--bogus'")
end)

t.test("-e, -l and --help", function()
  local out, code = run(string.format("%q -l engine.sweep -l s=engine.sweep -e %q", engine_exe,
                                      "print(#sweep.product{x = {1, 2}}, s == sweep)"))
  t.eq(code, 0, out)
  t.eq(out, "2\ttrue\n")
  out = run(string.format("%q --help", engine_exe))
  t.ok(out:find("scripts/experiments"), out)
  t.ok(out:find("models"), out)
end)

t.test("modules are reachable by require and as globals", function()
  t.eq(require("engine.store"), store)
  t.eq(require("engine.json"), json)
  t.eq(require("engine.log"), log)
  t.ok(type(engine.root) == "string" and engine.models:find("models$"))
end)

t.test("log levels filter and bad levels are named", function()
  t.eq(log.level(), "info")
  log.set_level("warn")
  t.eq(log.level(), "warning")
  log.set_level("info")
  t.raises(function() log.set_level("loud") end, "unknown level 'loud'")
end)

t.run()
