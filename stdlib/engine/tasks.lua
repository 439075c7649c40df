-- The task suite: one Lua file per task (stdlib/tasks/*.lua, and any folder a user adds),
-- read, checked and resolved for a size here; the evaluation process gets the resolved spec
-- (engine/task/spec.hpp). A spec that is wrong is refused when it is read, naming its file
-- and field. docs/tasks.md describes the fields; stdlib/tasks/axpy.lua is a small example.
--
--   local tasks = require("engine.tasks")
--   for _, t in ipairs(tasks.list()) do print(t.name, t.family, t.split) end
--   local spec = tasks.get("axpy")
--   local problem = tasks.resolve{task = "axpy", size = "test"}   -- for bench.evaluate
local M = {}

local dirs = {}      -- folders searched, in order; a later folder's task replaces an earlier one
local cache = nil    -- name -> spec, read once per list of folders

local function default_dir()
  return (engine and engine.root or ".") .. "/stdlib/tasks"
end

-- The folders read: the suite's own, then each one added.
function M.dirs()
  local out = { default_dir() }
  for _, d in ipairs(dirs) do out[#out + 1] = d end
  return out
end

-- Adds a user's folder of specs (--task_dir=); its tasks replace the suite's of the same name.
function M.add_dir(dir)
  assert(type(dir) == "string" and dir ~= "", "tasks.add_dir: a folder name is needed")
  local f = io.open(dir, "r")
  if not f then error("tasks.add_dir: no folder '" .. dir .. "'", 2) end
  f:close()
  cache = nil  -- read again: the folder's files may have changed
  for _, d in ipairs(dirs) do if d == dir then return end end
  dirs[#dirs + 1] = dir
end

-- ---- prototypes -------------------------------------------------------------------

local scalar_types = { int = "int", long = "long", int64_t = "long", double = "double" }

-- "void axpy(int n, double alpha, const double *x, double *y)" ->
-- {returns = "void", entry = "axpy", params = {{name =, type =, const =}, ...}}
function M.parse_prototype(text)
  if type(text) ~= "string" then return nil, "must be a string" end
  local ret, name, list = text:match("^%s*(%a+)%s+([%a_][%w_]*)%s*%((.*)%)%s*;?%s*$")
  if not ret then return nil, "does not parse as 'TYPE NAME(PARAMETERS)'" end
  if ret ~= "void" and ret ~= "double" then
    return nil, "returns " .. ret .. ": a kernel returns void or double"
  end
  local params = {}
  for part in (list .. ","):gmatch("([^,]*),") do
    local p = part:gsub("%s+", " "):gsub("^ ", ""):gsub(" $", "")
    if p == "" or p == "void" then
      if #list:gsub("%s", "") > 0 and p ~= "void" then return nil, "an empty parameter" end
    else
      local is_const = p:match("^const ") ~= nil
      p = p:gsub("^const ", "")
      local base, stars, rest = p:match("^([%a_][%w_]*)%s*(%**)%s*(.*)$")
      if not base then return nil, "parameter '" .. part .. "' does not parse" end
      rest = rest:gsub("^restrict ", ""):gsub("^__restrict ", ""):gsub("^__restrict__ ", "")
      local pname = rest:match("^([%a_][%w_]*)$")
      if not pname then return nil, "parameter '" .. part .. "' has no name" end
      local t = scalar_types[base]
      if not t then return nil, "parameter '" .. pname .. "' has type " .. base .. " (int, long, double or pointers to double or int)" end
      if #stars > 1 then return nil, "parameter '" .. pname .. "': pointers to pointers are not buffers" end
      if #stars == 1 then
        if t ~= "double" and t ~= "int" then return nil, "parameter '" .. pname .. "': buffers hold double or int" end
        t = t .. "*"
      elseif is_const then
        is_const = false  -- a const scalar is a scalar
      end
      params[#params + 1] = { name = pname, type = t, const = is_const }
    end
  end
  return { returns = ret, entry = name, params = params }
end

-- ---- expressions ------------------------------------------------------------------

local expr_env_base = {
  math = math, floor = math.floor, ceil = math.ceil, sqrt = math.sqrt, abs = math.abs,
  max = math.max, min = math.min, log = math.log,
  log2 = function(x) return math.log(x, 2) end,
}

-- An expression of the size's variables: a number, a string ("2*n*n") or a function(size).
local function evaluate(expr, size, where)
  if type(expr) == "number" then return expr end
  if type(expr) == "function" then
    local ok, v = pcall(expr, size)
    if not ok then error(where .. ": " .. tostring(v), 0) end
    if type(v) ~= "number" then error(where .. ": the function returned " .. type(v) .. ", not a number", 0) end
    return v
  end
  if type(expr) ~= "string" then error(where .. ": must be a number, an expression or a function", 0) end
  local env = setmetatable({}, { __index = function(_, k)
    if size[k] ~= nil then return size[k] end
    if expr_env_base[k] ~= nil then return expr_env_base[k] end
    error("no size variable '" .. k .. "'", 0)
  end })
  local chunk, err = load("return " .. expr, "=" .. where, "t", env)
  if not chunk then error(where .. ": '" .. expr .. "' does not parse: " .. err, 0) end
  local ok, v = pcall(chunk)
  if not ok then error(where .. ": '" .. expr .. "': " .. tostring(v), 0) end
  if type(v) == "boolean" then return v end
  if type(v) ~= "number" or v ~= v then error(where .. ": '" .. expr .. "' is not a number", 0) end
  return v
end

local function integer_of(expr, size, where)
  local v = evaluate(expr, size, where)
  if math.type(v) ~= "integer" then
    if type(v) == "number" and v == math.floor(v) and math.abs(v) < 2^62 then return math.tointeger(v) end
    error(where .. ": must be an integer, got " .. tostring(v), 0)
  end
  return v
end

-- Expressions of a size for other spec formats (engine.cuda_tasks): a number, and an integer.
M.evaluate_expr, M.integer_expr = evaluate, integer_of

-- ---- specs --------------------------------------------------------------------

-- The techniques a spec may list: Table I's five, in its order (scripts/lib/method/stages.lua
-- detects them in a kernel and builds a task's stage ladder from the spec's list).
M.techniques = { "register_blocking", "cache_blocking", "simd", "omp", "prefetch" }

local known_fields = {
  name = true, family = true, split = true, statement = true, prototype = true, sizes = true,
  args = true, reference = true, flops = true, bytes = true, bound = true, techniques = true,
  requires = true, builtin = true, notes = true, roofline = true, yardsticks = true,
}
local draws = {
  uniform = {}, spd = { "n" }, dominant = { "n" }, lower = { "n" }, upper = { "n" },
  csr_row_ptr = { "rows", "cols", "per_row" }, csr_col_idx = { "rows", "cols", "per_row" },
}

local function check_draw(d, where)
  if type(d) == "string" then d = { d } end
  if type(d) ~= "table" or type(d[1]) ~= "string" then
    error(where .. ": a distribution's name ('uniform', 'spd', ...) or a table {NAME, ...}", 0)
  end
  local needs = draws[d[1]]
  if not needs then
    local names = {}
    for k in pairs(draws) do names[#names + 1] = k end
    table.sort(names)
    error(where .. ": unknown distribution '" .. d[1] .. "' (known: " .. table.concat(names, ", ") .. ")", 0)
  end
  for _, k in ipairs(needs) do
    if d[k] == nil then error(where .. "." .. k .. ": missing (" .. d[1] .. " needs " .. table.concat(needs, ", ") .. ")", 0) end
  end
  return d
end

-- Checks a spec table read from `file`; returns it with `entry`, `returns` and `params`
-- (the prototype's, each with its arg) added. Errors name the file and the field.
function M.check(spec, file)
  local function bad(field, msg) error(file .. ": " .. field .. ": " .. msg, 0) end
  if type(spec) ~= "table" then error(file .. ": a spec file returns a table", 0) end
  for k in pairs(spec) do
    if not known_fields[k] then bad(tostring(k), "unknown field") end
  end
  for _, k in ipairs({ "name", "family", "split", "statement", "prototype" }) do
    if type(spec[k]) ~= "string" or spec[k] == "" then bad(k, "missing (a string)") end
  end
  if not spec.name:match("^[%l%d_]+$") then bad("name", "lower-case letters, digits and _ only") end
  if spec.split ~= "train" and spec.split ~= "heldout" then bad("split", "must be \"train\" or \"heldout\"") end
  local proto, perr = M.parse_prototype(spec.prototype)
  if not proto then bad("prototype", perr) end
  spec.entry, spec.returns, spec.params = proto.entry, proto.returns, proto.params
  -- sizes: named tables of integer variables, the same variables in each
  if type(spec.sizes) ~= "table" then bad("sizes", "missing (a table of named sizes)") end
  for _, need in ipairs({ "test", "heldout", spec.split == "train" and "train" or nil }) do
    if type(spec.sizes[need]) ~= "table" then bad("sizes." .. need, "missing") end
  end
  local vars = nil
  for sname, s in pairs(spec.sizes) do
    if type(s) ~= "table" then bad("sizes." .. tostring(sname), "must be a table of variables") end
    local names = {}
    for k, v in pairs(s) do
      if type(k) ~= "string" or math.type(v) ~= "integer" then
        bad("sizes." .. sname .. "." .. tostring(k), "must be an integer")
      end
      names[#names + 1] = k
    end
    table.sort(names)
    local key = table.concat(names, ",")
    if vars and vars ~= key then bad("sizes." .. sname, "has variables {" .. key .. "}, other sizes {" .. vars .. "}") end
    vars = key
  end
  spec.size_variables = {}
  for v in (vars or ""):gmatch("[^,]+") do spec.size_variables[#spec.size_variables + 1] = v end
  if spec.techniques ~= nil then
    if type(spec.techniques) ~= "table" then bad("techniques", "must be a list of names") end
    for i, t in ipairs(spec.techniques) do
      local known = false
      for _, k in ipairs(M.techniques) do known = known or k == t end
      if not known then
        bad("techniques[" .. i .. "]", "'" .. tostring(t) .. "' is not one of " .. table.concat(M.techniques, ", "))
      end
    end
  end
  if spec.builtin ~= nil then  -- a task the engine implements in C++ (matmul)
    if spec.builtin ~= "matmul" then bad("builtin", "the engine's built-in task is \"matmul\"") end
  else
    if type(spec.reference) ~= "string" or not spec.reference:find(spec.entry, 1, true) then
      bad("reference", "missing (C source defining " .. spec.entry .. ")")
    end
    if type(spec.args) ~= "table" then bad("args", "missing (a table: one entry per parameter)") end
    for k in pairs(spec.args) do
      local found = false
      for _, p in ipairs(spec.params) do if p.name == k then found = true end end
      if not found then bad("args." .. tostring(k), "no such parameter in the prototype") end
    end
    for _, p in ipairs(spec.params) do
      local a = spec.args[p.name]
      local at = "args." .. p.name
      if type(a) ~= "table" then bad(at, "missing (every parameter needs one)") end
      if p.type:sub(-1) == "*" then
        if a.count == nil then bad(at .. ".count", "missing (the buffer's element count)") end
        local role = a.role or (p.const and "in" or "out")
        if role ~= "in" and role ~= "out" and role ~= "inout" then bad(at .. ".role", "must be in, out or inout") end
        if p.const and role ~= "in" then bad(at .. ".role", "a const buffer is an input") end
        if not p.const and role == "in" then bad(at .. ".role", "an input buffer is declared const") end
        p.role = role
        if role ~= "out" then a.draw = check_draw(a.draw or "uniform", file .. ": " .. at .. ".draw") end
      elseif a.draw ~= nil then
        if p.type ~= "double" then bad(at .. ".draw", "only double scalars are drawn") end
        a.draw = check_draw(a.draw, file .. ": " .. at .. ".draw")
        if a.draw[1] ~= "uniform" then bad(at .. ".draw", "a scalar is drawn uniformly") end
      elseif a.value == nil then
        bad(at .. ".value", "missing (a scalar is a value of the size or drawn)")
      end
    end
  end
  if spec.roofline == nil then spec.roofline = "compute" end
  if spec.roofline ~= "compute" and spec.roofline ~= "memory" then
    bad("roofline", "must be \"compute\" (its speed is GFLOPS) or \"memory\" (GB/s)")
  end
  if spec.yardsticks ~= nil then
    if type(spec.yardsticks) ~= "table" then bad("yardsticks", "must be a table: library name -> {link =, source =}") end
    for lib, y in pairs(spec.yardsticks) do
      local at = "yardsticks." .. tostring(lib)
      if type(lib) ~= "string" or not lib:match("^[%l%d_]+$") or lib == "reference" then
        bad(at, "a library's name (lower-case), not \"reference\" (the spec's own C)")
      end
      if type(y) ~= "table" then bad(at, "must be a table {link =, source =}") end
      if type(y.link) == "string" then y.link = { y.link } end
      if type(y.link) ~= "table" then bad(at .. ".link", "the libraries to link (\"openblas\" for -lopenblas)") end
      for i, l in ipairs(y.link) do
        if type(l) ~= "string" or not l:match("^[%l%d_]+$") then bad(at .. ".link[" .. i .. "]", "a library name") end
      end
      if type(y.source) ~= "string" or not y.source:find(spec.entry, 1, true) then
        bad(at .. ".source", "missing (C defining " .. spec.entry .. " by calling the library)")
      end
    end
  end
  for _, k in ipairs({ "flops", "bytes" }) do
    if spec[k] == nil then bad(k, "missing (an expression of the size)") end
  end
  if type(spec.bound) ~= "table" then bad("bound", "missing ({factor =, scale =, why =})") end
  if spec.bound.factor == nil then bad("bound.factor", "missing") end
  local ft = type(spec.bound.factor)
  if ft ~= "number" and ft ~= "string" and ft ~= "function" then bad("bound.factor", "must be a number or an expression") end
  if spec.bound.scale ~= nil and spec.bound.scale ~= "inputs" and spec.bound.scale ~= "output" then
    bad("bound.scale", "must be \"inputs\" or \"output\"")
  end
  if type(spec.bound.why) ~= "string" or #spec.bound.why < 20 then
    bad("bound.why", "missing (why the bound holds in double precision, and why single precision misses it)")
  end
  spec.file = file
  -- Every named size must resolve: a bad expression is the spec's error, found now.
  for sname in pairs(spec.sizes) do
    local ok, err = pcall(M.resolve_spec, spec, sname)
    if not ok then error(err, 0) end
  end
  return spec
end

-- The version call of each library a yardstick can be written for with library_yardstick.
local library_versions = {
  openblas = { declaration = "const char *openblas_get_config(void);", call = "openblas_get_config()" },
  blis = { declaration = "const char *bli_info_get_version_str(void);", call = "bli_info_get_version_str()" },
}

-- A yardstick calling OpenBLAS or BLIS: the C declarations, the library's version call
-- declared, the wrapper with the task's prototype, then yardstick_version() returning the
-- library's version. A spec file calls it as library_yardstick(library, declarations, wrapper).
function M.library_yardstick(library, declarations, wrapper)
  local version = library_versions[library]
  if not version then error("library_yardstick: no version call known for '" .. tostring(library) .. "'", 2) end
  return { link = library, source = declarations .. version.declaration .. "\n" .. wrapper
                                 .. "const char *yardstick_version(void) { return " .. version.call .. "; }\n" }
end

-- The OpenBLAS and BLIS yardsticks of a routine both libraries offer through CBLAS: the
-- same C (the CBLAS declarations, then the wrapper with the task's prototype), each with
-- its library's version call. A spec file calls it as cblas_yardsticks(declarations, wrapper,
-- others, blis_declarations), `others` holding any further yardsticks by name and
-- `blis_declarations` any declarations BLIS's source adds after the common ones.
function M.cblas_yardsticks(declarations, wrapper, others, blis_declarations)
  local out = {}
  for name, y in pairs(others or {}) do out[name] = y end
  out.openblas = M.library_yardstick("openblas", declarations, wrapper)
  out.blis = M.library_yardstick("blis", declarations .. (blis_declarations or ""), wrapper)
  return out
end

-- CBLAS's dgemm declared: the declarations of gemm_tn's and gemm_batched's yardsticks, and
-- the blis_declarations of syrk's, trmm's and trsm's.
M.cblas_dgemm_declaration = [[
void cblas_dgemm(int order, int transa, int transb, int m, int n, int k, double alpha, const double *A,
                 int lda, const double *B, int ldb, double beta, double *C, int ldc);
]]

-- The OpenBLAS and BLIS yardsticks of trmm and trsm, left and lower with L (m x m) and B
-- (m x n) row-major: cblas_dtrmm and cblas_dtrsm overwrite B, so the wrapper first copies B
-- into the task's output, inside the measured call. A spec file calls it as
-- cblas_lower_left_yardsticks(routine, output, in_place), `in_place` saying what the routine
-- does in place ("works in place").
function M.cblas_lower_left_yardsticks(routine, output, in_place)
  local names = { routine = routine, output = output, in_place = in_place }
  local declarations = ([[
#include <string.h>
void cblas_d$routine(int order, int side, int uplo, int transa, int diag, int m, int n, double alpha, const double *A,
                 int lda, double *B, int ldb);
]]):gsub("%$([%w_]+)", names)
  local wrapper = ([[
void $routine(int m, int n, const double *L, const double *B, double *$output) {
  memcpy($output, B, sizeof(double) * (size_t)m * n);  /* d$routine $in_place: the copy of B is part of the measured call */
  cblas_d$routine(101, 141, 122, 111, 131, m, n, 1.0, L, m, $output, n);  /* row-major, left, lower, no transpose, non-unit */
}
]]):gsub("%$([%w_]+)", names)
  return M.cblas_yardsticks(declarations, wrapper, nil, M.cblas_dgemm_declaration)
