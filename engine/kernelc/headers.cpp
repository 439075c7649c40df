// The headers kernels include, written for this front end. Declarations live in the
// prelude (parsed before every kernel, in an outer scope the kernel may shadow); a
// header only brings its macros, so `#include <immintrin.h>` costs nothing. The x86
// intrinsics are always-inline functions over GNU vector types, as gcc's own headers
// are, but written with generic vector operations instead of target builtins.
#include <cstring>
#include <map>
#include <string>
#include <utility>

#include "kernelc/ast.hpp"

namespace kernelc {

// The prelude up to AVX2's constructors; build_prelude adds the rest.
static const char* kPreludeHead = R"PRELUDE(
typedef unsigned long size_t;
typedef long ptrdiff_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef long intmax_t;
typedef unsigned long uintmax_t;
typedef double max_align_t;

void *malloc(size_t);
void *calloc(size_t, size_t);
void *realloc(void *, size_t);
void *aligned_alloc(size_t, size_t);
int posix_memalign(void **, size_t, size_t);
void free(void *);
int abs(int);
long labs(long);
long long llabs(long long);
void *memset(void *, int, size_t);
void *memcpy(void *restrict, const void *restrict, size_t);
void *memmove(void *, const void *, size_t);

double sqrt(double); double cbrt(double); double fabs(double); double exp(double);
double exp2(double); double expm1(double); double log(double); double log2(double);
double log10(double); double log1p(double); double pow(double, double); double sin(double);
double cos(double); double tan(double); double asin(double); double acos(double);
double atan(double); double atan2(double, double); double sinh(double); double cosh(double);
double tanh(double); double floor(double); double ceil(double); double round(double);
double trunc(double); double rint(double); double nearbyint(double); double fmod(double, double);
double fma(double, double, double); double fmin(double, double); double fmax(double, double);
double fdim(double, double); double hypot(double, double); double copysign(double, double);
double ldexp(double, int); double erf(double); double erfc(double);
double tgamma(double); double lgamma(double); long lround(double); long lrint(double);
float sqrtf(float); float fabsf(float); float expf(float); float logf(float);
float powf(float, float); float fmaf(float, float, float); float fminf(float, float);
float fmaxf(float, float); float floorf(float); float ceilf(float); float sinf(float);
float cosf(float); float tanhf(float); float roundf(float);

int omp_get_thread_num(void);
int omp_get_num_threads(void);
int omp_get_max_threads(void);
void omp_set_num_threads(int);
int omp_get_num_procs(void);
int omp_in_parallel(void);
void omp_set_dynamic(int);
int omp_get_dynamic(void);
double omp_get_wtime(void);
typedef struct { int _x; } omp_lock_t;
void omp_init_lock(omp_lock_t *);
void omp_destroy_lock(omp_lock_t *);
void omp_set_lock(omp_lock_t *);
void omp_unset_lock(omp_lock_t *);

typedef unsigned char __mmask8;
typedef unsigned short __mmask16;
typedef double __m128d __attribute__((__vector_size__(16)));
typedef double __m256d __attribute__((__vector_size__(32)));
typedef double __m512d __attribute__((__vector_size__(64)));
typedef double __m128d_u __attribute__((__vector_size__(16), __aligned__(1)));
typedef double __m256d_u __attribute__((__vector_size__(32), __aligned__(1)));
typedef double __m512d_u __attribute__((__vector_size__(64), __aligned__(1)));

#define __KC_INL static inline __attribute__((__always_inline__))

__KC_INL void *_mm_malloc(size_t n, size_t a) {
  void *p;
  if (a < sizeof(void *)) a = sizeof(void *);
  if (posix_memalign(&p, a, n)) return 0;
  return p;
}
__KC_INL void _mm_free(void *p) { free(p); }

/* ---- SSE2: two doubles ---- */
__KC_INL __m128d _mm_setzero_pd(void) { return (__m128d){0.0, 0.0}; }
__KC_INL __m128d _mm_set1_pd(double a) { return (__m128d){a, a}; }
__KC_INL __m128d _mm_set_pd1(double a) { return (__m128d){a, a}; }
__KC_INL __m128d _mm_set_pd(double b, double a) { return (__m128d){a, b}; }
__KC_INL __m128d _mm_setr_pd(double a, double b) { return (__m128d){a, b}; }
__KC_INL __m128d _mm_set_sd(double a) { return (__m128d){a, 0.0}; }
__KC_INL __m128d _mm_load_pd(const double *p) { return *(const __m128d *)p; }
__KC_INL __m128d _mm_loadu_pd(const double *p) { return *(const __m128d_u *)p; }
__KC_INL __m128d _mm_load1_pd(const double *p) { return (__m128d){*p, *p}; }
__KC_INL __m128d _mm_load_pd1(const double *p) { return (__m128d){*p, *p}; }
__KC_INL __m128d _mm_loaddup_pd(const double *p) { return (__m128d){*p, *p}; }
__KC_INL __m128d _mm_load_sd(const double *p) { return (__m128d){*p, 0.0}; }
__KC_INL void _mm_store_pd(double *p, __m128d a) { *(__m128d *)p = a; }
__KC_INL void _mm_storeu_pd(double *p, __m128d a) { *(__m128d_u *)p = a; }
__KC_INL void _mm_stream_pd(double *p, __m128d a) { *(__m128d *)p = a; }
__KC_INL void _mm_store_sd(double *p, __m128d a) { *p = a[0]; }
__KC_INL void _mm_storel_pd(double *p, __m128d a) { *p = a[0]; }
__KC_INL void _mm_storeh_pd(double *p, __m128d a) { *p = a[1]; }
__KC_INL void _mm_store1_pd(double *p, __m128d a) { p[0] = a[0]; p[1] = a[0]; }
__KC_INL double _mm_cvtsd_f64(__m128d a) { return a[0]; }
__KC_INL __m128d _mm_add_pd(__m128d a, __m128d b) { return a + b; }
__KC_INL __m128d _mm_sub_pd(__m128d a, __m128d b) { return a - b; }
__KC_INL __m128d _mm_mul_pd(__m128d a, __m128d b) { return a * b; }
__KC_INL __m128d _mm_div_pd(__m128d a, __m128d b) { return a / b; }
__KC_INL __m128d _mm_add_sd(__m128d a, __m128d b) { return (__m128d){a[0] + b[0], a[1]}; }
__KC_INL __m128d _mm_mul_sd(__m128d a, __m128d b) { return (__m128d){a[0] * b[0], a[1]}; }
__KC_INL __m128d _mm_max_pd(__m128d a, __m128d b) { return (__m128d){a[0] > b[0] ? a[0] : b[0], a[1] > b[1] ? a[1] : b[1]}; }
__KC_INL __m128d _mm_min_pd(__m128d a, __m128d b) { return (__m128d){a[0] < b[0] ? a[0] : b[0], a[1] < b[1] ? a[1] : b[1]}; }
__KC_INL __m128d _mm_sqrt_pd(__m128d a) { return (__m128d){__builtin_sqrt(a[0]), __builtin_sqrt(a[1])}; }
__KC_INL __m128d _mm_hadd_pd(__m128d a, __m128d b) { return (__m128d){a[0] + a[1], b[0] + b[1]}; }
__KC_INL __m128d _mm_unpacklo_pd(__m128d a, __m128d b) { return (__m128d){a[0], b[0]}; }
__KC_INL __m128d _mm_unpackhi_pd(__m128d a, __m128d b) { return (__m128d){a[1], b[1]}; }
__KC_INL __m128d _mm_fmadd_pd(__m128d a, __m128d b, __m128d c) { return a * b + c; }
__KC_INL __m128d _mm_fmsub_pd(__m128d a, __m128d b, __m128d c) { return a * b - c; }
__KC_INL __m128d _mm_fnmadd_pd(__m128d a, __m128d b, __m128d c) { return c - a * b; }

/* ---- AVX, AVX2, FMA: four doubles ---- */
__KC_INL __m256d _mm256_setzero_pd(void) { return (__m256d){0.0, 0.0, 0.0, 0.0}; }
__KC_INL __m256d _mm256_set1_pd(double a) { return (__m256d){a, a, a, a}; }
__KC_INL __m256d _mm256_set_pd(double d, double c, double b, double a) { return (__m256d){a, b, c, d}; }
__KC_INL __m256d _mm256_setr_pd(double a, double b, double c, double d) { return (__m256d){a, b, c, d}; }
__KC_INL __m256d _mm256_broadcast_sd(const double *p) { double a = *p; return (__m256d){a, a, a, a}; }
__KC_INL __m256d _mm256_broadcastsd_pd(__m128d v) { double a = v[0]; return (__m256d){a, a, a, a}; }
)PRELUDE";

