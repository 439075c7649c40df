-- Readable text for Lua values: nested tables indented, keys sorted, cycles and
-- depth marked. The REPL prints results with it.
--
--   pretty.format({a = {1, 2}, b = "x"})  --> '{ a = { 1, 2 }, b = "x" }'
--   pretty.format(t, {depth = 2, width = 100})

local pretty = {}

local DEFAULTS = {depth = 4, width = 80, items = 50, indent = "  "}

local function is_identifier(s)
  return type(s) == "string" and s:match("^[%a_][%w_]*$") ~= nil
end

local function scalar(v)
  local t = type(v)
  if t == "string" then return string.format("%q", v):gsub("\\\n", "\\n") end
  if t == "number" and math.type(v) == "float" then
    if v ~= v then return "nan" end
    if v == math.huge then return "inf" elseif v == -math.huge then return "-inf" end
    return string.format("%.14g", v):find("[%.eEn]") and string.format("%.14g", v)
      or string.format("%.1f", v)
  end
  if t == "table" or t == "userdata" then
    local mt = getmetatable(v)
    if mt and type(mt) == "table" and mt.__tostring then return tostring(v) end
  end
  if t == "table" or t == "function" or t == "userdata" or t == "thread" then
    return tostring(v)
  end
  return tostring(v)
end

-- Keys in a stable order: the array part first, then the rest sorted by type and value.
local function ordered_keys(t)
  local n = #t
  local keys = {}
  for i = 1, n do keys[#keys + 1] = i end
  local rest = {}
  for k in pairs(t) do
    if not (math.type(k) == "integer" and k >= 1 and k <= n) then rest[#rest + 1] = k end
  end
  table.sort(rest, function(a, b)
    local ta, tb = type(a), type(b)
    if ta ~= tb then return ta < tb end
    if ta == "number" or ta == "string" then return a < b end
    return tostring(a) < tostring(b)
  end)
  for _, k in ipairs(rest) do keys[#keys + 1] = k end
  return keys, n
end

local function format(v, opts, level, seen)
  if type(v) ~= "table" then return scalar(v) end
  local mt = getmetatable(v)
  if type(mt) == "table" and mt.__tostring then return tostring(v) end
  if seen[v] then return "<cycle>" end
  if next(v) == nil then return "{}" end
  if level >= opts.depth then return "{...}" end
  seen[v] = true
  local keys, n = ordered_keys(v)
  local parts = {}
  for i, k in ipairs(keys) do
    if i > opts.items then
      parts[#parts + 1] = string.format("... (%d more)", #keys - opts.items)
      break
    end
    local value = format(v[k], opts, level + 1, seen)
    if math.type(k) == "integer" and k >= 1 and k <= n then
      parts[#parts + 1] = value
    elseif is_identifier(k) then
      parts[#parts + 1] = k .. " = " .. value
    else
      parts[#parts + 1] = "[" .. scalar(k) .. "] = " .. value
    end
  end
  seen[v] = nil
  local inline = "{ " .. table.concat(parts, ", ") .. " }"
  if #inline + #opts.indent * level <= opts.width and not inline:find("\n") then
    return inline
  end
  local pad = opts.indent:rep(level + 1)
  return "{\n" .. pad .. table.concat(parts, ",\n" .. pad) .. "\n" .. opts.indent:rep(level) .. "}"
end

function pretty.format(v, opts)
  local o = {}
  for k, d in pairs(DEFAULTS) do o[k] = (opts and opts[k]) or d end
  return format(v, o, 0, {})
end

-- Prints each argument formatted, separated by tabs, as the lua REPL prints results.
function pretty.print(...)
  local n = select("#", ...)
  local out = {}
  for i = 1, n do out[i] = pretty.format((select(i, ...))) end
  io.stdout:write(table.concat(out, "\t"), "\n")
  io.stdout:flush()
end

return pretty
