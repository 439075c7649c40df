-- z = x + y: the smallest CUDA task, one pass over three vectors (memory-bound).
return {
  name = "vector_add", family = "elementwise", split = "train",
  statement = "Compute z[i] = x[i] + y[i] for vectors of n floats. The launch: blocks of 256 threads, "
    .. "ceil(n / 256) blocks in x.",
  signature = 'extern "C" __global__ void vector_add(const float *x, const float *y, float *z, int n)',
  entry = "vector_add",
  sizes = { test = { n = 1000 }, train = { n = 1 << 22 }, heldout = { n = 3000017 } },
  args = { { input = "x", count = "n" }, { input = "y", count = "n" }, { output = "z", count = "n" }, { int = "n" } },
  launch = { grid = { "ceil(n / 256)" }, block = { 256 } },
  reference = "vector_add",
  tolerance = { atol = 0, rtol = 2^-23,
                why = "inputs lie on a grid of 2^-23 in [-1, 1), so their sum is a float exactly; one rounding "
                   .. "is allowed all the same" },
  flops = "n", bytes = "12*n", roofline = "memory",
  straightforward = [[
extern "C" __global__ void vector_add(const float *x, const float *y, float *z, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = x[i] + y[i];
}
]],
}