end

-- Reads and checks one spec file; it sees the yardstick helpers above by name.
function M.load_file(path)
  local env = setmetatable({ cblas_yardsticks = M.cblas_yardsticks, library_yardstick = M.library_yardstick,
                             cblas_lower_left_yardsticks = M.cblas_lower_left_yardsticks,
                             cblas_dgemm_declaration = M.cblas_dgemm_declaration },
                           { __index = _G })
  local chunk, err = loadfile(path, "t", env)
  if not chunk then error(path .. ": " .. err, 0) end
  local ok, spec = pcall(chunk)
  if not ok then error(path .. ": " .. tostring(spec), 0) end
  return M.check(spec, path)
end

local function spec_files(dir)
  local p = io.popen('ls -1 "' .. dir:gsub('"', '\\"') .. '" 2>/dev/null')
  local files = {}
  if p then
    for f in p:lines() do
      if f:match("%.lua$") then files[#files + 1] = dir .. "/" .. f end
    end
    p:close()
  end
  table.sort(files)
  return files
end

local function all()
  if cache then return cache end
  local specs = {}
  for _, dir in ipairs(M.dirs()) do
    for _, f in ipairs(spec_files(dir)) do
      local spec = M.load_file(f)
      local expected = f:match("([^/]+)%.lua$")
      if spec.name ~= expected then error(f .. ": name: '" .. spec.name .. "' is not the file's name", 0) end
      specs[spec.name] = spec
    end
  end
  cache = specs
  return specs
end

-- Forgets what was read (after a spec file changed).
function M.reload() cache = nil end

-- Every task, sorted by name: {name, family, split, file, statement, entry, sizes, techniques}.
-- `filter`: nil (all), "train", "heldout", or a family's name.
function M.list(filter)
  local out = {}
  for _, s in pairs(all()) do
    if filter == nil or s.split == filter or s.family == filter then
      out[#out + 1] = { name = s.name, family = s.family, split = s.split, file = s.file,
                        statement = s.statement, entry = s.entry, prototype = s.prototype,
                        sizes = s.sizes, techniques = s.techniques or {}, roofline = s.roofline }
    end
  end
  table.sort(out, function(a, b) return a.name < b.name end)
  return out
end

function M.get(name)
  if type(name) ~= "string" then error("bench.task: a task's name is needed", 2) end
  local s = all()[name]
  if not s then
    local names = {}
    for k in pairs(all()) do names[#names + 1] = k end
    table.sort(names)
    error("no task '" .. name .. "' (known: " .. table.concat(names, ", ") .. ")", 2)
  end
  return s
end

-- The named size a task is asked at when none is given: a held-out task's "heldout" (it has
-- no training size), every other task's "train".
function M.asked_size(spec)
  return spec.split == "heldout" and "heldout" or "train"
end

-- The size's variables: a named size, or a table of the spec's variables.
local function size_of(spec, size)
  if size == nil then size = spec.split == "train" and "train" or "heldout" end
  if type(size) == "string" then
    local s = spec.sizes[size]
    if not s then
      local names = {}
      for k in pairs(spec.sizes) do names[#names + 1] = k end
      table.sort(names)
      error("task " .. spec.name .. ": no size '" .. size .. "' (named sizes: " .. table.concat(names, ", ") .. ")", 0)
    end
    return s
  end
  if type(size) ~= "table" then error("task " .. spec.name .. ": size must be a name or a table of variables", 0) end
  for _, v in ipairs(spec.size_variables) do
    if math.type(size[v]) ~= "integer" then
      error("task " .. spec.name .. ": size." .. v .. " must be an integer (variables: " ..
            table.concat(spec.size_variables, ", ") .. ")", 0)
    end
  end
  for k in pairs(size) do
    local known = false
    for _, v in ipairs(spec.size_variables) do if v == k then known = true end end
    if not known then error("task " .. spec.name .. ": size." .. tostring(k) .. " is not a variable of this task", 0) end
  end
  return size
end

-- A size's variables as text, sorted: size_text({n = 4, m = 2}, " = ", ", ") is "m = 2, n = 4".
function M.size_text(size, eq, sep)
  local keys = {}
  for k in pairs(size) do keys[#keys + 1] = k end
  table.sort(keys)
  local parts = {}
  for i, k in ipairs(keys) do parts[i] = k .. eq .. size[k] end
  return table.concat(parts, sep)
end

-- The spec for one size as the evaluation reads it (every expression a number).
function M.resolve_spec(spec, size)
  local s = size_of(spec, size)
  local where = spec.file or spec.name
  for i, r in ipairs(spec.requires or {}) do
    if evaluate(r, s, where .. ": requires[" .. i .. "]") ~= true then
      error(where .. ": the size does not meet requires[" .. i .. "] (" .. tostring(r) .. ")", 0)
    end
  end
  local out = {
    name = spec.name, family = spec.family, split = spec.split, entry = spec.entry, returns = spec.returns,
    reference = spec.reference,
    flops = evaluate(spec.flops, s, where .. ": flops") + 0.0,
    bytes = evaluate(spec.bytes, s, where .. ": bytes") + 0.0,
    bound = { factor = evaluate(spec.bound.factor, s, where .. ": bound.factor") + 0.0,
              scale = spec.bound.scale or "inputs" },
    params = {},
  }
  if spec.yardsticks then
    out.yardsticks = {}
    for lib, y in pairs(spec.yardsticks) do
      out.yardsticks[#out.yardsticks + 1] = { name = lib, link = y.link, source = y.source }
    end
    table.sort(out.yardsticks, function(a, b) return a.name < b.name end)
  end
  if spec.builtin then return out, s end
  for _, p in ipairs(spec.params) do
    local a = spec.args[p.name]
    local at = where .. ": args." .. p.name
    local r = { name = p.name, type = p.type }
    if p.type:sub(-1) == "*" then
      r.role = p.role
      r.count = integer_of(a.count, s, at .. ".count")
      if r.count < 1 then error(at .. ".count: " .. r.count .. " elements (at least 1)", 0) end
    end
    if a.draw and (p.type:sub(-1) == "*" or p.type == "double") then
      local d = { dist = a.draw[1] }
      for k, v in pairs(a.draw) do
        if k ~= 1 then
          if k == "lo" or k == "hi" then d[k] = evaluate(v, s, at .. ".draw." .. k) + 0.0
          else d[k] = integer_of(v, s, at .. ".draw." .. k) end
        end
      end
      r.draw = d
    elseif p.type:sub(-1) ~= "*" then
      r.value = p.type == "double" and evaluate(a.value, s, at .. ".value") + 0.0 or integer_of(a.value, s, at .. ".value")
    end
    out.params[#out.params + 1] = r
  end
  return out, s
end

-- bench.evaluate's problem for a task: {task = NAME, size = NAME or {...}, seed = N} ->
-- the same with the resolved spec (or, for the built-in matmul, its {M, N, K}).
function M.resolve(problem)
  local spec = M.get(problem.task)
  for k in pairs(problem) do
    if k ~= "task" and k ~= "size" and k ~= "seed" and k ~= "c_init" then
      error("problem." .. tostring(k) .. ": unknown field for a task of the suite (task, size, seed)", 0)
    end
  end
  local resolved, s = M.resolve_spec(spec, problem.size)
  if spec.builtin == "matmul" then
    return { kind = "matmul", M = s.M, N = s.N, K = s.K, seed = problem.seed, c_init = problem.c_init,
             yardsticks = resolved.yardsticks }
  end
  if problem.c_init ~= nil then error("problem.c_init: only matmul's output may start at zero", 0) end
  local size = {}
  for k, v in pairs(s) do size[k] = v end
  return { task = spec.name, size = size, seed = problem.seed, spec = resolved }
end

return M
