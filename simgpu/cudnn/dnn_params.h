// The one argument every simulated cuDNN kernel takes, shared by kernels.cu (so the cubin's parameter
// layout describes it) and the host code that fills it. Plain C types only.
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TbdsimDnnParams {
    const void* x;    // main input (x, or dy for backward data)
    const void* w;    // second input (filter, dy, scale...), may be null
    void* y;          // output (y, dx, dw)
    void* workspace;  // the workspace the call was given, null if none
    unsigned long long workspace_bytes;
    long long elements;  // output elements
    double alpha, beta;  // the call's scaling factors
    int operation;       // TbdsimDnnKernel value (kernel_table.h)
    int reserved;
    // The reserve space of a training call (RNN forward and backward, batch norm Ex with an
    // activation): real cuDNN's kernels write it forward and read it backward, so the simulated
    // kernels take it too and a profiler sees the data flow; null when the call has none.
    void* reserve_space;
    // Further operands of a fused graph kernel (attention: every device tensor of the variant pack
    // beyond x, w and y, by unique id: V, the softmax statistics, O, dO, dK, dV ...); null after them.
    const void* operands[8];
} TbdsimDnnParams;

#ifdef __cplusplus
}
#endif
