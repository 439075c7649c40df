-- The style of kernelgen.cuda's kernels: the names a kernel draws by role, its indentation,
-- its -infinity literal, whether comments say why, and the template text filled with them.
-- The task generators (kernelgen/cuda.lua) write templates; this module makes each one text.
--
--   local style = require "kernelgen.cuda_style"
--   local st = style.draw(rng, plain)        -- plain: first names, comments on, two spaces
--   style.fill(st, "common", "float $acc = 0.0f;\n//@tree\n")   -- template text -> code
--   style.lines({"a", "b"})                  -- "a\nb"

local M = {}

---------------------------------------------------------------------------------------
-- Style: names, indentation, comments
---------------------------------------------------------------------------------------

-- The names a kernel draws, by role; the first of each is the plain style's. Within a
-- group they are distinct from one another and from `reserved`, so no draw shadows.
local name_sets = {
  common = {
    i = {"i", "idx", "gid", "tid"}, stride = {"stride", "step", "nthreads"}, j = {"j", "e", "rest"},
    q = {"q", "k4", "quad"}, n4 = {"n4", "nvec", "chunks"}, c4 = {"c4", "cols4", "qcols"},
    vec = {"vec", "aligned", "wide"}, va = {"va", "xv", "lhs"}, vb = {"vb", "yv", "rhs"},
    total = {"total", "count", "len"}, c = {"c", "col", "cc"}, inp = {"in", "src", "xrow"},
    outp = {"out", "dst", "yrow"}, in4 = {"in4", "src4", "xq"}, out4 = {"out4", "dst4", "yq"},
    acc = {"s", "acc", "sum", "partial"}, part = {"part", "red", "buf", "scratch"},
    mx = {"mx", "rmax", "peak"}, inv = {"inv", "rinv", "scale"}, mean = {"mean", "mu", "avg"},
    sq = {"sq", "ssq", "dev"}, var = {"var", "variance", "spread"}, nt = {"nt", "threads", "bs"},
    r = {"r", "row", "ri"}, orow = {"orow", "dr", "tr"}, ocol = {"ocol", "dc", "tc"},
    tile = {"tile", "stage", "blk"}, cnt = {"cnt", "nseen", "taken"},
  },
  matmul = {
    row = {"row", "i", "gy"}, col = {"col", "j", "gx"}, acc = {"acc", "s", "sum"}, p = {"p", "kk", "t"},
    k0 = {"k0", "base", "kt"}, as = {"as", "ta", "sa"}, bs = {"bs", "tb", "sb"}, arow = {"arow", "ap", "pa"},
    q = {"q", "u", "w"},
  },
}

-- The names of the helpers that are no reduction (a merge of two partial results, a
-- Welford update).
local fn_names = {merge = {"merge", "combine", "merge_stats"}, push = {"push", "welford_push", "update"}}

-- The kernels' parameters and fixed locals, by group: no drawn name may be one of them.
local reserved = {
  common = [[x y z b gamma beta rows cols n v d g bt x4 y4 z4 b4 g4 bt4 x_r y_r z_r b_r]],
  matmul = [[a b c m n k ka kb a_r b_r]],
}
for group, sets in pairs(name_sets) do
  local taken = {}
  for w in reserved[group]:gmatch("%S+") do taken[w] = "reserved" end
  for role, list in pairs(sets) do
    for _, name in ipairs(list) do
      if taken[name] then error(string.format("kernelgen.cuda: '%s' (%s) is already %s", name, role, taken[name])) end
      taken[name] = "the role " .. role
    end
  end
end

-- Helper-function names: one pattern per kernel.
local helper_patterns = {
  {block = "block_%s", warp = "warp_%s"},
  {block = "block_reduce_%s", warp = "warp_reduce_%s"},
  {block = "%s_over_block", warp = "%s_over_warp"},
}

local neg_infinities = {"__int_as_float(0xff800000)", "-3.402823466e+38f"}

