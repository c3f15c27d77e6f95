// The LSTM cell's element-wise work, one thread per (sample, hidden unit). Gates are stored per
// sample as [i | f | g | o], each `hidden` wide: input, forget, cell candidate, output.
#pragma once

#include <cuda_runtime_api.h>

namespace lstm {

// gates holds x W_ih^T + h_prev W_hh^T on entry; adds the bias, applies the nonlinearities in place
// (sigmoid for i, f, o; tanh for g) and computes c = f * c_prev + i * g, h = o * tanh(c).
void launch_cell_forward(float* gates, const float* bias, const float* c_prev, float* c, float* h,
                         int batch, int hidden, cudaStream_t stream);

// Backward through one cell. dh = dh_recurrent + dh_from_above (which may be null); dc_running holds
// d(loss)/d(c) flowing back from the next time step on entry and d(loss)/d(c_prev) on exit.
// Writes d(loss)/d(pre-activation gates) to grad_gates.
void launch_cell_backward(const float* gates, const float* c, const float* c_prev,
                          const float* dh_recurrent, const float* dh_from_above, float* dc_running,
                          float* grad_gates, int batch, int hidden, cudaStream_t stream);

}  // namespace lstm