// What AVX2 (four doubles) and AVX-512F (eight) spell alike but for the vector type ($vec),
// the intrinsics' prefix ($mm), what a load or store points to ($ptr: AVX-512F's take
// void *, as gcc's do) and the lane count ($lanes): written once, filled in for each width.
static const char* kVectorOps = R"H(
__KC_INL $vec $mm_load_pd(const $ptr *p) { return *(const $vec *)p; }
__KC_INL $vec $mm_loadu_pd(const $ptr *p) { return *(const $vec_u *)p; }
__KC_INL void $mm_store_pd($ptr *p, $vec a) { *($vec *)p = a; }
__KC_INL void $mm_storeu_pd($ptr *p, $vec a) { *($vec_u *)p = a; }
__KC_INL void $mm_stream_pd($ptr *p, $vec a) { *($vec *)p = a; }
__KC_INL $vec $mm_add_pd($vec a, $vec b) { return a + b; }
__KC_INL $vec $mm_sub_pd($vec a, $vec b) { return a - b; }
__KC_INL $vec $mm_mul_pd($vec a, $vec b) { return a * b; }
__KC_INL $vec $mm_div_pd($vec a, $vec b) { return a / b; }
__KC_INL $vec $mm_fmadd_pd($vec a, $vec b, $vec c) { return a * b + c; }
__KC_INL $vec $mm_fmsub_pd($vec a, $vec b, $vec c) { return a * b - c; }
__KC_INL $vec $mm_fnmadd_pd($vec a, $vec b, $vec c) { return c - a * b; }
__KC_INL $vec $mm_fnmsub_pd($vec a, $vec b, $vec c) { return -(a * b) - c; }
__KC_INL $vec $mm_max_pd($vec a, $vec b) {
  $vec r;
  for (int i = 0; i < $lanes; i++) r[i] = a[i] > b[i] ? a[i] : b[i];
  return r;
}
__KC_INL $vec $mm_min_pd($vec a, $vec b) {
  $vec r;
  for (int i = 0; i < $lanes; i++) r[i] = a[i] < b[i] ? a[i] : b[i];
  return r;
}
__KC_INL $vec $mm_sqrt_pd($vec a) {
  $vec r;
  for (int i = 0; i < $lanes; i++) r[i] = __builtin_sqrt(a[i]);
  return r;
}
)H";

