// The operands a cuBLASLt matmul's epilogue reads or writes besides A, B, C and D, from the matmul
// descriptor: the bias vector (read by the *_BIAS epilogues; the bias gradient written by *_BGRAD*)
// and the aux matrix (written by the forward *_AUX epilogues, read by DRELU/DGELU), as NVIDIA's
// cublasLtEpilogue_t documentation gives them. nn.Linear's bias reaches the GEMM only this way.
#pragma once

#include <cublasLt.h>

#include "library_call.h"

namespace tbdprof::preload {

// What the hook read from the call's D layout: the output's rows, columns and batch count.
struct OutputShape {
    uint32_t type = 0;
    uint64_t rows = 0, cols = 0;
    int32_t batch = 1;
};

// Records the epilogue's bias and aux operands of `record` (see the file comment); nothing when the
// descriptor cannot be read or the epilogue uses neither. `get` is the library's getter.
void record_epilogue_operands(ThreadState& thread, const raw::RawLibraryCall& record,
                              decltype(&cublasLtMatmulDescGetAttribute) get, cublasLtMatmulDesc_t descriptor,
                              const OutputShape& d);

}  // namespace tbdprof::preload
