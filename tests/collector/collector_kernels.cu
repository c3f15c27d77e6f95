// Kernels the driver-API test program loads from a fat binary (cuModuleLoad).
struct PointerPair {
    float* first;
    const float* second;
};

__global__ void touch(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] + 1.0f;
}

__global__ void touch_pair(PointerPair pair, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) pair.first[i] = pair.second[i];
}
