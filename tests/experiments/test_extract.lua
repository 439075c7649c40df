-- Extraction of the kernel from a completion: fences, bare code, signatures, and the
-- cases that are format violations.
local t = require "engine.test"
local extract = require "method.extract"

local SIG = "void matmul_optimized(double *A, double *B, double *C, int M, int N, int K)"
local BODY = " {\n  for (int i = 0; i < M * N; i++) C[i] = 0;\n}"
local KERNEL = SIG .. BODY

local function code_of(text)
  local code, why = extract.kernel(text)
  if not code then error("no kernel: " .. tostring(why), 2) end
  return code
end

local function violation(text)
  local code, why = extract.kernel(text)
  if code then error("expected a format violation, got:\n" .. code, 2) end
  return why
end

t.test("fenced code, with any info string, prose around it", function()
  t.eq(code_of("Sure!\n```c\n" .. KERNEL .. "\n```\nThis is fast."), KERNEL .. "\n")
  t.eq(code_of("```cpp\n" .. KERNEL .. "\n```"), KERNEL .. "\n")
  t.eq(code_of("```\n" .. KERNEL .. "\n```"), KERNEL .. "\n")
  t.eq(code_of("```C\n#include <omp.h>\n" .. KERNEL .. "\n   ```"), "#include <omp.h>\n" .. KERNEL .. "\n")
end)

t.test("the last block with a complete definition wins", function()
  local old = SIG .. " { /* old */ }"
  local text = "Original:\n```c\n" .. old .. "\n```\nImproved:\n```c\n" .. KERNEL ..
               "\n```\nUsage:\n```c\nmatmul_optimized(A, B, C, 4, 4, 4);\n```"
  t.eq(code_of(text), KERNEL .. "\n")
end)

t.test("an unclosed fence (the completion was cut) still yields a complete function", function()
  t.eq(code_of("```c\n" .. KERNEL .. "\n"), KERNEL .. "\n")
  t.contains(violation("```c\n" .. SIG .. " {\n  for (;;) {\n"), "never closed")
end)

t.test("a definition outside the fences, and the most telling reason", function()
  local text = "The kernel:\n" .. KERNEL .. "\nCall it like this:\n```c\nmatmul_optimized(A, B, C, M, N, K);\n```"
  t.eq(code_of(text), KERNEL .. "\n")
  local wrong = "```c\nint matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {}\n```\n"
                .. "Usage:\n```c\nmatmul_optimized(A, B, C, M, N, K);\n```"
  t.contains(violation(wrong), "returns 'int'")
end)

t.test("bare code: prose before is dropped, #includes kept, main removed", function()
  local text = "# Answer\nHere is my kernel.\n#include <immintrin.h>\n#define BS 64\n" .. KERNEL ..
               "\nint main(void) { double a[1]; matmul_optimized(a, a, a, 1, 1, 1); return 0; }\n"
  t.eq(code_of(text), "#include <immintrin.h>\n#define BS 64\n" .. KERNEL .. "\n")
  t.eq(code_of(KERNEL), KERNEL .. "\n")
end)

t.test("braces inside comments, strings and characters do not end the body", function()
  local body = SIG .. " {\n  /* } */ const char *s = \"}}\"; char c = '}'; // }\n  C[0] = 0;\n}"
  t.eq(code_of("```c\n" .. body .. "\n```"), body .. "\n")
end)

t.test("parameter names are free; const and restrict are accepted", function()
  local sig = "void matmul_optimized(const double *restrict a, const double * __restrict__ b, "
              .. "double *c, const int m, int n, int k) { c[0] = 0; }"
  t.eq(code_of(sig), sig .. "\n")
  local gnu = "void\nmatmul_optimized(double* A, double* B, double* C, int M, int N, int K)\n{\n}"
  t.eq(code_of(gnu), gnu .. "\n")
end)

t.test("a prototype before the definition, helpers around it", function()
  local text = "static inline double dot(const double *a, int n);\n" .. SIG .. ";\n" .. KERNEL ..
               "\nstatic inline double dot(const double *a, int n) { return a[n]; }"
  t.eq(code_of(text), text .. "\n")
end)

t.test("a wrong signature is a format violation naming the difference", function()
  t.contains(violation("int matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {}"),
             "returns 'int', expected 'void'")
  t.contains(violation("void matmul_optimized(double *A, double *B, double *C, int M, int N) {}"),
             "parameters (double*, double*, double*, int, int)")
  t.contains(violation("void matmul_optimized(float *A, float *B, float *C, int M, int N, int K) {}"),
             "expected (double*, double*, double*, int, int, int)")
  t.contains(violation("void matmul_optimized(double **A, double *B, double *C, int M, int N, int K) {}"),
             "double**")
  t.contains(violation("static void matmul_optimized(double *A, double *B, double *C, int M, int N, int K) {}"),
             "returns 'static void'")
end)

