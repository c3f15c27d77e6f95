// Kernels whose parameter layouts the driver tests check. Bodies are never run by the simulator.
struct Pair {
    float* data;
    int count;
};

__global__ void axpy(float a, const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] += a * x[i];
}

extern "C" __global__ void by_value(Pair p, double scale) {
    if (threadIdx.x < p.count) p.data[threadIdx.x] *= static_cast<float>(scale);
}

__device__ float device_counter[16];
