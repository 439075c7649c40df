-- Recomputes the figures of docs/results.md from the raw data in the tree and checks each
-- against the page's text: every interval (mean ± half-width of the 95% Student t
-- interval over seeds, stats.interval), every exact sign and permutation p-value the text
-- gives, and the figures read from raw files (model checks, the pretraining's record).
--
--   engine recompute.lua                              # the repository's docs/results.md
--   engine recompute.lua --results=/tmp/results.md    # another copy of the page
--   engine recompute.lua --data=DIR                   # raw paths relative to DIR
--
-- A claim is {section, label, raw = {paths}, text, compute}: `compute(data)` returns a
-- table of figures; `text` is the page's exact text with each figure written as a slot
-- "{name:%fmt}" (a dotted name into that table, a string.format pattern; a list prints
-- its items joined by ", "). The claim is ok when the text filled from the raw data is on
-- the page (whitespace runs count as one space). Claims with `agree` instead check that
-- two records of the same figure in the tree agree (a stored figure and its
-- recomputation). One line per claim: "ok", "MISMATCH expected X got Y" (X from the raw
-- data, Y from the page), "NO RAW DATA" or "ERROR"; any but ok fails the script.
--
-- The raw files are read by scripts/lib/report/claims.lua. The page's sections, each a table of
-- its claims' labels and texts and the figures they name, are in
-- scripts/lib/report/claims_confirmatory.lua (docs/protocol.md's experiments) and
-- claims_exploratory.lua (the rest); to add a section, write its table there and append it
-- to that module's claims(). Here: matching a claim's text against the page.

local claims = require "report.claims"
local cli = require "core.cli"
local confirmatory = require "report.claims_confirmatory"
local exploratory = require "report.claims_exploratory"

local M = {}

local map = claims.map

-- The repository root: two folders above this script (scripts/experiments/).
local function default_root()
  local source = debug.getinfo(1, "S").source:sub(2)
  local dir = source:match("^(.*)/[^/]*$") or "."
  return dir .. "/../.."
end

M.spec = {
  description = "Recompute every figure of docs/results.md from the raw data in the tree "
    .. "and check it against the page's text.",
  options = {
    {"results", "", "the page to check (default: docs/results.md of the repository)"},
    {"data", "", "the folder the raw files' paths are relative to (default: the repository root)"},
    cli.debug_option,
  },
}


---------------------------------------------------------------------------------------
-- The page's text: templates with slots, matched against the page
---------------------------------------------------------------------------------------

local function squeeze(s) return (s:gsub("%s+", " ")) end

local SLOT = "{([%w_%.]+):(%%[^}]*)}"

-- The value at a dotted name in a figures table.
local function lookup(figures, name)
  local v = figures
  for key in name:gmatch("[^.]+") do
    if type(v) ~= "table" then v = nil; break end
    v = v[tonumber(key) or key]
  end
  if v == nil then error("the figures have no value '" .. name .. "'", 0) end
  return v
end

-- One value in a slot's format (a list: its items joined by ", "); -0 prints as 0.
local function format_value(fmt, v)
  if type(v) == "table" then return table.concat(map(v, function(x) return format_value(fmt, x) end), ", ") end
  if math.type(v) == "float" and v == 0 then v = 0.0 end
  return string.format(fmt, v)
end

-- The template's slot strings filled from the figures, in order.
function M.fill(template, figures)
  local texts = {}
  for name, fmt in template:gmatch(SLOT) do texts[#texts + 1] = format_value(fmt, lookup(figures, name)) end
  local i = 0
  local text = template:gsub(SLOT, function() i = i + 1; return texts[i] end)
  return text, texts
end

-- The template as a Lua pattern whose captures are its slots.
local function loose_pattern(template)
  local parts = {}
  local pos = 1
  for s, e in function() return template:find(SLOT, pos) end do
    parts[#parts + 1] = template:sub(pos, s - 1):gsub("%p", "%%%0")
    parts[#parts + 1] = "(.-)"
    pos = e + 1
  end
  parts[#parts + 1] = template:sub(pos):gsub("%p", "%%%0")
  return table.concat(parts)
end

-- What the page says in the template's slots, where its words around them are found
-- (no slot longer than a table cell), or nil.
local function page_slots(page, template)
  local pattern = loose_pattern(template)
  local init = 1
  while true do
    local found = table.pack(page:find(pattern, init))
    if not found[1] then return nil end
    local ok = true
    for i = 3, found.n do ok = ok and #found[i] <= 80 end
    if ok then return table.move(found, 3, found.n, 1, {}) end
    init = found[1] + 1
  end
end

-- Checks one claim's text against the page: "ok", or a mismatch's line.
local function check_text(page, claim, figures)
  local template = squeeze(claim.text)
  local expected, slots = M.fill(template, figures)
  if page:find(expected, 1, true) then return "ok", table.concat(slots, ", ") end
  local said = page_slots(page, template)
  if not said then
    return "MISMATCH", string.format("expected %q (raw data) got no such text in the page", expected)
  end
  local diffs = {}
  for i, s in ipairs(slots) do
    if said[i] ~= s then diffs[#diffs + 1] = string.format("expected %q (raw data) got %q (page)", s, said[i]) end
  end
  if #diffs == 0 then
    diffs[1] = string.format("expected %q (raw data) got %q (page)", expected, table.concat(said, ", "))
  end
  return "MISMATCH", table.concat(diffs, "; ")
end

---------------------------------------------------------------------------------------
-- Claims
---------------------------------------------------------------------------------------

local function claim_line(status, claim, detail)
  local line = string.format("%-11s [%s] %s", status, claim.section, claim.label)
  if detail and detail ~= "" then line = line .. ": " .. detail end
  return line
end

-- Checks one claim: its status and its line.
function M.check(claim, d, page)
  for _, rel in ipairs(claim.raw or {}) do
    if not d:exists(rel) then return "NO RAW DATA", claim_line("NO RAW DATA", claim, rel) end
  end
  local ok, status, detail = pcall(function()
    if claim.agree then
      local got, expected = claim.agree(d)
      if got == expected then return "ok", nil end
      return "MISMATCH", string.format("expected %q (stored) got %q (recomputed)", expected, got)
    end
    return check_text(page, claim, claim.compute(d))
  end)
  if not ok then
    local path = claims.missing_path(status)
    if path then return "NO RAW DATA", claim_line("NO RAW DATA", claim, path) end
    return "ERROR", claim_line("ERROR", claim, tostring(status))
  end
  return status, claim_line(status, claim, detail)
end

-- The page's sections by name, squeezed: a "## NAME" or "## NAME: ..." heading up to
-- the next heading of that level. A claim whose section has one is looked for there
-- alone, so that two sections with the same sentence (E1 and its version 5) each answer
-- for their own figures.
function M.sections(text)
  local out, name, body = {}, nil, {}
  local function close()
    if name and not out[name] then out[name] = squeeze(table.concat(body, "\n")) end
  end
  for line in (text .. "\n"):gmatch("(.-)\n") do
    local heading = line:match("^## (.*)$")
    if heading then
      close()
      name, body = heading:match("^(.-):") or heading, {}
    end
    body[#body + 1] = line
  end
  close()
  return out
end

-- Every claim, in the page's order.
function M.claims()
  local all = {}
  local function append(list) for _, c in ipairs(list) do all[#all + 1] = c end end
  append(exploratory.opening())
  append(confirmatory.claims())
  append(exploratory.claims())
  return all
end

---------------------------------------------------------------------------------------
-- Entry points
---------------------------------------------------------------------------------------

-- Checks every claim against the page: the lines it prints, and how many are not ok.
-- opts: results (the page's path), data (the raw files' root), claims (default M.claims()).
function M.run(opts)
  local root = (opts.data and opts.data ~= "") and opts.data or default_root()
  local page_path = (opts.results and opts.results ~= "") and opts.results or (root .. "/docs/results.md")
  local f = io.open(page_path, "rb")
  if not f then cli.fail("no page to check at " .. page_path .. " (--results=)") end
  local text = f:read("a")
  f:close()
  local page, sections = squeeze(text), M.sections(text)
  local d = claims.data(root)
  local lines, failures = {}, 0
  for _, c in ipairs(opts.claims or M.claims()) do
    local status, line = M.check(c, d, sections[c.section] or page)
    lines[#lines + 1] = line
    if status ~= "ok" then failures = failures + 1 end
  end
  return lines, failures
end

-- out: where the lines go (io.stdout; tests pass a sink).
function M.main(argv, out)
  out = out or io.stdout
  local opts = require("engine.args").parse(argv, M.spec)
  local lines, failures = M.run(opts)
  out:write(table.concat(lines, "\n"), "\n")
  if failures > 0 then
    cli.fail(string.format("%d of %d claims of the page do not match their raw data", failures, #lines))
  end
  out:write(string.format("all %d claims match their raw data\n", #lines))
end

if cli.is_main() then cli.main(arg[0], M.main, arg) end
return M
