-- The kernel source from a model's completion: fenced (```c ... ```) or bare code, the
-- expected function with the expected signature. A completion with no parsable
-- definition of that function is a format violation.
--
--   local extract = require "method.extract"
--   local code, why = extract.kernel(completion_text)          -- matmul_optimized
--   if not code then result.status = "format_violation"; result.message = why end
--   local name = extract.library_call(code)   -- "cblas_dgemm" or nil

local stages = require "method.stages"

local extract = {}

-- The task's function: void matmul_optimized(double *A, double *B, double *C, int M,
-- int N, int K). Parameter names are free; qualifiers that don't change the ABI
-- (const, restrict) are accepted.
extract.matmul = {
  name = "matmul_optimized",
  returns = "void",
  params = {"double*", "double*", "double*", "int", "int", "int"},
}

-- The function a task of the suite asks for, from its spec (engine.tasks); matmul's for
-- matmul or no task.
function extract.for_task(name)
  if name == nil or name == "matmul" then return extract.matmul end
  local spec = require("engine.tasks").get(name)
  local params = {}
  for i, p in ipairs(spec.params) do params[i] = p.type end
  return {name = spec.entry, returns = spec.returns, params = params}
end

-- Text the model may emit around its answer that is never code.
local special_tokens = {"<|im_end|>", "<|endoftext|>", "<|im_start|>"}

