#include "kernel_launch.h"

#include <cublas_api.h>

#include <algorithm>

#include "driver_entry_points.h"

namespace tbdsim::blas {
namespace {

// Hardware limit on gridDim.y and gridDim.z; larger batches are split into several launches.
constexpr int64_t kMaxGridYZ = 65535;

const char* offset_operand(const void* base, BatchLayout layout, int64_t first, int64_t stride,
                           std::size_t element_bytes) {
    const char* bytes = static_cast<const char*>(base);
    if (base == nullptr) return nullptr;
    // Pointer arrays advance by pointers; strided operands by elements.
    return layout == BatchLayout::PointerArray ? bytes + first * static_cast<int64_t>(sizeof(void*))
                                               : bytes + first * stride * static_cast<int64_t>(element_bytes);
}

void* offset_output(void* base, BatchLayout layout, int64_t first, int64_t stride, std::size_t element_bytes) {
    return const_cast<char*>(offset_operand(base, layout, first, stride, element_bytes));
}

// Bytes one batch entry reads and writes: A (m x k), B (k x n), C (m x n), D when separate, and the
// epilogue's vectors and matrices.
double operand_bytes(const GemmLaunch& launch) {
    const auto m = static_cast<double>(launch.params.m), n = static_cast<double>(launch.params.n),
               k = static_cast<double>(launch.params.k);
    double bytes = m * k * static_cast<double>(launch.a_element_bytes) +
                   k * n * static_cast<double>(launch.b_element_bytes) +
                   m * n * static_cast<double>(launch.c_element_bytes) + launch.epilogue_bytes;
    if (launch.d != nullptr) bytes += m * n * static_cast<double>(launch.d_element_bytes);
    return bytes;
}

}  // namespace

CUresult launch_gemm(const DriverEntryPoints& driver, const KernelTable& kernels, const GemmLaunch& launch) {
    TbdsimGemmParams params = launch.params;
    const int64_t m = params.m, n = params.n, k = params.k;
    const KernelFamily family = choose_family(launch.precision, m, n, k);
    const int combination = transpose_combination(params.transa != CUBLAS_OP_N, params.transb != CUBLAS_OP_N);
    CUfunction function = kernels[static_cast<int>(family)][static_cast<int>(launch.epilogue)][combination];
    const KernelShape shape = kernel_shape(family);
    const auto grid_x = static_cast<unsigned>((m + shape.tile_m - 1) / shape.tile_m);
    const auto grid_y = static_cast<unsigned>(std::min<int64_t>(kMaxGridYZ, (n + shape.tile_n - 1) / shape.tile_n));

    for (int64_t first = 0; first < launch.batch_count; first += kMaxGridYZ) {
        const int64_t chunk = std::min(kMaxGridYZ, launch.batch_count - first);
        params.a = offset_operand(launch.a, launch.layout, first, params.stride_a, launch.a_element_bytes);
        params.b = offset_operand(launch.b, launch.layout, first, params.stride_b, launch.b_element_bytes);
        params.c = offset_output(launch.c, launch.layout, first, params.stride_c, launch.c_element_bytes);
        params.d = offset_output(launch.d, launch.layout, first, params.stride_d, launch.d_element_bytes);
        params.bias = offset_operand(launch.bias, BatchLayout::Strided, first, params.bias_batch_stride,
                                     launch.d_element_bytes);
        params.batch_count = static_cast<int>(chunk);
        if (driver.private_api != nullptr) {
            // k == 0 still launches (C = beta * C): one multiply per element of C.
            const double output = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(chunk);
            const double flops = k == 0 ? output : 2.0 * output * static_cast<double>(k);
            const TbdsimPrivateApi& api = *driver.private_api;
            if (api.struct_size >= sizeof(TbdsimPrivateApi))
                api.annotate_next_launch_roofline(flops, launch.precision, operand_bytes(launch) * static_cast<double>(chunk));
            else
                api.annotate_next_launch(flops, launch.precision);
        }
        void* arguments[] = {&params};
        const CUresult result =
            driver.launch_kernel(function, grid_x, grid_y, static_cast<unsigned>(chunk),
                                 static_cast<unsigned>(shape.threads_per_block), 1, 1, 0, launch.stream, arguments,
                                 nullptr);
        if (result != CUDA_SUCCESS) return result;
    }
    return CUDA_SUCCESS;
}

}  // namespace tbdsim::blas
