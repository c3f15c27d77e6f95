#include "lstm_kernels.h"

#include "common/check.h"
#include "common/kernels.h"

namespace lstm {
namespace {

constexpr unsigned int kBlock = 256;

__device__ inline float sigmoid(float x) { return 1.0f / (1.0f + expf(-x)); }

__global__ void cell_forward_kernel(float* gates, const float* bias, const float* c_prev, float* c,
                                    float* h, int batch, int hidden) {
    int count = batch * hidden;
    for (int index = blockIdx.x * blockDim.x + threadIdx.x; index < count; index += gridDim.x * blockDim.x) {
        int sample = index / hidden;
        int unit = index % hidden;
        float* row = gates + static_cast<size_t>(sample) * 4 * hidden;
        float i = sigmoid(row[unit] + bias[unit]);
        float f = sigmoid(row[hidden + unit] + bias[hidden + unit]);
        float g = tanhf(row[2 * hidden + unit] + bias[2 * hidden + unit]);
        float o = sigmoid(row[3 * hidden + unit] + bias[3 * hidden + unit]);
        row[unit] = i;
        row[hidden + unit] = f;
        row[2 * hidden + unit] = g;
        row[3 * hidden + unit] = o;
        float cell = f * c_prev[index] + i * g;
        c[index] = cell;
        h[index] = o * tanhf(cell);
    }
}

__global__ void cell_backward_kernel(const float* gates, const float* c, const float* c_prev,
                                     const float* dh_recurrent, const float* dh_from_above,
                                     float* dc_running, float* grad_gates, int batch, int hidden) {
    int count = batch * hidden;
    for (int index = blockIdx.x * blockDim.x + threadIdx.x; index < count; index += gridDim.x * blockDim.x) {
        int sample = index / hidden;
        int unit = index % hidden;
        const float* row = gates + static_cast<size_t>(sample) * 4 * hidden;
        float* grad_row = grad_gates + static_cast<size_t>(sample) * 4 * hidden;
        float i = row[unit];
        float f = row[hidden + unit];
        float g = row[2 * hidden + unit];
        float o = row[3 * hidden + unit];
        float tanh_c = tanhf(c[index]);
        float dh = dh_recurrent[index] + (dh_from_above != nullptr ? dh_from_above[index] : 0.0f);
        float dc = dc_running[index] + dh * o * (1.0f - tanh_c * tanh_c);
        grad_row[unit] = dc * g * i * (1.0f - i);
        grad_row[hidden + unit] = dc * c_prev[index] * f * (1.0f - f);
        grad_row[2 * hidden + unit] = dc * i * (1.0f - g * g);
        grad_row[3 * hidden + unit] = dh * tanh_c * o * (1.0f - o);
        dc_running[index] = dc * f;
    }
}

}  // namespace

void launch_cell_forward(float* gates, const float* bias, const float* c_prev, float* c, float* h,
                         int batch, int hidden, cudaStream_t stream) {
    unsigned int grid = tbdsample::grid_for(static_cast<size_t>(batch) * hidden);
    cell_forward_kernel<<<grid, kBlock, 0, stream>>>(gates, bias, c_prev, c, h, batch, hidden);
    CUDA_CHECK_LAUNCH();
}

void launch_cell_backward(const float* gates, const float* c, const float* c_prev,
                          const float* dh_recurrent, const float* dh_from_above, float* dc_running,
                          float* grad_gates, int batch, int hidden, cudaStream_t stream) {
    unsigned int grid = tbdsample::grid_for(static_cast<size_t>(batch) * hidden);
    cell_backward_kernel<<<grid, kBlock, 0, stream>>>(gates, c, c_prev, dh_recurrent, dh_from_above,
                                                      dc_running, grad_gates, batch, hidden);
    CUDA_CHECK_LAUNCH();
}

}  // namespace lstm