// AVX2's own operations, then AVX-512F's constructors.
static const char* kAvx2Tail = R"PRELUDE(
__KC_INL __m256d _mm256_hadd_pd(__m256d a, __m256d b) { return (__m256d){a[0] + a[1], b[0] + b[1], a[2] + a[3], b[2] + b[3]}; }
__KC_INL __m128d _mm256_castpd256_pd128(__m256d a) { return (__m128d){a[0], a[1]}; }
__KC_INL __m256d _mm256_castpd128_pd256(__m128d a) { return (__m256d){a[0], a[1], 0.0, 0.0}; }
__KC_INL __m128d _mm256_extractf128_pd(__m256d a, int i) { return i & 1 ? (__m128d){a[2], a[3]} : (__m128d){a[0], a[1]}; }
__KC_INL double _mm256_cvtsd_f64(__m256d a) { return a[0]; }
__KC_INL __m256d _mm256_unpacklo_pd(__m256d a, __m256d b) { return (__m256d){a[0], b[0], a[2], b[2]}; }
__KC_INL __m256d _mm256_unpackhi_pd(__m256d a, __m256d b) { return (__m256d){a[1], b[1], a[3], b[3]}; }

/* ---- AVX-512F: eight doubles ---- */
__KC_INL __m512d _mm512_setzero_pd(void) { return (__m512d){0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0}; }
__KC_INL __m512d _mm512_set1_pd(double a) { return (__m512d){a, a, a, a, a, a, a, a}; }
__KC_INL __m512d _mm512_set_pd(double h, double g, double f, double e, double d, double c, double b, double a) { return (__m512d){a, b, c, d, e, f, g, h}; }
__KC_INL __m512d _mm512_setr_pd(double a, double b, double c, double d, double e, double f, double g, double h) { return (__m512d){a, b, c, d, e, f, g, h}; }
__KC_INL __m512d _mm512_broadcastsd_pd(__m128d v) { double a = v[0]; return (__m512d){a, a, a, a, a, a, a, a}; }
)PRELUDE";

