// Device code for the CUPTI tests: launched through the driver API, never executed by the simulator.
__global__ void scale_kernel(float* values, float factor, int count) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) values[i] *= factor;
}
