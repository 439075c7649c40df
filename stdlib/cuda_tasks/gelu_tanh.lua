-- GELU in its tanh form, elementwise: transcendental work per element, still memory-bound.
return {
  name = "gelu_tanh", family = "elementwise", split = "heldout",
  statement = "Compute y[i] = 0.5 * x[i] * (1 + tanh(sqrt(2 / pi) * (x[i] + 0.044715 * x[i]^3))) for n floats. "
    .. "The launch: blocks of 256 threads, ceil(n / 256) blocks in x.",
  signature = 'extern "C" __global__ void gelu_tanh(const float *x, float *y, int n)',
  entry = "gelu_tanh",
  sizes = { test = { n = 1000 }, train = { n = 1 << 22 }, heldout = { n = 3000017 } },
  args = { { input = "x", count = "n" }, { output = "y", count = "n" }, { int = "n" } },
  launch = { grid = { "ceil(n / 256)" }, block = { 256 } },
  reference = "gelu_tanh",
  tolerance = { atol = 2^-20, rtol = 2^-18,
                why = "tanhf is within 2 ulp and the polynomial rounds a few times: a few 2^-24 relative, "
                   .. "so 2^-18 relative and 2^-20 absolute near 0 hold; bf16 or tanh.approx (2^-11) miss it" },
  flops = "10*n", bytes = "8*n", roofline = "memory",
  straightforward = [[
extern "C" __global__ void gelu_tanh(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608028654f * (v + 0.044715f * v * v * v)));
  }
}
]],
}