// AVX-512F's own operations: reductions, masked forms, casts.
static const char* kAvx512Tail = R"PRELUDE(
__KC_INL __m512d _mm512_abs_pd(__m512d a) {
  __m512d r;
  for (int i = 0; i < 8; i++) r[i] = __builtin_fabs(a[i]);
  return r;
}
/* The same tree as gcc's: halves, then quarters, then the last pair. */
__KC_INL double _mm512_reduce_add_pd(__m512d a) {
  __m256d t = (__m256d){a[4], a[5], a[6], a[7]} + (__m256d){a[0], a[1], a[2], a[3]};
  __m128d u = (__m128d){t[2], t[3]} + (__m128d){t[0], t[1]};
  return u[0] + u[1];
}
__KC_INL double _mm512_reduce_mul_pd(__m512d a) {
  __m256d t = (__m256d){a[4], a[5], a[6], a[7]} * (__m256d){a[0], a[1], a[2], a[3]};
  __m128d u = (__m128d){t[2], t[3]} * (__m128d){t[0], t[1]};
  return u[0] * u[1];
}
__KC_INL double _mm512_reduce_max_pd(__m512d a) {
  double m = a[0];
  for (int i = 1; i < 8; i++) m = a[i] > m ? a[i] : m;
  return m;
}
__KC_INL double _mm512_reduce_min_pd(__m512d a) {
  double m = a[0];
  for (int i = 1; i < 8; i++) m = a[i] < m ? a[i] : m;
  return m;
}
/* Masked forms: all-ones and all-zeros masks (the common case outside loop tails)
   take the plain vector path; otherwise lanes are handled one by one, touching no
   memory of a masked-off lane. */
