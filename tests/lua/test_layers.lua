-- The Lua wing's folders are layers: no two folders of scripts/ or stdlib/ import each
-- other, so each can be read, and changed, knowing only the folders below it. A require
-- is resolved as the engine resolves it (package.searchpath over package.path).
local t = require "engine.test"

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
-- absolute, as package.searchpath's answers are (package.path holds the engine's root)
local root = assert(io.popen(string.format("realpath %q", here .. "/../.."))):read("l")

local function lua_files(dir)
  local files = {}
  local p = io.popen(string.format("find %q -name '*.lua' -type f | sort", dir))
  for line in p:lines() do files[#files + 1] = line end
  p:close()
  return files
end

local function folder(path) return (path:match("^(.*)/[^/]*$")) end

local function canonical(path)
  local parts = {}
  for piece in path:gmatch("[^/]+") do
    if piece == ".." and #parts > 0 and parts[#parts] ~= ".." then parts[#parts] = nil
    elseif piece ~= "." then parts[#parts + 1] = piece end
  end
  return (path:sub(1, 1) == "/" and "/" or "") .. table.concat(parts, "/")
end

-- {[from_folder] = {[to_folder] = "file -> file"}} over every require of the files.
local function folder_edges(files)
  local edges = {}
  for _, f in ipairs(files) do
    local text = assert(io.open(f)):read("a")
    for mod in text:gmatch('require%s*%(?%s*"([^"]+)"') do
      local target = package.searchpath(mod, package.path)
      if target and canonical(target):sub(1, #root + 1) == root .. "/" then
        local a, b = folder(canonical(f)), folder(canonical(target))
        if a ~= b then
          edges[a] = edges[a] or {}
          edges[a][b] = edges[a][b] or (canonical(f) .. " -> " .. canonical(target))
        end
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

t.test("the check finds two folders that import each other", function()
  local edges = {["x/a"] = {["x/b"] = "x/a/f.lua -> x/b/g.lua"}, ["x/b"] = {["x/a"] = "x/b/g.lua -> x/a/h.lua"},
                 ["x/c"] = {["x/a"] = "x/c/k.lua -> x/a/f.lua"}}
  local found = mutual(edges)
  t.eq(#found, 1)
  t.contains(found[1], "x/a/f.lua -> x/b/g.lua")
end)

t.test("no two folders of scripts/ and stdlib/ import each other", function()
  local files = {}
  for _, dir in ipairs({"scripts", "stdlib"}) do
    for _, f in ipairs(lua_files(root .. "/" .. dir)) do files[#files + 1] = f end
  end
  t.ok(#files > 100, "the scripts were found: " .. #files)
  t.eq(package.searchpath("engine.tasks", package.path), root .. "/stdlib/engine/tasks.lua",
       "the engine's package.path is this tree's")
  local edges = folder_edges(files)
  local count = 0
  for _, tos in pairs(edges) do for _ in pairs(tos) do count = count + 1 end end
  t.ok(count > 10, "imports between folders were read: " .. count)
  local found = mutual(edges)
  t.eq(#found, 0, table.concat(found, "\n"))
end)

t.run()