t.test("no definition at all is a format violation", function()
  t.eq(violation("I can't help with that."), "no definition of matmul_optimized")
  t.eq(violation(""), "no definition of matmul_optimized")
  t.eq(violation("matmul_optimized(A, B, C, M, N, K);"), "no definition of matmul_optimized")
  t.eq(violation("void matmul_optimized_v2(double *A, double *B, double *C, int M, int N, int K) {}"),
       "no definition of matmul_optimized")
  t.eq(violation("```c\n" .. SIG .. ";\n```"), "no definition of matmul_optimized")
  t.raises(function() extract.kernel(nil) end, "must be a string")
end)

t.test("chat special tokens are not code", function()
  t.eq(code_of("```c\n" .. KERNEL .. "\n```<|im_end|>"), KERNEL .. "\n")
  t.eq(code_of(KERNEL .. "<|endoftext|>"), KERNEL .. "\n")
end)

t.test("another function's spec", function()
  local spec = {name = "stencil", returns = "void", params = {"double*", "double*", "int"}}
  t.eq(extract.kernel("void stencil(double *in, double *out, int n) { }", spec),
       "void stencil(double *in, double *out, int n) { }\n")
end)

t.test("library calls are found, not in comments", function()
  t.eq(extract.library_call(SIG .. " { cblas_dgemm(101, 111, 111, M, N, K); }"), "cblas_dgemm")
  t.eq(extract.library_call(SIG .. " { dgemm_(\"N\", \"N\"); }"), "dgemm_")
  t.eq(extract.library_call(SIG .. " { mkl_free(p); }"), "mkl_free")
  t.eq(extract.library_call(SIG .. " { /* faster than cblas_dgemm( */ }"), nil)
  t.eq(extract.library_call(SIG .. " { const char *s = \"printf(\"; }"), nil)
  t.eq(extract.library_call(KERNEL), nil)
  -- a header alone calls nothing: both back ends compile it
  t.eq(extract.library_call("#include <cblas.h>\n" .. KERNEL), nil)
  local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
  local blas = assert(io.open(here .. "/../data/kernels/k12_calls_blas.c")):read("a")
  t.eq(extract.library_call(code_of(blas)), "cblas_dgemm")
end)

t.test("what the kernel defines or the compiler provides is not a library call", function()
  local src = [[
#include <immintrin.h>
#define IDX(i, j, ld) ((i) * (ld) + (j))
#define BLOCK(x) min_block(x)
static inline int min_block(int x) __attribute__((always_inline));
double helper(double x);
struct S { void (*f)(int); } s;
typedef double v4d __attribute__((vector_size(32), aligned(32)));
]] .. SIG .. [[ {
  double buf[8] __attribute__((aligned(64)));
  #pragma omp parallel for num_threads(4) schedule(static)
  for (int i = 0; i < M; i++) C[IDX(i, 0, N)] = helper(A[i]) + sizeof(double) + BLOCK(i);
  __m256d v = _mm256_setzero_pd(); _mm_prefetch((const char *)A, _MM_HINT_T0);
  __builtin_prefetch(B); assert(M > 0); if (isnan(C[0])) return;
  s.f(1); (&s)->f(2);
}
static inline int min_block(int x) { return x < 64 ? x : 64; }
double helper(double x) { return x; }
]]
  t.eq(extract.external_calls(src), {})
  -- declared by the kernel and never defined: its own function (gcc: an undefined reference)
  t.eq(extract.library_call("void helper_missing(double *C);\n" .. SIG .. " { helper_missing(C); }"), nil)
  t.eq(extract.library_call(src), nil)
  t.eq(extract.external_calls(SIG .. " { double t = sqrt(A[0]) + expf(1.0f); C[0] = t; "
                              .. "if (t) return fabs(t); else memcpy(C, A, 8); }"),
       {"sqrt", "expf", "fabs", "memcpy"})
  -- members are not functions; a definition's parameter list defines nothing (a line that
  -- broke off into a prototype), so g here is called, not defined
  t.eq(extract.external_calls(SIG .. " { s.f(1); p->h (2); p -> k(3); q. m(4); }"), {})
  t.eq(extract.external_calls("void f(int n, g(int a) { }) {\n  g(1);\n}\n" .. SIG .. " { f(1, 2); }"), {"g"})
  -- the word before a name decides across spaces and line breaks, within 64 characters
  t.eq(extract.external_calls(SIG .. " {\n  return\n    cbrt(A[0]);\n}"), {"cbrt"})
  t.eq(extract.external_calls("double\n  helper(double x);\n" .. SIG .. " { C[0] = helper(A[0]); }"), {})
  t.eq(extract.external_calls(SIG .. " { double x =" .. string.rep(" ", 70) .. "erf(A[0]); }"), {"erf"})
end)

