-- Stencils: jacobi2d_5, jacobi2d_9, jacobi3d_7.
-- One family of kernelgen.tasks (its header says what varies and the rules the text keeps).

local parts = require "kernelgen.tasks.parts"
local inc = parts.inc
local ix = parts.ix

-- Each stencil: its prototype, dims (2 or 3), and the weighted groups of neighbour offsets
-- from the centre pointer ("s": the row stride, "p": the plane stride).
local stencils = {
  jacobi2d_5 = {proto = "void jacobi2d_5(int n, const double *u, double *v)", dims = 2,
                groups = {{"0.25", {"-s", "s", "-1", "1"}}}},
  jacobi2d_9 = {proto = "void jacobi2d_9(int n, const double *u, double *v)", dims = 2,
                groups = {{"0.25", {"0"}}, {"0.125", {"-s", "s", "-1", "1"}},
                          {"0.0625", {"-s - 1", "-s + 1", "s - 1", "s + 1"}}}},
  jacobi3d_7 = {proto = "void jacobi3d_7(int n, const double *u, double *v)", dims = 3,
                groups = {{"0.25", {"0"}}, {"0.125", {"-p", "p", "-s", "s", "-1", "1"}}}},
}

local function gen_stencil(rng, name, set, isa)
  local S = stencils[name]
  local st, em, pf, sched, V = parts.start(rng, set, isa)
  local rb = set.register_blocking
  -- names: the strides s, p are fixed by the groups; c the centre pointer, o the output row
  local c, o = parts.name(rng, {"c", "ctr", "src"}), parts.name(rng, {"o", "dst", "out"})
  local i, j, k = "i", "j", "k"
  local inner = S.dims == 2 and j or k
  -- groups for register blocking: at least two, so that each output is accumulated
  local groups = S.groups
  if rb and #groups == 1 then
    local g = groups[1]
    groups = {{g[1], {g[2][1], g[2][2]}}, {g[1], {g[2][3], g[2][4]}}}
  end
  local function at(idx, off)
    if off == "0" then return idx end
    if off:sub(1, 1) == "-" then return idx .. " - " .. off:sub(2) end
    return idx .. " + " .. off
  end
  -- a group's weight times the sum of its neighbours of the output at idx
  local function group_term(idx, g)
    local ts = {}
    for q, off in ipairs(g[2]) do ts[q] = c .. "[" .. at(idx, off) .. "]" end
    return g[1] .. " * " .. (#ts == 1 and ts[1] or ("(" .. table.concat(ts, " + ") .. ")"))
  end
  local function sexpr(idx)
    local terms = {}
    for _, g in ipairs(S.groups) do terms[#terms + 1] = group_term(idx, g) end
    return table.concat(terms, " + ")
  end
  local wname = {["0.25"] = "w4", ["0.125"] = "w8", ["0.0625"] = "w16"}
  local function vsum(idx, g)
    local ts = {}
    for q, off in ipairs(g[2]) do ts[q] = V.ld(c .. " + " .. at(idx, off)) end
    return parts.tree(ts, V.add)
  end
  local function vexpr(idx)
    local terms = {}
    for _, g in ipairs(S.groups) do terms[#terms + 1] = V.mul(wname[g[1]], vsum(idx, g)) end
    return parts.tree(terms, V.add)
  end
  parts.includes(em, set, pf, false, rng)
  -- cache blocking: which loops are tiled
  local cb
  if set.cache_blocking then
    cb = {rows = rng:chance(0.7), form = parts.sample_cb_form(rng)}
    cb.cols = not cb.rows or rng:chance(0.5)
    cb.br = parts.block_size(rng, {"BR", "BI", "TILE_R"}, {16, 32, 32, 64}, cb.form)
    cb.bc = parts.block_size(rng, {"BC", "BJ", "TILE_C"}, {64, 128, 128, 256}, cb.form)
    parts.block_tops(em, cb.rows and cb.br, cb.cols and cb.bc)
  end
  if st.comment then
    em:line("/* one sweep of the " .. (S.dims == 3 and "7-point 3-D" or (name:find("_9") and "9-point" or "5-point"))
            .. " stencil" .. (cb and ", in tiles" or "") .. " */")
  end
  em:open(S.proto)
  em:line("const long s = (long)n + 2;")
  if S.dims == 3 then em:line("const long p = s * s;") end
  if V then
    for _, g in ipairs(S.groups) do em:line("const " .. V.ty .. " " .. wname[g[1]] .. " = " .. V.set1(g[1]) .. ";") end
  end
  if cb then parts.block_decls(em, cb.rows and cb.br, cb.cols and cb.bc) end
  -- the row loop variable (the one tiled by rows): i in 2-D, j in 3-D
  local rowv = S.dims == 2 and i or j
  local omp_done = false
  local function omp_here(collapse)
    if set.omp and not omp_done then
      em:pragma("#pragma omp parallel for" .. (collapse and " collapse(2)" or "") .. sched)
      omp_done = true
    end
  end
  local collapse_ok = rng:chance(0.4)
  -- outer loops
  if S.dims == 3 then
    omp_here(collapse_ok and not cb)
    em:open(string.format("for (long %s = 0; %s < n; %s)", i, i, inc(st, i)))
  end
  local rb_, cb_ = "rb", "cbk"
  local rend, cend = "rend", "cend"
  if cb and cb.rows then
    local rb0 = rowv .. "b"
    rb_ = rb0
    omp_here(collapse_ok and cb.cols)
    em:open(string.format("for (long %s = 0; %s < n; %s += %s)", rb0, rb0, rb0, cb.br.name))
  end
  if cb and cb.cols then
    local cb0 = inner .. "b"
    cb_ = cb0
    omp_here(false)
    parts.open_blocks(em, cb0, cend, "0", "n", cb.bc.name)
  end
  if cb and cb.rows then
    em:line(string.format("const long %s = %s + %s < n ? %s + %s : n;", rend, rb_, cb.br.name, rb_, cb.br.name))
    em:open(string.format("for (long %s = %s; %s < %s; %s)", rowv, rb_, rowv, rend, inc(st, rowv)))
  else
    omp_here(false)
    em:open(string.format("for (long %s = 0; %s < n; %s)", rowv, rowv, inc(st, rowv)))
  end
  -- the centre pointer and output row
  if S.dims == 2 then
    em:line(string.format("const double *%s = u + (%s + 1) * s + 1;", c, i))
    em:line(string.format("double *%s = v + %s * n;", o, i))
  else
    em:line(string.format("const double *%s = u + (%s + 1) * p + (%s + 1) * s + 1;", c, i, j))
    em:line(string.format("double *%s = v + (%s * n + %s) * n;", o, i, j))
  end
  local lo = (cb and cb.cols) and cb_ or "0"
  local hi = (cb and cb.cols) and cend or "n"
  local function pfline(idx)
    if pf then
      local off = rng:pick({"s", "2 * s", "s + " .. pf.dist, tostring(pf.dist)})
      if S.dims == 3 and rng:chance(0.5) then off = "p" end
      em:line(parts.pf_stmt(pf, c .. " + " .. idx .. " + " .. off, false))
    end
  end
  -- the inner loop: its first header starts at lo (a tile's variable when columns are tiled)
  local x = inner
  -- x over [lo, hi) by `step`, body() writing each step's outputs, then the remainder
  -- one output at a time; x is declared outside the loop for the remainder
  local function strided(step, body)
    if lo == "0" and rng:chance(0.5) then
      em:line("long " .. x .. " = 0;")
      em:open(string.format("for (; %s + %d <= %s; %s += %d)", x, step, hi, x, step))
    else
      em:line("long " .. x .. ";")
      em:open(string.format("for (%s = %s; %s + %d <= %s; %s += %d)", x, lo, x, step, hi, x, step))
    end
    pfline(x)
    body()
    em:close()
    em:line(string.format("for (; %s < %s; %s) %s[%s] = %s;", x, hi, inc(st, x), o, x, sexpr(x)))
  end
  if V then
    local U = rb and rng:pick({2, 2, 4}) or 1
    strided(U * V.w, function()
      if U == 1 then
        if rng:chance(0.5) then
          em:line(V.st(o .. " + " .. x, vexpr(x)))
        else
          local r = parts.name(rng, {"r", "res", "val"})
          em:line(V.ty .. " " .. r .. " = " .. vexpr(x) .. ";")
          em:line(V.st(o .. " + " .. x, r))
        end
        return
      end
      local pre = parts.name(rng, {"r", "acc", "t"})
      for u = 0, U - 1 do
        local idx = ix(x, u * V.w)
        em:line(V.ty .. " " .. pre .. u .. " = " .. V.mul(wname[groups[1][1]], vsum(idx, groups[1])) .. ";")
      end
      for gi = 2, #groups do
        for u = 0, U - 1 do
          local idx = ix(x, u * V.w)
          em:line(pre .. u .. " = " .. V.fma(wname[groups[gi][1]], vsum(idx, groups[gi]), pre .. u) .. ";")
        end
      end
      for u = 0, U - 1 do em:line(V.st(o .. " + " .. ix(x, u * V.w), pre .. u)) end
    end)
  elseif rb then
    local U = rng:pick({2, 2, 4})
    strided(U, function()
      local pre = parts.name(rng, {"r", "acc", "t"})
      for u = 0, U - 1 do em:line("double " .. pre .. u .. " = " .. group_term(ix(x, u), groups[1]) .. ";") end
      for gi = 2, #groups do
        for u = 0, U - 1 do em:line(pre .. u .. " += " .. group_term(ix(x, u), groups[gi]) .. ";") end
      end
      for u = 0, U - 1 do em:line(o .. "[" .. ix(x, u) .. "] = " .. pre .. u .. ";") end
    end)
  else
    em:open(string.format("for (long %s = %s; %s < %s; %s)", x, lo, x, hi, inc(st, x)))
    pfline(x)
    em:line(string.format("%s[%s] = %s;", o, x, sexpr(x)))
    em:close()
  end
  -- close the row loop, the tiles and the plane loop
  em:close()
  if cb and cb.cols then em:close() end
  if cb and cb.rows then em:close() end
  if S.dims == 3 then em:close() end
  em:close()
  return em:text()
end

return {stencils = stencils, gen_stencil = gen_stencil}
