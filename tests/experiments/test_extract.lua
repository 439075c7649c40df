-- Extraction of the kernel from a completion: fences, bare code, signatures, and the
-- cases that are format violations.
local t = require "engine.test"
local extract = require "extract"

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
  t.eq(extract.library_call("#include <cblas.h>\n" .. KERNEL), "cblas.h")
  t.eq(extract.library_call(SIG .. " { cblas_dgemm(101, 111, 111, M, N, K); }"), "cblas_dgemm")
  t.eq(extract.library_call(SIG .. " { dgemm_(\"N\", \"N\"); }"), "dgemm_")
  t.eq(extract.library_call(SIG .. " { mkl_free(p); }"), "mkl_free")
  t.eq(extract.library_call(SIG .. " { /* faster than cblas_dgemm( */ }"), nil)
  t.eq(extract.library_call(KERNEL), nil)
  local shared = assert(os.getenv("ENGINE_SHARED_DIR"), "ENGINE_SHARED_DIR is not set")
  local blas = assert(io.open(shared .. "/kernels/k12_calls_blas.c")):read("a")
  t.eq(extract.library_call(code_of(blas)), "cblas_dgemm")
end)

t.run()