-- The engine's rule (bench.symbol_allowed, the allowed libraries every back end checks
-- against) is the only one: extract finds the calls and asks it.
t.test("extract agrees with the engine's allowed libraries", function()
  local function calling(name) return "#include <stdio.h>\n" .. SIG .. " {\n  " .. name .. "(A);\n}" end
  local allowed = bench.allowed_symbols()
  t.ok(#allowed.libraries > 0)
  t.contains(allowed.text, "libm")
  for _, lib in ipairs(allowed.libraries) do
    for _, name in ipairs(lib.symbols) do
      t.ok(bench.symbol_allowed(name), name)
      if not name:match("^_") then t.eq(extract.library_call(calling(name)), nil, name) end
    end
    for _, prefix in ipairs(lib.prefixes) do
      t.ok(bench.symbol_allowed(prefix .. "x"), prefix)
      if not prefix:match("^_") then t.eq(extract.library_call(calling(prefix .. "get_thread_num")), nil) end
    end
  end
  for _, name in ipairs{"printf", "fprintf", "cblas_dgemm", "dlopen", "syscall", "fopen",
                        "pthread_create", "system", "exit", "sqrtx", "omp"} do
    t.eq(bench.symbol_allowed(name), false, name)
    t.eq(extract.library_call(calling(name)), name)
  end
  -- what the engine allows, extract allows, and the first call it refuses is named
  t.eq(extract.library_call(SIG .. " { double *t = aligned_alloc(64, 64); t[0] = lroundf(1.5f) + abs(M);"
                            .. " memcpy(C, t, 8); C[1] = omp_get_thread_num(); free(t); printf(\"x\");"
                            .. " system(\"ls\"); }"), "printf")
end)

t.test("the labelled kernels: extract refuses only what the engine refuses", function()
  local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
  local seen = 0
  for _, dir in ipairs{here .. "/../data/kernels", here .. "/../bench/hostile"} do
    for _, f in ipairs(sys.listdir(dir)) do
      if f:match("%.c$") then
        local src = assert(io.open(dir .. "/" .. f)):read("a")
        local expect = src:match("expect:%s*([%w_]+)")
        local call = extract.library_call(src)
        if call then t.eq(expect, "library_violation", f .. " calls " .. call) end
        -- load-time code (constructors, _init, _fini) is the back ends' to find, not a call
        local load_time = src:find("constructor") or src:find("code that would run when the kernel is loaded", 1, true)
        if expect == "library_violation" and not load_time then
          t.ok(call, f .. ": a library violation that extract misses")
        end
        seen = seen + 1
      end
    end
  end
  t.ok(seen > 20)
end)


t.test("a CUDA task's kernel: device code defining the entry, from the last block that has it", function()
  local entry = 'extern "C" __global__ void vector_add(const float *x, const float *y, float *z, int n) {\n'
    .. "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) z[i] = add(x[i], y[i]);\n}"
  local helper = "__device__ float add(float a, float b) { return a + b; }\n"
  -- fenced, a helper kept, an earlier block without the entry passed over
  local code = extract.cuda_kernel("Here:\n```cuda\n" .. helper .. entry .. "\n```\nand a note:\n```\nnvcc x.cu\n```",
                                   "vector_add")
  t.eq(code, helper .. entry .. "\n")
  -- the last block holding the entry wins (a model restating the original first)
  local first = entry:gsub("add%(x%[i%], y%[i%]%)", "x[i] + y[i]")
  t.eq(extract.cuda_kernel("```cpp\n" .. first .. "\n```\n```cuda\n" .. helper .. entry .. "\n```", "vector_add"),
       helper .. entry .. "\n")
  -- bare code: the prose around it dropped
  t.eq(extract.cuda_kernel("The kernel:\n" .. helper .. entry .. "\nIt adds.", "vector_add"), helper .. entry .. "\n")
  -- what is missing is named
  local none, why = extract.cuda_kernel("```cuda\n__global__ void vector_add(float *z) {}\n```", "vector_add")
  t.eq(none, nil)
  t.contains(why, 'no definition of extern "C" __global__ void vector_add(...)')
  local _, cut = extract.cuda_kernel("```cuda\n" .. entry:sub(1, -3), "vector_add")
  t.contains(cut, "the body of vector_add is never closed")
  t.eq(select(2, extract.cuda_kernel("I cannot write this kernel.", "matmul")),
       'no definition of extern "C" __global__ void matmul(...)')
  t.raises(function() extract.cuda_kernel("x") end, "the task's entry is required")
end)

t.test("every CUDA task's straightforward kernel is extracted whole from a fenced answer", function()
  for _, spec in ipairs(require("engine.cuda_tasks").list()) do
    local code = spec.straightforward:gsub("^%s+", ""):gsub("%s+$", "") .. "\n"
    t.eq(extract.cuda_kernel("```cuda\n" .. spec.straightforward .. "```\n", spec.entry), code, spec.name)
  end
end)

t.run()
