-- A pipeline's outputs written whole or not at all, and resumed only when they were made
-- with the same settings: a phase that finds its output complete skips itself, one made
-- with other options is refused, naming them. Also a text file read whole, as the
-- benchmarks read their kernels.
--
--   if outputs.matches(outputs.read_json(file), settings, file) then return "complete" end
--   local src = outputs.read_text(dir .. "/k03_blocked_collapse.c")

local cli = require "core.cli"

local M = {}

-- A file of the pipeline's output directory (opts.out).
function M.path(opts, name) return opts.out .. "/" .. name end

-- Whether two JSON-like values are equal, tables key by key.
function M.same(a, b)
  if type(a) ~= type(b) then return false end
  if type(a) ~= "table" then return a == b end
  for k, v in pairs(a) do if not M.same(v, b[k]) then return false end end
  for k in pairs(b) do if a[k] == nil then return false end end
  return true
end

-- The top-level keys whose values differ, for the error that names them.
function M.differences(a, b)
  local keys, seen = {}, {}
  for k in pairs(a) do seen[k] = true end
  for k in pairs(b) do seen[k] = true end
  for k in pairs(seen) do if not M.same(a[k], b[k]) then keys[#keys + 1] = tostring(k) end end
  table.sort(keys)
  return table.concat(keys, ", ")
end

-- A JSON file, or nil when there is none or it does not parse (a write cut by a kill).
function M.read_json(file)
  if not sys.exists(file) then return nil end
  local ok, v = pcall(json.read, file)
  return ok and type(v) == "table" and v or nil
end

function M.read_jsonl(file)
  local out = {}
  if not sys.exists(file) then return out end
  for line in io.lines(file) do
    local ok, v = pcall(json.decode, line)
    if ok and type(v) == "table" then out[#out + 1] = v end
  end
  return out
end

-- Writes lines of JSON whole or not at all (a temporary file renamed).
function M.write_jsonl(file, rows)
  local tmp = file .. ".tmp"
  local f = assert(io.open(tmp, "w"))
  for _, row in ipairs(rows) do f:write(json.encode(row), "\n") end
  f:close()
  assert(os.rename(tmp, file))
end

-- The whole text of a file; an error naming it when it cannot be read.
function M.read_text(file)
  local f = assert(io.open(file, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

function M.write_text(file, text)
  local tmp = file .. ".tmp"
  local f = assert(io.open(tmp, "w"))
  f:write(text)
  f:close()
  assert(os.rename(tmp, file))
end

-- An output's settings against this command's: complete and the same (true), absent or
-- unfinished (false), or made with other options (refused).
function M.matches(stored, settings, file)
  if not (stored and stored.complete) then return false end
  if M.same(stored.settings, settings) then return true end
  cli.fail(string.format("%s was made with other options (they differ in: %s): pass those, or "
                         .. "choose another --out", file, M.differences(stored.settings or {}, settings)))
end

return M
