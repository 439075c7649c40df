-- Every task's input draws against its statement: a kernel may assume of its inputs only
-- what the statement promises, so the draws must not hold any structure beyond that (a
-- symmetric matrix where a general one is promised, CSR rows of one length). The draws
-- may be better conditioned than the statement demands (the bounds of the check need it:
-- docs/tasks.md), which no algorithm saves work on.
--
-- `promises` names, per task, each input buffer that is promised some structure; every
-- other drawn buffer of a task is promised nothing and must look general. A task of the
-- suite must be named here or in `general`, so that a new task's draws are looked at.
local t = require "engine.test"

local promises = {
  -- symmetric positive definite, both triangles stored
  cholesky = { A = { square = "n", symmetric = true } },
  -- strictly diagonally dominant, nothing more: not symmetric
  lu_nopiv = { A = { square = "n", dominant = true } },
  -- the lower triangle and the diagonal only; the rest NaN
  symv = { A = { square = "n", lower = true } },
  trmm = { L = { square = "m", lower = true } },
  trsm = { L = { square = "m", lower = true } },
  trsv = { L = { square = "n", lower = true } },
  -- a CSR pattern: rows of any length, columns ascending and distinct within a row
  spmv_csr = { row_ptr = { csr = "row_ptr" }, col_idx = { csr = "col_idx" } },
  -- square grids with a halo: general values (a symmetric grid would give a symmetric result)
  jacobi2d_5 = { u = { square = "n+2" } },
  jacobi2d_9 = { u = { square = "n+2" } },
}
local general = {
  asum = true, axpy = true, col_sums = true, conv1d = true, conv2d_3x3 = true, dot = true, fft = true,
  gemm_batched = true, gemm_tn = true, gemv_n = true, gemv_t = true, ger = true, jacobi3d_7 = true, nrm2 = true,
  prefix_sum = true, syrk = true, transpose = true,
  matmul = true,  -- the engine's own task: A and B uniform in [-1, 1) (engine/task/matmul.cpp)
}

local function isnan(x) return x ~= x end

local function size_value(expr, size)
  local f = assert(load("return " .. expr, "size", "t", size))
  return f()
end

