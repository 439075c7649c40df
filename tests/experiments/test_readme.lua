-- The README is a front door: at most 250 lines, and every repository path it names (in
-- backticks or as a link) exists. Every relative link of the README and of the pages in
-- docs/ reaches a file, and a heading there when it names one (#anchor).
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local t = require "engine.test"

local root = here .. "/../.."

-- A path in the README is a repository path when its first folder is one of the
-- repository's; outputs (build/, runs/, ~/.cache) and placeholders (PREFIX/, DIR) are not.
local repo_folders = {engine = true, stdlib = true, scripts = true, tests = true,
                      docs = true, models = true, perf = true, data = true, [".ci"] = true}

-- The text outside fenced code blocks, and the text inside them.
local function prose(text)
  local out, code, fenced = {}, {}, false
  for line in (text .. "\n"):gmatch("(.-)\n") do
    if line:match("^%s*```") then
      fenced = not fenced
    else
      local into = fenced and code or out
      into[#into + 1] = line
    end
  end
  return table.concat(out, "\n"), table.concat(code, "\n")
end

-- Repository paths in inline code spans and code blocks: each word that looks like a path.
local function named_paths(text)
  local paths, seen = {}, {}
  local function add(words)
    for word in words:gmatch("[^%s,;()'\"]+") do
      word = word:gsub("[:.]$", "")
      local first = word:match("^([%w_.%-]+)/")
      if first and repo_folders[first] and word:match("^[%w_.%-/]+$") and not seen[word] then
        seen[word] = true
        paths[#paths + 1] = word
      end
    end
  end
  local outside, code = prose(text)
  for span in outside:gmatch("`([^`\n]+)`") do add(span) end
  add(code)
  return paths
end

-- Relative link targets [text](target): {file =, anchor =}.
local function links(text)
  local out = {}
  for target in prose(text):gmatch("%]%(([^)%s]+)%)") do
    if not target:match("^%a[%w+.%-]*:") then   -- not http:, https:, mailto:
      local file, anchor = target:match("^([^#]*)#?(.*)$")
      out[#out + 1] = {target = target, file = file, anchor = anchor ~= "" and anchor or nil}
    end
  end
  return out
end

-- GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces to '-',
-- a repeated heading numbered.
local function anchors(text)
  local set, count = {}, {}
  for line in prose(text):gmatch("[^\n]+") do
    local heading = line:match("^#+%s+(.-)%s*$")
    if heading then
      local slug = heading:lower():gsub("[^%w%s%-_]", ""):gsub("%s", "-")
      local n = count[slug]
      set[n and (slug .. "-" .. n) or slug] = true
      count[slug] = (n or 0) + 1
    end
  end
  return set
end

local function dir_of(path) return path:match("^(.*)/[^/]*$") or "." end

local function check_links(page)
  local text = t.read(root .. "/" .. page)
  local base = root .. "/" .. dir_of(page)
  local checked = 0
  for _, link in ipairs(links(text)) do
    local file = link.file == "" and (root .. "/" .. page) or (base .. "/" .. link.file)
    t.ok(sys.exists(file), page .. " links to " .. link.target .. ", which does not exist")
    if link.anchor and file:match("%.md$") then
      t.ok(anchors(t.read(file))[link.anchor],
           page .. " links to " .. link.target .. ": no such heading there")
    end
    checked = checked + 1
  end
  return checked
end

t.test("the README has at most 250 lines", function()
  local n = select(2, t.read(root .. "/README.md"):gsub("\n", "\n"))
  t.ok(n <= 250, "README.md has " .. n .. " lines")
end)

t.test("every repository path the README names exists", function()
  local paths = named_paths(t.read(root .. "/README.md"))
  t.ok(#paths >= 10, "found only " .. #paths .. " paths: is the parser still right?")
  for _, path in ipairs(paths) do
    t.ok(sys.exists(root .. "/" .. path), "README.md names " .. path .. ", which does not exist")
  end
end)

t.test("the README's two commands and what .ci/run runs", function()
  local text = t.read(root .. "/README.md")
  t.contains(text, "bash scripts/setup.sh")
  t.contains(text, "bash scripts/test.sh")
  t.contains(t.read(root .. "/.ci/run"), "scripts/test.sh")
end)

t.test("every relative link of the README and of docs/ reaches a file and its heading", function()
  t.ok(check_links("README.md") >= 5, "the README links to fewer than 5 pages")
  for _, name in ipairs(sys.listdir(root .. "/docs")) do
    if name:match("%.md$") then check_links("docs/" .. name) end
  end
end)

t.test("the checks see a missing path, a broken link and a missing heading", function()
  local text = "see `scripts/nowhere.sh` and `runs/x/`, not scripts/plain or [a](docs/none.md)\n"
    .. "and [b](x.md#y)\n```sh\nbuild/engine tests/gone.lua  # [c](d.md)\n```\n# A heading (with) `code`\n"
  t.eq(named_paths(text), {"scripts/nowhere.sh", "tests/gone.lua"})
  local found = links(text)
  t.eq(#found, 2)
  t.eq(found[1].file, "docs/none.md")
  t.eq(found[2].anchor, "y")
  t.ok(anchors(text)["a-heading-with-code"])
  t.ok(anchors("## On a cluster (MPI)\n")["on-a-cluster-mpi"])
end)

t.run()
