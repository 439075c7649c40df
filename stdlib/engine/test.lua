-- A small test harness for Lua tests run by the engine (tests/lua/*.lua).
--
--   local t = require "engine.test"
--   t.test("adds", function() t.eq(1 + 1, 2) end)
--   t.run()   -- prints one line per failure and "N passed, M failed"; exits 1 on failure

local pretty = require "engine.pretty"

local t = {}
local cases = {}

function t.test(name, fn) cases[#cases + 1] = {name = name, fn = fn} end

local function deep_equal(a, b, seen)
  if a == b then return true end
  if type(a) ~= "table" or type(b) ~= "table" then return false end
  seen = seen or {}
  if seen[a] == b then return true end
  seen[a] = b
  for k, v in pairs(a) do if not deep_equal(v, b[k], seen) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end
t.deep_equal = deep_equal

local function fail(msg, level) error(msg, (level or 1) + 2) end

function t.eq(got, want, what)
  if not deep_equal(got, want) then
    fail(string.format("%sexpected %s, got %s", what and (what .. ": ") or "",
                       pretty.format(want), pretty.format(got)))
  end
end

function t.ne(got, unwanted, what)
  if deep_equal(got, unwanted) then
    fail(string.format("%sdid not expect %s", what and (what .. ": ") or "", pretty.format(got)))
  end
end

function t.near(got, want, tol, what)
  tol = tol or 1e-9
  if type(got) ~= "number" or math.abs(got - want) > tol * math.max(1, math.abs(want)) then
    fail(string.format("%sexpected %s within %g, got %s", what and (what .. ": ") or "",
                       tostring(want), tol, tostring(got)))
  end
end

function t.ok(cond, what)
  if not cond then fail(what or "expected a true value") end
  return cond
end

-- The text must contain `part` (plain text, not a pattern).
function t.contains(text, part, what)
  if type(text) ~= "string" or not text:find(part, 1, true) then
    fail(string.format("%sexpected text containing %q, got %s", what and (what .. ": ") or "",
                       part, pretty.format(text)))
  end
end

-- Calls fn, which must raise an error whose message contains `pattern` (plain text).
function t.raises(fn, pattern)
  local ok, err = pcall(fn)
  if ok then fail("expected an error" .. (pattern and (" mentioning '" .. pattern .. "'") or "")) end
  if pattern and not tostring(err):find(pattern, 1, true) then
    fail(string.format("expected an error mentioning '%s', got: %s", pattern, tostring(err)))
  end
  return err
end

-- A fresh empty directory under the system's temporary directory.
function t.tmpdir()
  local p = io.popen("mktemp -d")
  local dir = p:read("l")
  p:close()
  return dir
end

-- A file's whole text, as its bytes are; a file that cannot be opened is an error naming it.
function t.read(path)
  local f = assert(io.open(path, "rb"))
  local text = f:read("a")
  f:close()
  return text
end

-- Writes `text` as the whole of the file at `path`.
function t.write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

-- TEST_FILTER=text runs the cases whose name holds it; TEST_PROGRESS=1 names each case
-- that passed, with its seconds, as it ends (a run cut short still shows how far it got).
function t.run()
  local passed, failed = 0, 0
  local filter = os.getenv("TEST_FILTER")
  local progress = os.getenv("TEST_PROGRESS") == "1"
  for _, c in ipairs(cases) do
    if not filter or c.name:find(filter, 1, true) then
      local started = sys.now()
      local ok, err = xpcall(c.fn, debug.traceback)
      if ok then
        passed = passed + 1
        if progress then io.stdout:write(string.format("ok %s (%.1f s)\n", c.name, sys.now() - started)) end
      else
        failed = failed + 1
        io.stdout:write("FAIL ", c.name, "\n", tostring(err), "\n")
      end
      io.stdout:flush()
    end
  end
  io.stdout:write(string.format("%d passed, %d failed\n", passed, failed))
  io.stdout:flush()
  if failed > 0 then os.exit(1) end
end

return t