-- Checks one square matrix against what is promised of it.
local function check_square(name, a, n, p)
  local function at(i, j) return a[i * n + j + 1] end
  t.eq(#a, n * n, name .. " is " .. n .. " x " .. n)
  local asym, diag_not_one, below, above_nan, above_finite = 0, false, 0, 0, 0
  for i = 0, n - 1 do
    if at(i, i) ~= 1 then diag_not_one = true end
    for j = 0, n - 1 do
      if j < i then
        if at(i, j) ~= 0 and not isnan(at(i, j)) then below = below + 1 end
        if not isnan(at(i, j)) and not isnan(at(j, i)) and at(i, j) ~= at(j, i) then asym = asym + 1 end
      elseif j > i then
        if isnan(at(i, j)) then above_nan = above_nan + 1 else above_finite = above_finite + 1 end
      end
    end
  end
  local off = n * (n - 1) // 2
  if p.lower then
    t.eq(above_nan, off, name .. ": every entry above the diagonal is NaN (reading one poisons the result)")
    t.eq(below, off, name .. ": the lower triangle is full and finite (not diagonal, not banded)")
    t.ok(diag_not_one, name .. ": the diagonal is not promised unit, and is not")
    for i = 0, n - 1 do t.ok(at(i, i) == at(i, i) and at(i, i) ~= 0, name .. ": a nonzero diagonal") end
    return
  end
  t.eq(above_finite, off, name .. ": every entry is finite")
  if p.symmetric then
    t.eq(asym, 0, name .. " is promised symmetric")
  else
    t.ok(asym > off // 2, name .. " is not promised symmetric, and is not (" .. asym .. " of " .. off .. " pairs differ)")
  end
  if p.dominant then
    for i = 0, n - 1 do
      local sum = 0
      for j = 0, n - 1 do if j ~= i then sum = sum + math.abs(at(i, j)) end end
      t.ok(math.abs(at(i, i)) > sum, name .. ": row " .. i .. " is diagonally dominant, as promised")
    end
  end
end

-- The CSR pattern: what the statement promises (row_ptr from 0 to the count of nonzeros,
-- columns ascending and distinct within a row), and nothing else: row lengths vary, some
-- rows are empty, one is long.
local function check_csr(task, inputs, size)
  local rp, ci = inputs.row_ptr, inputs.col_idx
  local rows, cols, per = size.rows, size.cols, size.per_row
  t.eq(#rp, rows + 1)
  t.eq(rp[1], 0, "row_ptr[0]")
  t.eq(rp[rows + 1], rows * per, "row_ptr[rows]: rows * per_row nonzeros in all (the flops and bytes count them)")
  t.eq(#ci, rows * per)
  local lengths, empty, longest = {}, 0, 0
  for i = 1, rows do
    local len = rp[i + 1] - rp[i]
    t.ok(len >= 0 and len <= cols, task .. ": row " .. (i - 1) .. " has " .. len .. " entries")
    lengths[len] = true
    if len == 0 then empty = empty + 1 end
    longest = math.max(longest, len)
    for p = rp[i] + 1, rp[i + 1] do
      t.ok(ci[p] >= 0 and ci[p] < cols, task .. ": a column in range")
      if p > rp[i] + 1 then t.ok(ci[p] > ci[p - 1], task .. ": columns ascending and distinct within a row") end
    end
  end
  local kinds = 0
  for _ in pairs(lengths) do kinds = kinds + 1 end
  t.ok(kinds >= 3, task .. ": row lengths vary (" .. kinds .. " different lengths)")
  t.ok(empty >= 1, task .. ": an empty row")
  t.ok(longest > 2 * per, task .. ": a long row (" .. longest .. " entries, per_row " .. per .. ")")
  t.ok(rp[2] ~= per or rp[3] ~= 2 * per or rp[rows] ~= (rows - 1) * per,
       task .. ": row_ptr is not i * per_row (a kernel reading row_ptr[1] once would verify)")
end

local function same(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do
    if a[i] ~= b[i] and not (isnan(a[i]) and isnan(b[i])) then return false end
  end
  return true
end

for _, task in ipairs(bench.tasks()) do
  t.test("task " .. task.name .. ": the draws hold what its statement promises and nothing more", function()
    local p = promises[task.name]
    t.ok(p or general[task.name], task.name .. " is named neither in promises nor in general: say what its statement promises")
    local spec = bench.task(task.name)
    if spec.builtin then return end  -- matmul: drawn by the engine's own task
    -- the test size, and a structured task's default size too (a general task's would
    -- only make the test slow: its draws are one distribution at every size)
    local sizes = { "test", p and (spec.split == "train" and "train" or "heldout") or nil }
    for _, sname in ipairs(sizes) do
      local size = spec.sizes[sname]
      local first = bench.task_inputs{ task = task.name, size = sname, call = 0 }
      local second = bench.task_inputs{ task = task.name, size = sname, call = 1 }
      local names = {}
      for name, values in pairs(first) do
        names[#names + 1] = name
        local what = task.name .. "." .. name .. " (" .. sname .. ")"
        t.ok(not same(values, second[name]), what .. " is drawn afresh for every call")
        local q = p and p[name] or {}
        if q.csr then
          if q.csr == "row_ptr" then check_csr(what, first, size) end
        elseif q.square then
          check_square(what, values, size_value(q.square, size), q)
        elseif #values > 1 then
          local distinct, finite = {}, 0
          for _, x in ipairs(values) do
            if not isnan(x) and x > -math.huge and x < math.huge then finite = finite + 1 end
            distinct[x] = true
          end
          t.eq(finite, #values, what .. ": every value is finite")
          local k = 0
          for _ in pairs(distinct) do k = k + 1 end
          t.ok(k > #values // 2, what .. ": general values (" .. k .. " distinct of " .. #values .. ")")
        end
      end
      if p then
        for name in pairs(p) do t.ok(first[name], task.name .. ": promises name a drawn buffer '" .. name .. "'") end
      end
      t.ok(#names > 0, task.name .. " draws its inputs")
    end
  end)
end

t.test("a seed draws the same inputs, another call other ones", function()
  local a = bench.task_inputs{ task = "spmv_csr", size = "test", seed = 7, call = 2 }
  local b = bench.task_inputs{ task = "spmv_csr", size = "test", seed = 7, call = 2 }
  local c = bench.task_inputs{ task = "spmv_csr", size = "test", seed = 7, call = 3 }
  t.ok(same(a.row_ptr, b.row_ptr) and same(a.col_idx, b.col_idx) and same(a.val, b.val), "a seed fixes a call's inputs")
  t.ok(not same(a.row_ptr, c.row_ptr), "each call has a pattern of its own")
  t.raises(function() bench.task_inputs{ task = "spmv_csr", size = "huge" } end, "no size 'huge'")
end)

t.run()
