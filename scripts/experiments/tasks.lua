-- The task suite as a table: name, family, split, FLOPs and bytes per call, the check's
-- bound and the yardsticks, for one named size of every task (docs/tasks.md holds its
-- output). --measure runs bench.reference on each: the fastest yardstick on this
-- machine, its version and speed.
--
--   engine tasks.lua                        # every task at its default size (train or heldout)
--   engine tasks.lua --size=test --split=heldout --task_dir=my_tasks
--   engine tasks.lua --measure              # and the fastest yardstick here

local args = require "engine.args"
local tasks = require "engine.tasks"

local opts = args.parse(arg, {
  description = "Prints the task suite as a Markdown table.",
  options = {
    {"size", "", "the named size of every task (empty: train for training tasks, heldout for held-out ones)"},
    {"split", "", "only this split (train or heldout; empty: both)"},
    {"task_dir", "", "a folder of specs added to the suite's"},
    {"measure", false, "measure every task's yardsticks here (bench.reference) and add the fastest"},
  },
})
if opts.task_dir ~= "" then tasks.add_dir(opts.task_dir) end
if opts.split ~= "" and opts.split ~= "train" and opts.split ~= "heldout" then
  error("--split must be train or heldout, got '" .. opts.split .. "'", 0)
end

local function si(x)
  for _, u in ipairs({ { 1e12, "T" }, { 1e9, "G" }, { 1e6, "M" }, { 1e3, "k" } }) do
    if x >= u[1] then return string.format("%.3g %s", x / u[1], u[2]) end
  end
  return string.format("%.3g", x)
end

local function size_text(size) return tasks.size_text(size, "=", " ") end

local families = {}
local measured_head = opts.measure and " fastest here | version | GFLOPS | GB/s |" or ""
print("| task | family | split | size | FLOPs/call | bytes/call | FLOPs/byte | yardsticks | bound |" .. measured_head)
print("| --- | --- | --- | --- | ---: | ---: | ---: | --- | --- |" .. (opts.measure and " --- | --- | ---: | ---: |" or ""))
for _, t in ipairs(tasks.list(opts.split ~= "" and opts.split or nil)) do
  local spec = tasks.get(t.name)
  local name = opts.size ~= "" and opts.size or nil
  local resolved, size = tasks.resolve_spec(spec, name)
  families[t.family] = (families[t.family] or 0) + 1
  local libs = spec.builtin and {"openblas"} or {"reference"}
  for lib in pairs(spec.yardsticks or {}) do libs[#libs + 1] = lib end
  table.sort(libs)
  local measured = ""
  if opts.measure then
    local r = bench.reference{task = t.name, size = name}
    measured = r.status == "ok"
      and string.format(" %s | %s | %.3g | %.3g |", r.library, (r.version or ""):gsub("|", "/"), r.gflops, r.gbps)
      or string.format(" %s | | | |", r.status)
  end
  print(string.format("| %s | %s | %s | %s | %s | %s | %.2f | %s | %.4g u x %s |%s", t.name, t.family, t.split,
    size_text(size), si(resolved.flops), si(resolved.bytes), resolved.flops / math.max(resolved.bytes, 1),
    table.concat(libs, ", "), resolved.bound.factor, spec.builtin and "(|A||B|)" or resolved.bound.scale, measured))
end
local n, f = 0, 0
for _, c in pairs(families) do n, f = n + c, f + 1 end
print(string.format("\n%d tasks in %d families.", n, f))
