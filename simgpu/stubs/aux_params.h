// The one argument of the simulated cuRAND/cuFFT/cuSPARSE kernels (aux_kernels.cu). Plain C.
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

typedef struct TbdsimAuxParams {
    const void* input;
    void* output;
    long long elements;
    unsigned long long seed, offset;
    double scale;
} TbdsimAuxParams;

#ifdef __cplusplus
}
#endif
