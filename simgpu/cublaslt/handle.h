// The cuBLASLt handle: the context it was created in and its module of GEMM kernels. Unlike a cuBLAS
// handle it owns no stream and no workspace: cublasLtMatmul gets both with every call.
#pragma once

#include <cublasLt.h>
#include <cuda.h>

#include "bound_context.h"
#include "driver_entry_points.h"
#include "kernel_catalog.h"

// The header declares the opaque struct in the global namespace; this is its definition.
struct cublasLtContext {
    const tbdsim::blas::DriverEntryPoints* driver = nullptr;
    tbdsim::blas::BoundContext bound;
    CUmodule module = nullptr;
    tbdsim::blas::KernelTable kernels{};
};