-- Fenced blocks in order: {text =, closed = bool}. A fence left open (the completion was
-- cut by max_tokens) runs to the end of the text.
function extract.fenced_blocks(text)
  local blocks, pos = {}, 1
  while true do
    local open_start, open_end = text:find("```[^\n]*\n", pos)
    if not open_start then break end
    local close_start, close_end = text:find("\n%s*```", open_end)
    if close_start then
      blocks[#blocks + 1] = {text = text:sub(open_end + 1, close_start), closed = true}
      pos = close_end + 1
    else
      blocks[#blocks + 1] = {text = text:sub(open_end + 1), closed = false}
      break
    end
  end
  return blocks
end

-- The index just past the brace that closes the one at `open` (skipping comments,
-- strings and character literals), or nil when it is never closed.
local function matching_brace(code, open)
  local depth, i = 0, open
  while true do
    local j = code:find("[{}/\"']", i)
    if not j then return nil end
    local c, two = code:sub(j, j), code:sub(j, j + 1)
    if two == "/*" then
      local close = code:find("*/", j + 2, true)
      if not close then return nil end
      i = close + 2
    elseif two == "//" then
      i = (code:find("\n", j, true) or #code) + 1
    elseif c == '"' or c == "'" then
      i = stages.literal_end(code, j) + 1
    elseif c == "{" then
      depth, i = depth + 1, j + 1
    elseif c == "}" then
      depth, i = depth - 1, j + 1
      if depth == 0 then return i end
    else
      i = j + 1  -- a lone '/'
    end
  end
end

-- "const double * restrict A" -> "double*"; "int M" -> "int".
local function param_type(param)
  local p = " " .. param:gsub("%*", " * ") .. " "
  for _, q in ipairs{"const", "restrict", "__restrict__", "__restrict", "volatile", "register"} do
    p = p:gsub("%f[%w_]" .. q .. "%f[^%w_]", " ")
  end
  local words = {}
  for w in p:gmatch("[%w_]+") do words[#words + 1] = w end
  local stars = select(2, p:gsub("%*", ""))
  if #words >= 2 then table.remove(words) end  -- the parameter's name
  return table.concat(words, " ") .. ("*"):rep(stars)
end

local function split_params(list)
  local out = {}
  for p in (list .. ","):gmatch("([^,]*),") do out[#out + 1] = p end
  return out
end

-- Finds the definition of spec.name in code: returns the start of the definition, the
-- end (past its closing brace), or nil and why.
local function find_definition(code, spec)
  local pos, why = 1, nil
  while true do
    local s, e = code:find("%f[%w_]" .. spec.name .. "%s*%b()", pos)
    if not s then break end
    local header_start = s
    -- the return type: the words before the name (a bounded window: an unanchored
    -- pattern ending in $ would rescan the whole prefix from every position)
    local window = code:sub(math.max(1, s - 200), s - 1)
    local before = window:match("([%w_ \t%*]*)$") or ""
    if before:match("^%s*$") then  -- GNU style: the return type on the line above
      before = window:match("([%w_ \t%*]*\n[ \t]*)$") or before
    end
    local after = code:sub(e + 1)
    local brace = after:match("^%s*(){")
    if brace then
      local params_text = code:sub(s, e):match("%((.*)%)$")
      local open = e + brace
      local close = matching_brace(code, open)
      if not close then
        return nil, "the body of " .. spec.name .. " is never closed"
      end
      local returns = param_type(before .. " x")
      if returns ~= spec.returns then
        why = string.format("%s returns '%s', expected '%s'", spec.name, returns, spec.returns)
      else
        local params = split_params(params_text)
        local types = {}
        for i, p in ipairs(params) do types[i] = param_type(p) end
        local ok = #types == #spec.params
        for i = 1, #spec.params do ok = ok and types[i] == spec.params[i] end
        if ok then
          local start = header_start - #before
          return start, close
        end
        why = string.format("%s has parameters (%s), expected (%s)", spec.name,
                            table.concat(types, ", "), table.concat(spec.params, ", "))
      end
    end
    pos = e + 1
  end
  return nil, why or ("no definition of " .. spec.name)
end

-- Removes a main() definition, which a harness that calls the kernel cannot link.
local function drop_main(code)
  if not code:find("main", 1, true) then return code end  -- the pattern below scans slowly
  local s = code:find("%f[%w_]int%s+main%s*%b()%s*{")
  if not s then return code end
  local open = code:find("{", s, true)
  local close = matching_brace(code, open)
  if not close then return code:sub(1, s - 1) end
  return code:sub(1, s - 1) .. code:sub(close)
end

-- Lines that start C code at file scope: a preprocessor directive, or a declaration.
local directives = {include = true, define = true, pragma = true, ["if"] = true,
                    ifdef = true, ifndef = true, undef = true, endif = true, ["else"] = true}
local decl_words = {void = true, double = true, float = true, int = true, long = true,
                    unsigned = true, signed = true, char = true, short = true, const = true,
                    static = true, inline = true, extern = true, typedef = true,
                    struct = true, union = true, enum = true, size_t = true,
                    __attribute__ = true, __m512d = true, __m256d = true,
                    __device__ = true, __global__ = true, __constant__ = true}  -- CUDA's

local function starts_code(line)
  local word = line:match("^%s*#%s*(%a+)")
  if word then return directives[word] == true end
  word = line:match("^%s*([%a_][%w_]*)")
  return word ~= nil and decl_words[word] == true
end

-- Bare code: from the first line of C before the definition (prose before it is
-- dropped), through the definition, and on through the file-scope C that follows it
-- (helpers after the kernel), up to the first line of prose.
local function bare_code(text, start, stop)
  local first = start
  local pos = 1
  while pos < start do
    local line_end = text:find("\n", pos, true) or #text + 1
    if starts_code(text:sub(pos, line_end - 1)) then first = pos; break end
    pos = line_end + 1
  end
  local last = stop - 1
  while true do
    local next_start = text:find("%S", last + 1)
    if not next_start then break end
    local line_start = next_start
    while line_start > 1 and text:sub(line_start - 1, line_start - 1) ~= "\n" do
      line_start = line_start - 1
    end
    local line_end = text:find("\n", next_start, true) or #text + 1
    if not starts_code(text:sub(line_start, line_end - 1)) then break end
    if text:sub(next_start, next_start) == "#" then
      last = line_end - 1
    else
      local semi, brace = text:find(";", next_start, true), text:find("{", next_start, true)
      if brace and (not semi or brace < semi) then
        local close = matching_brace(text, brace)
        if not close then break end
        last = close - 1
      elseif semi then
        last = semi
      else
        break
      end
    end
  end
  return text:sub(first, last)
end

local function clean(text)
  if not text:find("<|", 1, true) then return text end  -- most completions hold none
  for _, tok in ipairs(special_tokens) do text = text:gsub(tok:gsub("%p", "%%%0"), "") end
  return text
end

-- The kernel source in a completion, or nil and the reason it has none.
-- Candidates are the fenced blocks (the last complete definition wins: models often
-- restate the original before the improved kernel), then the whole text as bare code
-- (a definition written outside the fences).
function extract.kernel(text, spec)
  spec = spec or extract.matmul
  if type(text) ~= "string" then error("extract.kernel: the completion must be a string", 2) end
  text = clean(text)
  local reasons = {}
  local blocks = extract.fenced_blocks(text)
  for i = #blocks, 1, -1 do
    local block = blocks[i].text
    local start, stop_or_why = find_definition(block, spec)
    if start then
      return drop_main(block):gsub("^%s+", ""):gsub("%s+$", "") .. "\n"
    end
    reasons[#reasons + 1] = stop_or_why
  end
  local start, stop_or_why = find_definition(text, spec)
  if start then
    local code = bare_code(text, start, stop_or_why)
    return drop_main(code):gsub("^%s+", ""):gsub("%s+$", "") .. "\n"
  end
  reasons[#reasons + 1] = stop_or_why
  -- the most telling reason: a definition that is wrong rather than absent
  local none = "no definition of " .. spec.name
  for _, why in ipairs(reasons) do
    if why ~= none then return nil, why end
  end
  return nil, none
end

-- A CUDA task's kernel in a completion (stdlib/engine/cuda_tasks.lua's specs), or nil and
-- why there is none. The model writes device code only: the launch is the harness's, so
-- the answer is the fenced block (the last one holding the entry wins; else the code of
-- the bare text) that defines `extern "C" __global__ void ENTRY(...)` with a closed body,
-- helpers (`__device__` functions, constants) around it kept. What NVRTC cannot compile (host
-- code, headers it lacks) is its compile error, not a format violation.
function extract.cuda_kernel(text, entry)
  if type(text) ~= "string" then error("extract.cuda_kernel: the completion must be a string", 2) end
  if type(entry) ~= "string" or entry == "" then error("extract.cuda_kernel: the task's entry is required", 2) end
  text = clean(text)
  local header = 'extern%s+"C"%s+__global__%s+void%s+' .. entry:gsub("%p", "%%%0") .. "%s*%b()%s*(){"
  -- where the definition starts and ends (past its closing brace), or nil and why
  local function definition(code)
    local s, _, open = code:find(header)
    if not s then return nil, "no definition of extern \"C\" __global__ void " .. entry .. "(...)" end
    local close = matching_brace(code, open)
    if not close then return nil, "the body of " .. entry .. " is never closed" end
    return s, close
  end
  local function trimmed(code) return code:gsub("^%s+", ""):gsub("%s+$", "") .. "\n" end
  local blocks = extract.fenced_blocks(text)
  local why
  for i = #blocks, 1, -1 do
    local start, reason = definition(blocks[i].text)
    if start then return trimmed(blocks[i].text) end
    if reason:find("never closed", 1, true) then why = why or reason end
  end
  if why then return nil, why end
  -- bare code: prose around it dropped as for C kernels
  local start, stop_or_why = definition(text)
  if not start then return nil, stop_or_why end
  return trimmed(bare_code(text, start, stop_or_why))
end

-- Calls outside the allowed libraries (the kernel must compute the product itself, and
-- may call libm, memory allocation, memset/memcpy/memmove, abs and the OpenMP runtime):
-- the name of the first one found, or nil. The rule is the engine's own
-- (bench.symbol_allowed, the list every back end checks against); this finds the calls
-- in the source so that a violation costs no compile. When in doubt a name is left to
-- the engine: what the kernel defines (functions, macros), what the compiler provides
-- (names with a leading underscore: intrinsics, builtins), what the kernel declares
-- itself, and the words below.
local engine_bench = require "engine.bench"

-- Words followed by "(" that call nothing outside the kernel: C's keywords and the
-- standard headers' function-like macros that expand to operators or builtins.
extract.not_calls = {}
for word in ([[if for while switch return sizeof case else do goto
               void char short int long float double signed unsigned const volatile restrict
               struct union enum typeof asm inline static extern register
               alignof alignas static_assert offsetof assert defined
               va_start va_arg va_end va_copy
               isnan isinf isfinite isnormal signbit fpclassify isgreater isgreaterequal
               isless islessequal islessgreater isunordered]]):gmatch("%S+") do
  extract.not_calls[word] = true
end

-- The words after which a name and "(" are still a call.
local calls_after = {["return"] = true, ["else"] = true, ["do"] = true}

local function is_space(b) return b == 32 or (b >= 9 and b <= 13) end
local function is_word(b)
  return b == 95 or (b >= 48 and b <= 57) or (b >= 65 and b <= 90) or (b >= 97 and b <= 122)
end

-- What stands within the 64 characters before position s: the word that ends there (spaces
-- after it skipped), or the member access ("." or "->") that does. Scanned back byte by byte:
-- patterns anchored at a window's end retry from every start, and a kernel of intrinsics
-- has a hundred calls.
local function before_call(src, s)
  local floor, i = math.max(1, s - 64), s - 1
  while i >= floor and is_space(src:byte(i)) do i = i - 1 end
  if i < floor then return nil, false end
  local last = src:byte(i)
  if last == 46 or (last == 62 and i > floor and src:byte(i - 1) == 45) then return nil, true end
  local j = i
  while j >= floor and is_word(src:byte(j)) do j = j - 1 end
  return j < i and src:sub(j + 1, i) or nil, false
end

-- The names the source calls, in order, that it neither defines nor declares: each once.
function extract.external_calls(code)
  local src = stages.strip(code)
  local defined, declared, seen, calls = {}, {}, {}, {}
  -- Preprocessor lines (with their continuations) call nothing; their macros are the kernel's.
  src = src:gsub("\\\n", " ")
  src = ("\n" .. src):gsub("\n[ \t]*#[^\n]*", function(line)
    local name = line:match("^\n[ \t]*#%s*define%s+([%a_][%w_]*)")
    if name then defined[name] = true end
    return "\n"
  end)
  -- Attributes name no functions: __attribute__((aligned(64))).
  src = src:gsub("__attribute__%s*%b()", " "):gsub("__declspec%s*%b()", " ")
  local pos, body = 1, 1  -- body: where the last definition's parameters end (none inside)
  while true do
    local s, e, name = src:find("%f[%w_]([%a_][%w_]*)%s*%(", pos)
    if not s then break end
    pos = s + #name
    if s >= body then
      local _, brace = src:find("^%b()%s*{", e)
      if brace then defined[name], body = true, brace + 1 end
    end
    local word, member = before_call(src, s)
    -- "double f(...)": a declaration ("return f(...)" is a call); "a.f(...)", "p->f(...)":
    -- members, not functions
    if word and not calls_after[word] then
      declared[name] = true
    elseif not (member or seen[name]) then
      seen[name] = true
      calls[#calls + 1] = name
    end
  end
  -- A function the kernel declares itself is its own, even undefined (gcc: an undefined
  -- reference); the engine judges it.
  local out = {}
  for _, name in ipairs(calls) do
    if not (defined[name] or declared[name] or extract.not_calls[name] or name:match("^_")) then
      out[#out + 1] = name
    end
  end
  return out
end

function extract.library_call(code)
  for _, name in ipairs(extract.external_calls(code)) do
    if not engine_bench.symbol_allowed(name) then return name end
  end
  return nil
end

return extract
