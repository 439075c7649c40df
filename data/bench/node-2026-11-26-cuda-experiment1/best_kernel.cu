/* best kernel: 754.59 GFLOPS, beta=0,lr=0.0003, sample 160 of /tmp/c40/runs/beta=0,lr=0.0003 */
__device__ float warp_reduce_max(float v) {
    for (int off = 16; off > 0; off >>= 1) v = fmaxf(v, __shfl_down_sync(0xffffffff, v, off));
    return v;
}

__device__ float block_reduce_max(float v, float *part) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_reduce_max(v);
    if (lane == 0) part[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = warp_reduce_max(lane < (int)(blockDim.x >> 5) ? part[lane] : __int_as_float(0xff800000));
        if (lane == 0) part[0] = v;
    }
    __syncthreads();
    float r = part[0];
    __syncthreads();
    return r;
}

__device__ float warp_reduce_sum(float v) {
    for (int off = 16; off > 0; off >>= 1) v = v + __shfl_down_sync(0xffffffff, v, off);
    return v;
}

__device__ float block_reduce_sum(float v, float *part) {
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    v = warp_reduce_sum(v);
    if (lane == 0) part[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = warp_reduce_sum(lane < (int)(blockDim.x >> 5) ? part[lane] : 0.0f);
        if (lane == 0) part[0] = v;
    }
    __syncthreads();
    float r = part[0];
    __syncthreads();
    return r;
}

extern "C" __global__ void softmax_rows(const float *x, float *y, int rows, int cols) {
    __shared__ float scratch[32];
    const float *xrow = x + (long)blockIdx.x * cols;
    float *out = y + (long)blockIdx.x * cols;
    float peak = __int_as_float(0xff800000);
    for (int cc = threadIdx.x; cc < cols; cc += blockDim.x) peak = fmaxf(peak, xrow[cc]);
    peak = block_reduce_max(peak, scratch);
    float acc = 0.0f;
    for (int cc = threadIdx.x; cc < cols; cc += blockDim.x) {
        float v = expf(xrow[cc] - peak);
        out[cc] = v;
        acc += v;
    }
    acc = block_reduce_sum(acc, scratch);
    float inv = 1.0f / acc;
    for (int cc = threadIdx.x; cc < cols; cc += blockDim.x) out[cc] *= inv;
}