__KC_INL __m512d _mm512_maskz_loadu_pd(__mmask8 k, const void *p) {
  if (k == 0xFF) return *(const __m512d_u *)p;
  __m512d r = (__m512d){0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};
  for (int i = 0; i < 8; i++) if ((k >> i) & 1) r[i] = ((const double *)p)[i];
  return r;
}
__KC_INL __m512d _mm512_mask_loadu_pd(__m512d src, __mmask8 k, const void *p) {
  if (k == 0xFF) return *(const __m512d_u *)p;
  for (int i = 0; i < 8; i++) if ((k >> i) & 1) src[i] = ((const double *)p)[i];
  return src;
}
__KC_INL __m512d _mm512_maskz_load_pd(__mmask8 k, const void *p) { return _mm512_maskz_loadu_pd(k, p); }
__KC_INL __m512d _mm512_mask_load_pd(__m512d src, __mmask8 k, const void *p) { return _mm512_mask_loadu_pd(src, k, p); }
__KC_INL void _mm512_mask_storeu_pd(void *p, __mmask8 k, __m512d a) {
  if (k == 0xFF) { *(__m512d_u *)p = a; return; }
  for (int i = 0; i < 8; i++) if ((k >> i) & 1) ((double *)p)[i] = a[i];
}
__KC_INL void _mm512_mask_store_pd(void *p, __mmask8 k, __m512d a) { _mm512_mask_storeu_pd(p, k, a); }
__KC_INL __m512d _mm512_mask_fmadd_pd(__m512d a, __mmask8 k, __m512d b, __m512d c) {
  __m512d f = a * b + c;
  if (k == 0xFF) return f;
  for (int i = 0; i < 8; i++) if (!((k >> i) & 1)) f[i] = a[i];
  return f;
}
__KC_INL __m512d _mm512_maskz_fmadd_pd(__mmask8 k, __m512d a, __m512d b, __m512d c) {
  __m512d f = a * b + c;
  if (k == 0xFF) return f;
  for (int i = 0; i < 8; i++) if (!((k >> i) & 1)) f[i] = 0.0;
  return f;
}
__KC_INL __m512d _mm512_mask_add_pd(__m512d src, __mmask8 k, __m512d a, __m512d b) {
  __m512d f = a + b;
  if (k == 0xFF) return f;
  if (k == 0) return src;
  for (int i = 0; i < 8; i++) if (!((k >> i) & 1)) f[i] = src[i];
  return f;
}
__KC_INL __m512d _mm512_mask_mul_pd(__m512d src, __mmask8 k, __m512d a, __m512d b) {
  __m512d f = a * b;
  if (k == 0xFF) return f;
  if (k == 0) return src;
  for (int i = 0; i < 8; i++) if (!((k >> i) & 1)) f[i] = src[i];
  return f;
}
__KC_INL __m512d _mm512_mask_blend_pd(__mmask8 k, __m512d a, __m512d b) {
  for (int i = 0; i < 8; i++) if ((k >> i) & 1) a[i] = b[i];
  return a;
}
__KC_INL __mmask8 _cvtu32_mask8(unsigned int a) { return (__mmask8)a; }
__KC_INL unsigned int _cvtmask8_u32(__mmask8 a) { return a; }
__KC_INL __m256d _mm512_castpd512_pd256(__m512d a) { return (__m256d){a[0], a[1], a[2], a[3]}; }
__KC_INL __m128d _mm512_castpd512_pd128(__m512d a) { return (__m128d){a[0], a[1]}; }
__KC_INL __m512d _mm512_castpd256_pd512(__m256d a) { return (__m512d){a[0], a[1], a[2], a[3], 0.0, 0.0, 0.0, 0.0}; }
__KC_INL __m256d _mm512_extractf64x4_pd(__m512d a, int i) {
  return i & 1 ? (__m256d){a[4], a[5], a[6], a[7]} : (__m256d){a[0], a[1], a[2], a[3]};
}
__KC_INL double _mm512_cvtsd_f64(__m512d a) { return a[0]; }
)PRELUDE";

static const char* kImmintrin = R"H(
#define _MM_HINT_T0 3
#define _MM_HINT_T1 2
#define _MM_HINT_T2 1
#define _MM_HINT_NTA 0
#define _MM_HINT_ET0 7
#define _MM_HINT_ET1 6
#define _mm_prefetch(P, I) __builtin_prefetch((P), (((I) & 0x4) >> 2), ((I) & 0x3))
)H";

