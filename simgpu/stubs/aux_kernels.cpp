#include "aux_kernels.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <mutex>

#include "bound_context.h"
#include "driver_entry_points.h"

extern "C" const unsigned char tbdsim_aux_fatbin[];
extern "C" const std::size_t tbdsim_aux_fatbin_size;

namespace tbdsim::aux {
namespace {

constexpr const char* kNames[kKernelCount] = {
    "gen_sequenced_philox4_32_10_bits",
    "gen_sequenced_philox4_32_10_uniform",
    "gen_sequenced_philox4_32_10_normal",
    "gen_sequenced_philox4_32_10_lognormal",
    "gen_sequenced_philox4_32_10_poisson",
    "regular_fft_c2c",
    "regular_fft_r2c",
    "regular_fft_c2r",
    "csrmm_alg1_kernel",
    "csrmv_v3_kernel",
    "gen_sequenced_philox4_32_10_binomial",
    "sobol32_generate_kernel",
    "sobol64_generate_kernel",
};

struct Module {
    std::mutex mutex;
    CUmodule module = nullptr;
    std::array<CUfunction, kKernelCount> functions{};
};

Module& module() {
    static Module instance;  // never unloaded: the context outlives the library's users
    return instance;
}

}  // namespace

CUresult launch(Kernel kernel, CUstream stream, int64_t elements, const TbdsimAuxParams& params, double flops,
                TbdsimPrecision precision, double bytes) {
    const blas::DriverEntryPoints* driver = blas::driver_entry_points();
    if (driver == nullptr) return CUDA_ERROR_NOT_INITIALIZED;
    Module& m = module();
    {
        std::lock_guard lock(m.mutex);
        if (m.module == nullptr) {
            // Like the runtime inside the real libraries: no current context -> device 0's primary one.
            blas::BoundContext bound;
            if (!blas::bind_current_context(*driver, &bound)) return CUDA_ERROR_INVALID_CONTEXT;
            CUmodule loaded = nullptr;
            CUresult result = driver->module_load_data(&loaded, tbdsim_aux_fatbin);
            if (result != CUDA_SUCCESS) return result;
            for (int i = 0; i < kKernelCount; ++i) {
                result = driver->module_get_function(&m.functions[i], loaded, kNames[i]);
                if (result != CUDA_SUCCESS) {
                    driver->module_unload(loaded);
                    return result;
                }
            }
            m.module = loaded;
        }
    }
    constexpr unsigned kThreads = 256;
    const auto blocks =
        static_cast<unsigned>(std::clamp<int64_t>((elements + 4 * kThreads - 1) / (4 * kThreads), 1, 0x7fffffff));
    const TbdsimPrivateApi* api = driver->private_api;
    if (api != nullptr && bytes > 0 && api->struct_size >= sizeof(TbdsimPrivateApi))
        api->annotate_next_launch_roofline(flops, precision, bytes);
    else if (api != nullptr && flops > 0)
        api->annotate_next_launch(flops, precision);
    TbdsimAuxParams copy = params;
    void* arguments[] = {&copy};
    return driver->launch_kernel(m.functions[kernel], blocks, 1, 1, kThreads, 1, 1, 0, stream, arguments, nullptr);
}

}  // namespace tbdsim::aux
