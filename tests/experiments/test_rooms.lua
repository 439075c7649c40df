-- The scripts' rooms import one way: scripts/lib/core reads no room, method reads core,
-- run and report read core and method (report never run), scripts/pretraining reads
-- scripts/lib, and scripts/lib reads neither scripts/pretraining nor scripts/experiments.
-- A module is named by its room ("method.prompts"), so every require shows where it points.
-- And no two folders of scripts/ or stdlib/ import each other, so each can be read, and
-- changed, knowing only the folders below it (a require resolved as the engine resolves it).
local t = require "engine.test"

local root = engine.root
local lib = root .. "/scripts/lib"

local READS = {
  core = {},
  method = {core = true},
  run = {core = true, method = true},
  report = {core = true, method = true},
}

-- The Lua files under dir (one level of folders below it at most; `depth` levels).
local function lua_files(dir, depth)
  local out = {}
  local pipe = io.popen(string.format("find %q -maxdepth %d -name '*.lua' | sort", dir, depth or 2))
  for line in pipe:lines() do out[#out + 1] = line end
  pipe:close()
  return out
end

-- The modules a file requires, comments left out (they show usage).
local function requires(path)
  local out = {}
  for line in t.read(path):gmatch("[^\n]*") do
    local code = line:gsub("%-%-.*$", "")
    for name in code:gmatch("require%s*%(?%s*[\"']([%w_.]+)[\"']") do out[#out + 1] = name end
  end
  return out
end

local ROOMS = {}
for room in pairs(READS) do ROOMS[#ROOMS + 1] = room end
table.sort(ROOMS)

t.test("every module of scripts/lib lives in a room", function()
  local loose = {}
  for _, path in ipairs(lua_files(lib)) do
    local room = path:sub(#lib + 2):match("^([^/]+)/")
    if not (room and READS[room]) then loose[#loose + 1] = path end
  end
  t.eq(loose, {}, "modules outside the rooms " .. table.concat(ROOMS, ", "))
  t.ok(#lua_files(lib) >= 25)
end)

t.test("the rooms read one way", function()
  local wrong = {}
  for _, path in ipairs(lua_files(lib)) do
    local room = path:sub(#lib + 2):match("^([^/]+)/")
    for _, name in ipairs(requires(path)) do
      local to = name:match("^([%w_]+)%.")
      if READS[to] and to ~= room and not READS[room][to] then
        wrong[#wrong + 1] = string.format("%s (%s) reads %s", path:sub(#root + 2), room, name)
      end
      if name:find("^kernelgen") or name == "kernelcompare_pairs" or name == "tiny_model" then
        wrong[#wrong + 1] = string.format("%s reads scripts/pretraining's %s", path:sub(#root + 2), name)
      end
    end
  end
  t.eq(wrong, {})
end)

t.test("a module required by its bare name is not one of scripts/lib's", function()
  local bare = {}
  for _, room in ipairs(ROOMS) do
    for _, path in ipairs(lua_files(lib .. "/" .. room)) do bare[path:match("([%w_]+)%.lua$")] = room end
  end
  local wrong = {}
  local dirs = {root .. "/scripts/experiments", root .. "/scripts/pretraining", lib, root .. "/tests/experiments"}
  for _, dir in ipairs(dirs) do
    for _, path in ipairs(lua_files(dir)) do
      for _, name in ipairs(requires(path)) do
        if bare[name] then
          wrong[#wrong + 1] = string.format("%s: require \"%s\" (now \"%s.%s\")", path:sub(#root + 2), name,
                                            bare[name], name)
        end
      end
    end
  end
  t.eq(wrong, {})
end)

local function folder(path) return (path:match("^(.*)/[^/]*$")) end

-- {[from folder] = {[to folder] = "file -> file"}} over the files' requires of this tree.
local function folder_edges(files)
  local edges = {}
  for _, path in ipairs(files) do
    for _, name in ipairs(requires(path)) do
      local target = package.searchpath(name, package.path)
      if target and target:sub(1, #root + 1) == root .. "/" and folder(target) ~= folder(path) then
        local a, b = folder(path), folder(target)
        edges[a] = edges[a] or {}
        edges[a][b] = edges[a][b] or (path:sub(#root + 2) .. " -> " .. target:sub(#root + 2))
      end
    end
  end
  return edges
end

-- Each pair of folders that import each other, with one import each way.
local function mutual(edges)
  local found = {}
  for a, tos in pairs(edges) do
    for b, why in pairs(tos) do
      if a < b and edges[b] and edges[b][a] then found[#found + 1] = why .. "  and  " .. edges[b][a] end
    end
  end
  table.sort(found)
  return found
end

t.test("no two folders of scripts/ and stdlib/ import each other", function()
  t.eq(package.searchpath("engine.tasks", package.path), root .. "/stdlib/engine/tasks.lua",
       "the engine's package.path is this tree's")
  local files = {}
  for _, dir in ipairs({"scripts", "stdlib"}) do
    for _, path in ipairs(lua_files(root .. "/" .. dir, 8)) do files[#files + 1] = path end
  end
  t.ok(#files > 100, "the scripts were found: " .. #files)
  local edges, count = folder_edges(files), 0
  for _, tos in pairs(edges) do for _ in pairs(tos) do count = count + 1 end end
  t.ok(count > 10, "imports between folders were read: " .. count)
  t.eq(mutual(edges), {})
end)

t.test("two folders that import each other are found", function()
  local edges = {["x/a"] = {["x/b"] = "x/a/f.lua -> x/b/g.lua"}, ["x/b"] = {["x/a"] = "x/b/g.lua -> x/a/h.lua"},
                 ["x/c"] = {["x/a"] = "x/c/k.lua -> x/a/f.lua"}}
  t.eq(mutual(edges), {"x/a/f.lua -> x/b/g.lua  and  x/b/g.lua -> x/a/h.lua"})
end)

t.test("a planted import against the rooms is found", function()
  local dir = t.tmpdir()
  local path = dir .. "/bad.lua"
  local f = assert(io.open(path, "w"))
  f:write('local r = require "run.options"  -- core may not read run\nlocal ok = require("core.cli")\n')
  f:close()
  t.eq(requires(path), {"run.options", "core.cli"})
  t.ok(not READS.core.run and not READS.report.run and READS.run.method)
end)

t.run()