static const char* kMath = R"H(
#define M_E 2.7182818284590452354
#define M_LOG2E 1.4426950408889634074
#define M_LOG10E 0.43429448190325182765
#define M_LN2 0.69314718055994530942
#define M_LN10 2.30258509299404568402
#define M_PI 3.14159265358979323846
#define M_PI_2 1.57079632679489661923
#define M_PI_4 0.78539816339744830962
#define M_1_PI 0.31830988618379067154
#define M_2_PI 0.63661977236758134308
#define M_SQRT2 1.41421356237309504880
#define M_SQRT1_2 0.70710678118654752440
#define HUGE_VAL (__builtin_huge_val())
#define INFINITY (__builtin_inff())
#define NAN (__builtin_nanf(""))
)H";

static const char* kStdlib = R"H(
#define NULL ((void *)0)
#define EXIT_SUCCESS 0
#define EXIT_FAILURE 1
#define RAND_MAX 2147483647
)H";

static const char* kStddef = R"H(
#define NULL ((void *)0)
#define offsetof(T, m) __builtin_offsetof(T, m)
)H";

// What <stdio.h> declares that kernels reach for: declared, so that calling it is the
// allow-list's library violation (as gcc's object check finds), not an undeclared name.
static const char* kStdio = R"H(
#define NULL ((void *)0)
#define EOF (-1)
typedef struct _IO_FILE FILE;
extern FILE *stdin;
extern FILE *stdout;
extern FILE *stderr;
int printf(const char *, ...);
int fprintf(FILE *, const char *, ...);
int sprintf(char *, const char *, ...);
int snprintf(char *, size_t, const char *, ...);
int puts(const char *);
int putchar(int);
int fputs(const char *, FILE *);
int fflush(FILE *);
FILE *fopen(const char *, const char *);
int fclose(FILE *);
size_t fwrite(const void *, size_t, size_t, FILE *);
size_t fread(void *, size_t, size_t, FILE *);
)H";

static const char* kStdint = R"H(
#define INT8_MIN (-128)
#define INT8_MAX 127
#define UINT8_MAX 255
#define INT16_MIN (-32767-1)
#define INT16_MAX 32767
#define UINT16_MAX 65535
#define INT32_MIN (-2147483647-1)
#define INT32_MAX 2147483647
#define UINT32_MAX 4294967295U
#define INT64_MIN (-9223372036854775807L-1)
#define INT64_MAX 9223372036854775807L
#define UINT64_MAX 18446744073709551615UL
#define SIZE_MAX 18446744073709551615UL
#define INTPTR_MAX 9223372036854775807L
)H";

static const char* kStdbool = R"H(
#define bool _Bool
#define true 1
#define false 0
#define __bool_true_false_are_defined 1
)H";

static const char* kLimits = R"H(
#define CHAR_BIT 8
#define SCHAR_MIN (-128)
#define SCHAR_MAX 127
#define UCHAR_MAX 255
#define CHAR_MIN (-128)
#define CHAR_MAX 127
#define SHRT_MIN (-32768)
#define SHRT_MAX 32767
#define USHRT_MAX 65535
#define INT_MIN (-2147483647-1)
#define INT_MAX 2147483647
#define UINT_MAX 4294967295U
#define LONG_MIN (-9223372036854775807L-1)
#define LONG_MAX 9223372036854775807L
#define ULONG_MAX 18446744073709551615UL
#define LLONG_MIN (-9223372036854775807LL-1)
#define LLONG_MAX 9223372036854775807LL
#define ULLONG_MAX 18446744073709551615ULL
)H";

static const char* kFloat = R"H(
#define DBL_MAX 1.79769313486231570815e+308
#define DBL_MIN 2.22507385850720138309e-308
#define DBL_EPSILON 2.22044604925031308085e-16
#define FLT_MAX 3.40282346638528859812e+38F
#define FLT_MIN 1.17549435082228750797e-38F
#define FLT_EPSILON 1.19209289550781250000e-7F
#define DBL_DIG 15
#define DBL_MANT_DIG 53
)H";