local comment_text = {
  index = {"one element per thread", "this thread's element"},
  grid_stride = {"grid-stride loop: right for any grid", "each thread walks the array a grid at a time"},
  ldg = {"no aliasing: reads go through the read-only cache (__ldg)", "read-only loads through __ldg"},
  align = {"float4 only when every pointer is 16-byte aligned; else the scalar loop does it all",
           "vector loads need 16-byte alignment: checked at run time"},
  row_align = {"rows start 16-byte aligned only when cols % 4 == 0",
               "float4 loads need aligned rows: cols % 4 == 0 and an aligned base"},
  tail = {"the elements past the last whole float4", "scalar tail"},
  bias = {"a float4 never straddles two rows when cols % 4 == 0", "the bias repeats every cols / 4 float4s"},
  row = {"one block per row", "this block's row"},
  strided = {"threads stride the row: neighbours read neighbours (coalesced)", "block-strided loop over the row"},
  ilp = {"two independent sums keep more loads in flight", "two accumulators: more loads in flight"},
  tree = {"tree reduction in shared memory", "halve the active threads each step"},
  tree_warp = {"shared-memory tree down to one warp, then shuffles", "the last 32 partials are summed by shuffles"},
  warp = {"shuffles within each warp, then warp 0 combines the per-warp results",
          "warp-level reduction: no shared memory until one value per warp"},
  warp_xor = {"butterfly shuffles: every lane ends with the warp's result",
              "xor shuffles leave the result in all lanes; each thread then combines the per-warp values"},
  max = {"the row's maximum, for a stable exponential", "subtract the maximum so expf never overflows"},
  stash = {"keep the exponentials in the output, scale them at the end", "write exp once, rescale in place"},
  online = {"online softmax: running maximum and sum in one pass", "one read for both the maximum and the sum"},
  recip = {"multiply by the reciprocal instead of dividing", "one division per row"},
  mean = {"the row's mean", "first the mean"},
  var = {"the biased variance around the mean", "then the variance (divided by cols)"},
  sumsq = {"sum and sum of squares in one pass", "one pass: var = E[x^2] - mean^2"},
  clamp = {"rounding can make it slightly negative", "never below zero"},
  welford = {"Welford's running mean and M2: one pass, no cancellation", "one-pass mean and variance (Welford)"},
  write = {"normalise, scale and shift", "the output pass"},
  naive_read = {"reads coalesced, writes strided", "one element per thread"},
  naive_write = {"threads along x walk the output's rows: the writes are coalesced", "writes coalesced, reads strided"},
  tile = {"stage a 32 x 32 tile in shared memory so reads and writes are both coalesced",
          "read a tile row-wise, write it column-wise"},
  pad = {"33 columns: a column of the tile falls in 32 different banks", "padding avoids bank conflicts"},
  swap = {"the block's tile, transposed: its x walks the output's rows", "write the transposed tile"},
  naive = {"one element of C per thread", "a dot product per thread"},
  unroll4 = {"unrolled by four", "let the compiler unroll the k loop"},
  tiled = {"tiles of A and B in shared memory, zero-padded at the edges",
           "shared-memory tiling: each value loaded once per block"},
  tile_k = {"32-deep tiles along k: half the barriers", "each thread loads two values of each tile"},
  unroll = {"the tile's loop is unrolled", "fixed trip count: unrolled"},
}

function M.draw(rng, plain)
  local st = {names = {}, comments = plain and 1 or rng:pick({0, 0.5, 1}), indent = plain and 2 or rng:pick({2, 4}),
              rng = rng, plain = plain}
  local function pick(list) return plain and list[1] or rng:pick(list) end
  local function sorted_keys(t)
    local out = {}
    for k in pairs(t) do out[#out + 1] = k end
    table.sort(out)  -- the draws in a fixed order: reproducible
    return out
  end
  for _, group in ipairs(sorted_keys(name_sets)) do
    st.names[group] = {}
    for _, role in ipairs(sorted_keys(name_sets[group])) do st.names[group][role] = pick(name_sets[group][role]) end
  end
  local hp = pick(helper_patterns)
  local fns = {}
  for _, role in ipairs(sorted_keys(fn_names)) do fns[role] = pick(fn_names[role]) end
  st.helper = function(kind, what)
    if kind == "fn" then return assert(fns[what], what) end
    return hp[kind]:format(what)
  end
  st.ninf = pick(neg_infinities)
  st.pick = pick
  return st
end

-- Template text: $name is the drawn name of a role (group `group`), @blk(op)/@wrp(op)/@fn(role)
-- a helper's name, $NINF the -infinity literal, a line "//@key" a comment (or nothing);
-- indentation is written in steps of two spaces.
function M.fill(st, group, text)
  local names = st.names[group]
  text = text:gsub("@(%a+)%((%w+)%)", function(kind, what)
    return st.helper(kind == "blk" and "block" or kind == "wrp" and "warp" or "fn", what)
  end)
  text = text:gsub("%$NINF", st.ninf)
  text = text:gsub("%$([%a_][%w_]*)", function(role)
    local base = role:match("^(.-)2$")
    local v = names[role] or (base and names[base] and names[base] .. "2")  -- a second one of a role
    if not v then error("kernelgen.cuda: no name for the role " .. role, 0) end
    return v
  end)
  local out = {}
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    local ind, key = line:match("^(%s*)//@([%w_]+)$")
    if key then
      local list = assert(comment_text[key], key)
      local keep = st.plain or st.rng:uniform() < st.comments
      if keep then out[#out + 1] = ind .. "// " .. st.pick(list) end
    else
      out[#out + 1] = line
    end
  end
  text = table.concat(out, "\n")
  if st.indent == 4 then text = text:gsub("\n( +)", function(sp) return "\n" .. sp .. sp end) end
  return (text:gsub("\n+$", "")) .. "\n"
end

function M.lines(list) return table.concat(list, "\n") end

return M
