-- The task suite: every spec reads, every task's plain kernel verifies, and its
-- off-by-one, single-precision and hostile kernels get no reward. Each task has its
-- kernels in tests/bench/tasks/NAME.lua ({plain =, off_by_one =, single =, hostile = {NAME = source}}: kernels
-- assuming of the inputs what the statement does not promise); a task
-- without them fails here.
local t = require "engine.test"
local tasks = require "engine.tasks"

local here = debug.getinfo(1, "S").source:match("^@(.*)/[^/]*$") or "."

local function kernels_of(name)
  local f = loadfile(here .. "/tasks/" .. name .. ".lua", "t", {})
  return f and f()
end

local function write(path, text)
  local f = assert(io.open(path, "w"))
  f:write(text)
  f:close()
end

t.test("the suite lists its tasks with name, family and split", function()
  local list = bench.tasks()
  t.ok(#list >= 3, #list)
  local names = {}
  for _, task in ipairs(list) do
    t.eq(type(task.name), "string")
    t.eq(type(task.family), "string")
    t.ok(task.split == "train" or task.split == "heldout", task.split)
    t.ok(task.file:find("/stdlib/tasks/" .. task.name .. ".lua", 1, true), task.file)
    names[task.name] = true
  end
  t.ok(names.axpy and names.matmul, "axpy and matmul are tasks")
  t.eq(bench.task("axpy").entry, "axpy")
  t.raises(function() bench.task("no_such_task") end, "no task 'no_such_task'")
  for _, task in ipairs(bench.tasks("train")) do t.eq(task.split, "train") end
end)

t.test("a bad spec is refused at load, naming its file and field", function()
  local dir = t.tmpdir()
  local good = io.open(here .. "/../../stdlib/tasks/axpy.lua"):read("a")
  local cases = {
    { "missing_buffer", good:gsub("    x = { count = \"n\" },\n", ""), "args.x: missing" },
    { "bad_prototype", good:gsub("void axpy%(int n,", "void axpy(int n"):gsub("const double %*x", "const double *"), "prototype" },
    { "bound_not_number", good:gsub("factor = 4", "factor = {}"), "bound.factor: must be a number" },
    { "bad_expression", good:gsub("bytes = \"24%*n\"", "bytes = \"24*q\""), "bytes: '24*q': no size variable 'q'" },
    { "bad_role", good:gsub("role = \"inout\"", "role = \"sideways\""), "args.y.role" },
    { "no_why", good:gsub("why = ", "whyy = "), "bound.why: missing" },
    { "unknown_draw", good:gsub("alpha = { draw = \"uniform\" }", "alpha = { draw = \"gaussian\" }"), "unknown distribution 'gaussian'" },
    { "unknown_technique", good:gsub("techniques = {", "techniques = { \"loop_magic\","), "techniques[1]: 'loop_magic' is not one of" },
  }
  for _, c in ipairs(cases) do
    local path = dir .. "/" .. c[1] .. ".lua"
    write(path, c[2])
    local ok, err = pcall(tasks.load_file, path)
    t.ok(not ok, c[1] .. " was accepted")
    t.contains(err, path, c[1])
    t.contains(err, c[3], c[1])
  end
end)

t.test("prototypes parse into typed parameters, and what is not a kernel's is refused", function()
  local p = assert(tasks.parse_prototype("double f(int n, long k, const double *restrict x, double *y, int *idx)"))
  t.eq(p.returns, "double")
  t.eq(p.entry, "f")
  local types = {}
  for _, q in ipairs(p.params) do types[#types + 1] = q.type .. (q.const and " const" or "") end
  t.eq(table.concat(types, ","), "int,long,double* const,double*,int*")
  for _, bad in ipairs({ "void f(float x)", "int f(int n)", "void f(double **x)", "void f(int)", "f(int n)" }) do
    local q, err = tasks.parse_prototype(bad)
    t.eq(q, nil, bad)
    t.eq(type(err), "string")
  end
end)

t.test("a user's folder adds tasks and replaces the suite's of the same name", function()
  local dir = t.tmpdir()
  local good = io.open(here .. "/../../stdlib/tasks/axpy.lua"):read("a")
  write(dir .. "/scale.lua", (good:gsub("\"axpy\"", "\"scale\""):gsub("axpy", "scale")))
  tasks.add_dir(dir)
  t.eq(bench.task("scale").entry, "scale")
  t.eq(bench.task("scale").file, dir .. "/scale.lua")
  local r = bench.evaluate((kernels_of("axpy").plain:gsub("axpy", "scale")), { task = "scale", size = "test", threads = 1 })
  t.eq(r.status, "ok", r.message)
end)

t.test("cblas_yardsticks gives OpenBLAS and BLIS the same C, each with its version call", function()
  local y = tasks.cblas_yardsticks("void cblas_f(int n);\n", "void f(int n) { cblas_f(n); }\n")
  t.eq(y.openblas.link, "openblas")
  t.eq(y.blis.link, "blis")
  t.eq(y.openblas.source, "void cblas_f(int n);\nconst char *openblas_get_config(void);\n"
       .. "void f(int n) { cblas_f(n); }\nconst char *yardstick_version(void) { return openblas_get_config(); }\n")
  t.eq((y.blis.source:gsub("bli_info_get_version_str", "openblas_get_config")), y.openblas.source)
  -- a spec file has it: the suite's axpy uses it, and a user's copy loads the same
  t.eq(bench.task("axpy").yardsticks.blis.source, tasks.get("axpy").yardsticks.blis.source)
  t.contains(tasks.get("axpy").yardsticks.openblas.source, "cblas_daxpy(n, alpha, x, 1, y, 1);")
end)

-- A kernel with the task's prototype that caches its outputs by pointer: right on the
-- first call, stale on every later one (each call has inputs of its own).
local function pointer_cache(spec, plain, resolved)
  local lines, saves, loads = {}, {}, {}
  local args = {}
  for i, p in ipairs(resolved.params) do
    args[#args + 1] = p.name
    if p.role == "out" or p.role == "inout" then
      lines[#lines + 1] = ("static double saved%d[%d];"):format(i, p.count)
      saves[#saves + 1] = ("memcpy(saved%d, %s, sizeof saved%d);"):format(i, p.name, i)
      loads[#loads + 1] = ("memcpy(%s, saved%d, sizeof saved%d);"):format(p.name, i, i)
    end
  end
  local real = plain:gsub(spec.entry .. "%s*%(", "real_" .. spec.entry .. "(", 1)
  local ret = spec.returns == "double"
  return "#include <string.h>\n" .. real .. table.concat(lines, "\n") ..
    "\nstatic int called; static double saved_value;\n" .. spec.prototype:gsub(";%s*$", "") .. " {\n" ..
    "  if (called) { " .. table.concat(loads, " ") .. (ret and " return saved_value;" or " return;") .. " }\n" ..
    "  called = 1;\n  " .. (ret and "saved_value = " or "") .. "real_" .. spec.entry .. "(" .. table.concat(args, ", ") .. ");\n  " ..
    table.concat(saves, " ") .. (ret and "\n  return saved_value;" or "") .. "\n}\n"
end

-- A kernel that writes into its first read-only input.
local function write_input(spec, resolved)
  for _, p in ipairs(resolved.params) do
    if p.role == "in" then
      local ctype = p.type == "int*" and "int" or "double"
      return spec.prototype:gsub(";%s*$", "") .. " {\n  ((" .. ctype .. " *)" .. p.name .. ")[0] = 1;\n" ..
        (spec.returns == "double" and "  return 0;\n" or "") .. "}\n"
    end
  end
end

-- The first read-only double input's name, and the outputs' names with their counts.
local function shape(resolved)
  local input, outputs = nil, {}
  for _, p in ipairs(resolved.params) do
    if p.role == "in" and p.type == "double*" and not input then input = p.name end
    if p.role == "out" or p.role == "inout" then outputs[#outputs + 1] = p end
  end
  return input, outputs
end

-- The plain kernel, then one element before its first input added (times zero) to its
-- first output: the memory around a buffer poisons a result that reads it.
local function read_before(spec, plain, resolved)
  local input, outputs = shape(resolved)
  if not input then return nil end
  local args = {}
  for _, p in ipairs(resolved.params) do args[#args + 1] = p.name end
  local real = plain:gsub(spec.entry .. "%s*%(", "real_" .. spec.entry .. "(", 1)
  local call = "real_" .. spec.entry .. "(" .. table.concat(args, ", ") .. ")"
  local body = spec.returns == "double" and ("  return " .. call .. " + 0.0 * " .. input .. "[-1];\n")
    or ("  " .. call .. ";\n  " .. outputs[1].name .. "[0] += 0.0 * " .. input .. "[-1];\n")
  return real .. spec.prototype:gsub(";%s*$", "") .. " {\n" .. body .. "}\n"
end

-- The plain kernel, remembering a hash of every call's inputs; a repeat would write NaN.
-- It verifies only if no two calls of an evaluation (warm-up included) share inputs.
local function repeat_detector(spec, plain, resolved)
  local input, outputs = shape(resolved)
  local args, hashes = {}, {}
  for _, p in ipairs(resolved.params) do
    args[#args + 1] = p.name
    if p.role ~= "out" and p.type == "double*" then
      hashes[#hashes + 1] = ("hash_ = mix_(hash_, (const unsigned char *)%s, %d);"):format(p.name, p.count * 8)
    elseif p.type == "double" then
      hashes[#hashes + 1] = ("hash_ = mix_(hash_, (const unsigned char *)&%s, 8);"):format(p.name)
    end
  end
  local real = plain:gsub(spec.entry .. "%s*%(", "real_" .. spec.entry .. "(", 1)
  local poison = {}
  for _, o in ipairs(outputs) do poison[#poison + 1] = ("%s[0] = 0.0 / 0.0;"):format(o.name) end
  local ret = spec.returns == "double"
  return real .. [[
static unsigned long long seen_[128];
static int count_;
static unsigned long long mix_(unsigned long long h, const unsigned char *p, long n) {
  for (long i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ULL;
  return h;
}
]] .. spec.prototype:gsub(";%s*$", "") .. " {\n  unsigned long long hash_ = 1469598103934665603ULL;\n  " ..
    table.concat(hashes, "\n  ") .. "\n  int again_ = 0;\n" ..
    "  for (int i = 0; i < count_; ++i) again_ |= seen_[i] == hash_;\n  if (count_ < 128) seen_[count_++] = hash_;\n  " ..
    (ret and "double r_ = " or "") .. "real_" .. spec.entry .. "(" .. table.concat(args, ", ") .. ");\n" ..
    "  if (again_) { " .. table.concat(poison, " ") .. (ret and " return 0.0 / 0.0;" or "") .. " }\n" ..
    (ret and "  return r_;\n" or "") .. "}\n"
end

for _, task in ipairs(tasks.list()) do
  t.test("task " .. task.name .. ": plain verifies; off-by-one, single precision and hostile kernels do not", function()
    local k = kernels_of(task.name)
    t.ok(k, "tests/bench/tasks/" .. task.name .. ".lua is missing")
    for _, kind in ipairs({ "plain", "off_by_one", "single" }) do
      t.eq(type(k[kind]), "string", task.name .. " has no " .. kind .. " kernel")
    end
    local spec = bench.task(task.name)
    local resolved = tasks.resolve_spec(spec, "test")
    local kinds = { "plain", "off_by_one", "single" }
    local sources = { k.plain, k.off_by_one, k.single }
    local function add(kind, src)
      if src then kinds[#kinds + 1], sources[#sources + 1] = kind, src end
    end
    if not spec.builtin then  -- matmul has its own hostile suite (tests/bench/hostile)
      add("pointer_cache", pointer_cache(spec, k.plain, resolved))
      add("write_input", write_input(spec, resolved))
      add("read_before", read_before(spec, k.plain, resolved))
      add("repeat_detector", repeat_detector(spec, k.plain, resolved))
    end
    -- kernels that assume of the inputs what the statement does not promise
    local hostile = {}
    for kind in pairs(k.hostile or {}) do hostile[#hostile + 1] = kind end
    table.sort(hostile)
    for _, kind in ipairs(hostile) do add("hostile_" .. kind, k.hostile[kind]) end
    local list = bench.evaluate_batch(sources, { task = task.name, size = "test", threads = 1, runs = 2, max_runs = 2 })
    local r = {}
    for i, kind in ipairs(kinds) do r[kind] = list[i] end
    local function failed(kind, ...)
      local statuses = { ... }
      for _, st in ipairs(statuses) do if r[kind].status == st then return end end
      t.ok(false, task.name .. " " .. kind .. ": " .. r[kind].status .. " " .. r[kind].message)
    end
    t.eq(r.plain.status, "ok", task.name .. " plain: " .. r.plain.message)
    t.ok(r.plain.gbps > 0 and (r.plain.gflops > 0 or resolved.flops == 0), task.name .. " plain: no speed")
    failed("off_by_one", "verification_error", "runtime_error")
    failed("single", "verification_error")
    if r.pointer_cache then
      failed("pointer_cache", "verification_error")
      t.contains(r.pointer_cache.message, "call 2", task.name .. " cached by pointer")
    end
    if r.write_input then
      failed("write_input", "runtime_error")
      t.contains(r.write_input.message, "wrote to the read-only input", task.name)
    end
    if r.read_before then failed("read_before", "verification_error", "runtime_error") end
    for _, kind in ipairs(hostile) do failed("hostile_" .. kind, "verification_error", "runtime_error") end
    if r.repeat_detector then t.eq(r.repeat_detector.status, "ok", task.name .. " saw inputs repeat: " .. r.repeat_detector.message) end
    for kind, rec in pairs(r) do
      if kind ~= "plain" and kind ~= "repeat_detector" then t.eq(rec.gflops, 0, task.name .. " " .. kind) end
    end
  end)
end

t.test("the yardstick is the fastest library that works here, named with its version", function()
  local r = bench.reference{task = "dot", size = "test", runs = 3, max_runs = 3, warmup = 1}
  t.eq(r.status, "ok", r.message)
  local names = {}
  for _, trial in ipairs(r.yardstick_trials) do names[trial.yardstick] = trial end
  t.ok(names.reference and names.openblas and names.blis, "every yardstick tried")
  t.ok(r.library == "reference" or r.library == "openblas" or r.library == "blis", r.library)
  if r.library == "openblas" then t.contains(r.version, "OpenBLAS") end
  for _, trial in ipairs(r.yardstick_trials) do
    if trial.status == "ok" then t.ok(r.median <= trial.median, trial.yardstick .. " was faster") end
  end
  local one = bench.reference{task = "dot", size = "test", yardstick = "reference", threads = 1, runs = 2, max_runs = 2}
  t.eq(one.library, "reference")
  t.eq(#one.yardstick_trials, 1)
  t.raises(function() bench.reference{task = "dot", yardstick = "mkl"} end, "has no yardstick 'mkl'")
  -- matmul: OpenBLAS, which the engine loads itself, and the libraries its spec adds
  local mm = bench.reference{task = "matmul", size = "test", runs = 2, max_runs = 2, warmup = 1, threads = 1}
  t.eq(mm.status, "ok", mm.message)
  local tried = {}
  for _, trial in ipairs(mm.yardstick_trials) do tried[#tried + 1] = trial.yardstick end
  t.eq(tried, {"openblas", "blis"})
  t.eq(mm.options.problem.yardsticks, nil, "records name no yardstick's source")
  t.eq(mm.options.problem.M, 48)
  -- A library missing here is a failed trial; the others still measure.
  local dir = t.tmpdir()
  local text = io.open(here .. "/../../stdlib/tasks/dot.lua"):read("a")
  text = text:gsub("yardsticks = cblas_yardsticks%(", "yardsticks = (function(...) local y = cblas_yardsticks(...); "
                   .. "y.blis.link = \"no_such_library_here\"; return y end)(")
  write(dir .. "/dot.lua", text)
  tasks.add_dir(dir)
  local mixed = bench.reference{task = "dot", size = "test", runs = 2, max_runs = 2, warmup = 1}
  t.eq(mixed.status, "ok", mixed.message)
  local failed = false
  for _, trial in ipairs(mixed.yardstick_trials) do
    if trial.yardstick == "blis" then
      failed = trial.status ~= "ok"
      t.contains(trial.message, "no_such_library_here")
    end
  end
  t.ok(failed, "the missing library failed its trial")
end)

t.test("records name the task and size, not the spec's text", function()
  local r = bench.evaluate(kernels_of("dot").plain, { task = "dot", size = { n = 77 }, threads = 1, runs = 1, max_runs = 1 })
  t.eq(r.status, "ok", r.message)
  t.eq(r.options.problem.task, "dot")
  t.eq(r.options.problem.size.n, 77)
  t.eq(r.options.problem.spec, nil)
  t.raises(function() bench.evaluate(kernels_of("dot").plain, { task = "dot", size = { m = 3 } }) end, "size.n must be an integer")
  t.raises(function() bench.evaluate(kernels_of("dot").plain, { task = "dot", size = "huge" }) end, "no size 'huge'")
  t.raises(function() bench.evaluate(kernels_of("dot").plain, { task = "dot", verify = "paper" }) end, "not a check of dot")
end)

-- A yardstick library called by its own names is a library call (library_violation, the
-- -100 of Eq. 3), through every back end, though none is loaded where a kernel compiles:
-- never an undefined reference (compile_error, -40). Every library a spec links is in the
-- engine's list. A kernel's own function of such a name is its own code.
t.test("a yardstick library called by its own name is a library violation through every back end", function()
  local listed = {}
  for _, lib in ipairs(bench.allowed_symbols().yardstick_libraries) do
    for _, l in ipairs(lib.links) do listed[l] = lib end
  end
  for _, task in ipairs(bench.tasks()) do
    local suite = task.file:find("/stdlib/tasks/", 1, true)  -- not the test's own folders
    for yname, y in pairs(suite and bench.task(task.name).yardsticks or {}) do
      for _, l in ipairs(type(y.link) == "table" and y.link or { y.link }) do
        t.ok(listed[l], task.name .. "'s yardstick " .. yname .. " links " .. l .. ", which no yardstick library lists")
      end
    end
  end
  local calls = {
    -- task, the declaration, the call
    { "fft", "typedef double fftw_complex[2]; void *fftw_plan_dft_1d(int, fftw_complex *, fftw_complex *, int, unsigned); void fftw_execute(const void *);",
      "fftw_execute(fftw_plan_dft_1d(n, (fftw_complex *)x, (fftw_complex *)y, -1, 64));" },
    { "fft", "void *fftwf_malloc(unsigned long);", "y[0] = fftwf_malloc(8) != 0;" },
    { "cholesky", "int LAPACKE_dpotrf(int, char, int, double *, int);", "LAPACKE_dpotrf(101, 'L', n, L, n);" },
    { "cholesky", "void dpotrf_(const char *, const int *, double *, const int *, int *);", "int info; dpotrf_(\"U\", &n, L, &n, &info);" },
    { "gemm_batched", "void libxsmm_dgemm(const char *, const char *, const int *, const int *, const int *, const double *, const double *, const int *, const double *, const int *, const double *, double *, const int *);",
      "double one = 1, zero = 0; libxsmm_dgemm(\"N\", \"N\", &n, &m, &k, &one, B, &n, A, &k, &zero, C, &n);" },
    { "dot", "double ddot_(const int *, const double *, const int *, const double *, const int *);", "int one = 1; return ddot_(&n, x, &one, y, &one);" },
    { "dot", "double cblas_ddot(int, const double *, int, const double *, int);", "return cblas_ddot(n, x, 1, y, 1);" },
    { "dot", "void bli_ddotv(int, int, long, double *, long, double *, long, double *);", "double r; bli_ddotv(0, 0, n, (double *)x, 1, (double *)y, 1, &r); return r;" },
    { "trsv", "void dtrsv_(const char *, const char *, const char *, const int *, const double *, const int *, double *, const int *);",
      "int one = 1; for (int i = 0; i < n; ++i) x[i] = b[i]; dtrsv_(\"U\", \"N\", \"N\", &n, L, &n, x, &one);" },
  }
  local sources, names = {}, {}
  for _, c in ipairs(calls) do
    local spec = bench.task(c[1])
    local body = c[3]
    if spec.returns == "double" and not body:find("return") then body = body .. " return 0;" end
    sources[#sources + 1] = c[2] .. "\n" .. spec.prototype:gsub(";%s*$", "") .. " {\n  " .. body .. "\n}\n"
    names[#names + 1] = c[1]
  end
  -- the honest twin: a kernel's own function named as a library's
  local own = "static double ddot_(const int *n, const double *x, const double *y) {\n" ..
    "  double s = 0;\n  for (int i = 0; i < *n; ++i) s += x[i] * y[i];\n  return s;\n}\n" ..
    "double dot(int n, const double *x, const double *y) { return ddot_(&n, x, y); }\n"
  for _, backend in ipairs(bench.backends()) do
    for i, src in ipairs(sources) do
      local r = bench.evaluate(src, { task = names[i], size = "test", threads = 1, backend = backend, runs = 1, max_runs = 1 })
      t.eq(r.status, "library_violation", backend .. ": " .. src .. ": " .. r.message)
      t.contains(r.message, "outside the allowed libraries", backend)
    end
    local r = bench.evaluate(own, { task = "dot", size = "test", threads = 1, backend = backend, runs = 1, max_runs = 1 })
    t.eq(r.status, "ok", backend .. ": a kernel's own ddot_: " .. r.message)
    t.eq(r.backend, backend)
  end
end)

t.run()