static const char* kAssert = R"H(
#define assert(e) ((void)0)
#define static_assert _Static_assert
)H";

static const char* kCblas = R"H(
enum CBLAS_ORDER { CblasRowMajor = 101, CblasColMajor = 102 };
enum CBLAS_TRANSPOSE { CblasNoTrans = 111, CblasTrans = 112, CblasConjTrans = 113 };
typedef enum CBLAS_ORDER CBLAS_LAYOUT;
void cblas_dgemm(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, enum CBLAS_TRANSPOSE, int, int, int,
                 double, const double *, int, const double *, int, double, double *, int);
void cblas_dgemv(enum CBLAS_ORDER, enum CBLAS_TRANSPOSE, int, int, double, const double *, int,
                 const double *, int, double, double *, int);
double cblas_ddot(int, const double *, int, const double *, int);
void cblas_daxpy(int, double, const double *, int, double *, int);
)H";

static const char* kEmpty = "\n";

// The raw strings above open with a newline to be legible; a piece after the first starts after it.
static const char* body(const char* raw) { return raw + 1; }

// kVectorOps filled in for one width.
static std::string vector_ops(const char* vec, const char* mm, const char* ptr, const char* lanes) {
  std::string out = body(kVectorOps);
  const std::pair<const char*, const char*> fills[] = {{"$vec", vec}, {"$mm", mm}, {"$ptr", ptr}, {"$lanes", lanes}};
  for (const auto& [mark, text] : fills)
    for (size_t at = out.find(mark); at != std::string::npos; at = out.find(mark, at + std::strlen(text)))
      out.replace(at, std::strlen(mark), text);
  return out;
}

// The prelude in the order kernels have always seen it: one text, built once.
static std::string build_prelude() {
  return kPreludeHead + vector_ops("__m256d", "_mm256", "double", "4") + body(kAvx2Tail) +
         vector_ops("__m512d", "_mm512", "void", "8") + body(kAvx512Tail);
}

const char* prelude_source() {
  static const std::string prelude = build_prelude();
  return prelude.c_str();
}

const char* builtin_header(const std::string& name) {
  static const std::map<std::string, const char*> headers = {
      {"immintrin.h", kImmintrin}, {"x86intrin.h", kImmintrin}, {"xmmintrin.h", kImmintrin},
      {"emmintrin.h", kImmintrin}, {"pmmintrin.h", kImmintrin}, {"smmintrin.h", kImmintrin},
      {"tmmintrin.h", kImmintrin}, {"nmmintrin.h", kImmintrin}, {"avxintrin.h", kImmintrin},
      {"avx2intrin.h", kImmintrin}, {"avx512fintrin.h", kImmintrin}, {"fmaintrin.h", kImmintrin},
      {"mm_malloc.h", kEmpty}, {"omp.h", kEmpty}, {"math.h", kMath}, {"stdlib.h", kStdlib},
      {"string.h", kStddef}, {"stdint.h", kStdint}, {"inttypes.h", kStdint},
      {"stddef.h", kStddef}, {"stdbool.h", kStdbool}, {"limits.h", kLimits},
      {"float.h", kFloat}, {"assert.h", kAssert}, {"stdalign.h", "#define alignas _Alignas\n#define alignof _Alignof\n"},
      {"stdio.h", kStdio}, {"malloc.h", kEmpty}, {"cblas.h", kCblas}, {"strings.h", kEmpty},
      {"stdnoreturn.h", "#define noreturn _Noreturn\n"}, {"time.h", kEmpty}, {"sys/time.h", kEmpty},
      {"unistd.h", kEmpty}, {"errno.h", kEmpty}, {"stdarg.h", kEmpty}, {"tgmath.h", kMath},
  };
  auto it = headers.find(name);
  return it == headers.end() ? nullptr : it->second;
}

}  // namespace kernelc
