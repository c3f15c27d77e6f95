// The modelled part of the simulated libcufft.so.12: plans (create/make/plan 1d, 2d, 3d and many,
// contiguous layouts only), size queries, streams, work areas, and single-precision C2C, R2C and C2R
// execution. The transform is computed on the host into the (host-backed) device memory at the call
// by separable direct DFTs along each dimension (cost N * sum of the dims, so meant for the small
// sizes training programs use; transforms over 2^20 elements return CUFFT_NOT_SUPPORTED), then one
// kernel is launched on the plan's stream, annotated with the conventional 5 N log2 N FLOPs per
// complex transform (half that for real ones). Double precision, strided or embedded layouts and the
// Xt/multi-GPU API return CUFFT_NOT_SUPPORTED (the generated stubs).
#include <cufft.h>

#include <cmath>
#include <complex>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "aux_kernels.h"

#define TBD_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct Plan {
    bool made = false;
    std::vector<int> dims;
    cufftType type = CUFFT_C2C;
    int batch = 1;
    cudaStream_t stream = nullptr;
    void* work_area = nullptr;
};

struct Plans {
    std::mutex mutex;
    std::unordered_map<int, Plan> by_handle;
    int next = 1;
};

Plans& plans() {
    static Plans instance;
    return instance;
}

constexpr long long kMaxElements = 1 << 20;

using Complex = std::complex<double>;

// In place, along dimension `axis` of a row-major array with extents `dims`; sign -1 forward.
void dft_along(std::vector<Complex>& data, const std::vector<int>& dims, size_t axis, int sign) {
    size_t inner = 1;
    for (size_t d = axis + 1; d < dims.size(); ++d) inner *= static_cast<size_t>(dims[d]);
    const auto n = static_cast<size_t>(dims[axis]);
    const size_t outer = data.size() / (n * inner);
    std::vector<Complex> line(n), out(n);
    for (size_t o = 0; o < outer; ++o) {
        for (size_t i = 0; i < inner; ++i) {
            const size_t base = o * n * inner + i;
            for (size_t k = 0; k < n; ++k) line[k] = data[base + k * inner];
            for (size_t k = 0; k < n; ++k) {
                Complex sum = 0;
                for (size_t j = 0; j < n; ++j) {
                    sum += line[j] *
                           std::polar(1.0, sign * 2.0 * M_PI * static_cast<double>(j * k % n) / static_cast<double>(n));
                }
                out[k] = sum;
            }
            for (size_t k = 0; k < n; ++k) data[base + k * inner] = out[k];
        }
    }
}

void dft(std::vector<Complex>& data, const std::vector<int>& dims, int sign) {
    for (size_t axis = 0; axis < dims.size(); ++axis) dft_along(data, dims, axis, sign);
}

long long elements_of(const std::vector<int>& dims) {
    long long count = 1;
    for (int d : dims) count *= d;
    return count;
}

cufftResult make(Plan& plan, const std::vector<int>& dims, cufftType type, int batch, size_t* work_size) {
    if (dims.empty() || dims.size() > 3 || batch < 1) return CUFFT_INVALID_SIZE;
    for (int d : dims) {
        if (d < 1) return CUFFT_INVALID_SIZE;
    }
    if (type != CUFFT_C2C && type != CUFFT_R2C && type != CUFFT_C2R) return CUFFT_NOT_SUPPORTED;
    if (elements_of(dims) > kMaxElements) return CUFFT_NOT_SUPPORTED;
    plan.dims = dims;
    plan.type = type;
    plan.batch = batch;
    plan.made = true;
    if (work_size != nullptr) *work_size = 0;  // the direct transform needs no scratch
    return CUFFT_SUCCESS;
}

template <typename Fn>
cufftResult with_plan(cufftHandle handle, Fn&& fn) {
    Plans& p = plans();
    std::lock_guard lock(p.mutex);
    auto it = p.by_handle.find(handle);
    if (it == p.by_handle.end()) return CUFFT_INVALID_PLAN;
    return fn(it->second);
}

cufftResult create_and_make(cufftHandle* handle, const std::vector<int>& dims, cufftType type, int batch) {
    if (handle == nullptr) return CUFFT_INVALID_VALUE;
    Plans& p = plans();
    std::lock_guard lock(p.mutex);
    Plan plan;
    if (const cufftResult r = make(plan, dims, type, batch, nullptr); r != CUFFT_SUCCESS) return r;
    *handle = p.next++;
    p.by_handle[*handle] = plan;
    return CUFFT_SUCCESS;
}

cufftResult launch(const Plan& plan, tbdsim::aux::Kernel kernel, const void* in, void* out, bool real) {
    const long long n = elements_of(plan.dims);
    const double flops =
        5.0 * static_cast<double>(n) * std::log2(static_cast<double>(n)) * plan.batch * (real ? 0.5 : 1.0);
    TbdsimAuxParams params{in, out, n * plan.batch, 0, 0, 0};
    return tbdsim::aux::launch(kernel, reinterpret_cast<CUstream>(plan.stream), n * plan.batch, params, flops) ==
                   CUDA_SUCCESS
               ? CUFFT_SUCCESS
               : CUFFT_EXEC_FAILED;
}

}  // namespace

TBD_EXPORT cufftResult cufftCreate(cufftHandle* handle) {
    if (handle == nullptr) return CUFFT_INVALID_VALUE;
    Plans& p = plans();
    std::lock_guard lock(p.mutex);
    *handle = p.next++;
    p.by_handle[*handle] = Plan{};
    return CUFFT_SUCCESS;
}

TBD_EXPORT cufftResult cufftDestroy(cufftHandle handle) {
    Plans& p = plans();
    std::lock_guard lock(p.mutex);
    return p.by_handle.erase(handle) == 1 ? CUFFT_SUCCESS : CUFFT_INVALID_PLAN;
}

TBD_EXPORT cufftResult cufftMakePlanMany(cufftHandle handle, int rank, int* n, int* inembed, int, int, int* onembed,
                                         int, int, cufftType type, int batch, size_t* work_size) {
    if (n == nullptr || rank < 1 || rank > 3) return CUFFT_INVALID_SIZE;
    if (inembed != nullptr || onembed != nullptr) return CUFFT_NOT_SUPPORTED;  // advanced layouts
    std::vector<int> dims(n, n + rank);
    return with_plan(handle, [&](Plan& plan) { return make(plan, dims, type, batch, work_size); });
}

TBD_EXPORT cufftResult cufftMakePlan1d(cufftHandle handle, int nx, cufftType type, int batch, size_t* work_size) {
    return with_plan(handle, [&](Plan& plan) { return make(plan, {nx}, type, batch, work_size); });
}
TBD_EXPORT cufftResult cufftMakePlan2d(cufftHandle handle, int nx, int ny, cufftType type, size_t* work_size) {
    return with_plan(handle, [&](Plan& plan) { return make(plan, {nx, ny}, type, 1, work_size); });
}
TBD_EXPORT cufftResult cufftMakePlan3d(cufftHandle handle, int nx, int ny, int nz, cufftType type, size_t* work_size) {
    return with_plan(handle, [&](Plan& plan) { return make(plan, {nx, ny, nz}, type, 1, work_size); });
}

TBD_EXPORT cufftResult cufftPlan1d(cufftHandle* handle, int nx, cufftType type, int batch) {
    return create_and_make(handle, {nx}, type, batch);
}
TBD_EXPORT cufftResult cufftPlan2d(cufftHandle* handle, int nx, int ny, cufftType type) {
    return create_and_make(handle, {nx, ny}, type, 1);
}
TBD_EXPORT cufftResult cufftPlan3d(cufftHandle* handle, int nx, int ny, int nz, cufftType type) {
    return create_and_make(handle, {nx, ny, nz}, type, 1);
}
TBD_EXPORT cufftResult cufftPlanMany(cufftHandle* handle, int rank, int* n, int* inembed, int, int, int* onembed, int,
                                     int, cufftType type, int batch) {
    if (n == nullptr || rank < 1 || rank > 3) return CUFFT_INVALID_SIZE;
    if (inembed != nullptr || onembed != nullptr) return CUFFT_NOT_SUPPORTED;
    return create_and_make(handle, std::vector<int>(n, n + rank), type, batch);
}

TBD_EXPORT cufftResult cufftEstimate1d(int nx, cufftType type, int batch, size_t* work_size) {
    Plan plan;
    return make(plan, {nx}, type, batch, work_size);
}
TBD_EXPORT cufftResult cufftGetSize1d(cufftHandle handle, int nx, cufftType type, int batch, size_t* work_size) {
    return with_plan(handle, [&](Plan&) {
        Plan scratch;
        return make(scratch, {nx}, type, batch, work_size);
    });
}
TBD_EXPORT cufftResult cufftGetSize(cufftHandle handle, size_t* work_size) {
    if (work_size == nullptr) return CUFFT_INVALID_VALUE;
    return with_plan(handle, [&](Plan&) {
        *work_size = 0;
        return CUFFT_SUCCESS;
    });
}
TBD_EXPORT cufftResult cufftSetWorkArea(cufftHandle handle, void* area) {
    return with_plan(handle, [&](Plan& plan) {
        plan.work_area = area;
        return CUFFT_SUCCESS;
    });
}
TBD_EXPORT cufftResult cufftSetAutoAllocation(cufftHandle handle, int) {
    return with_plan(handle, [](Plan&) { return CUFFT_SUCCESS; });
}
TBD_EXPORT cufftResult cufftSetStream(cufftHandle handle, cudaStream_t stream) {
    return with_plan(handle, [&](Plan& plan) {
        plan.stream = stream;
        return CUFFT_SUCCESS;
    });
}
TBD_EXPORT cufftResult cufftGetVersion(int* version) {
    if (version == nullptr) return CUFFT_INVALID_VALUE;
    *version = CUFFT_VERSION;
    return CUFFT_SUCCESS;
}
TBD_EXPORT cufftResult cufftGetProperty(libraryPropertyType type, int* value) {
    if (value == nullptr) return CUFFT_INVALID_VALUE;
    switch (type) {
        case MAJOR_VERSION:
            *value = CUFFT_VER_MAJOR;
            return CUFFT_SUCCESS;
        case MINOR_VERSION:
            *value = CUFFT_VER_MINOR;
            return CUFFT_SUCCESS;
        case PATCH_LEVEL:
            *value = CUFFT_VER_PATCH;
            return CUFFT_SUCCESS;
        default:
            return CUFFT_INVALID_TYPE;
    }
}

TBD_EXPORT cufftResult cufftExecC2C(cufftHandle handle, cufftComplex* in, cufftComplex* out, int direction) {
    if (in == nullptr || out == nullptr) return CUFFT_INVALID_VALUE;
    if (direction != CUFFT_FORWARD && direction != CUFFT_INVERSE) return CUFFT_INVALID_VALUE;
    return with_plan(handle, [&](Plan& plan) {
        if (!plan.made) return CUFFT_INVALID_PLAN;
        if (plan.type != CUFFT_C2C) return CUFFT_INVALID_TYPE;
        const long long n = elements_of(plan.dims);
        for (int b = 0; b < plan.batch; ++b) {
            std::vector<Complex> data(static_cast<size_t>(n));
            for (long long i = 0; i < n; ++i) data[i] = {in[b * n + i].x, in[b * n + i].y};
            dft(data, plan.dims, direction);
            for (long long i = 0; i < n; ++i) {
                out[b * n + i] = {static_cast<float>(data[i].real()), static_cast<float>(data[i].imag())};
            }
        }
        return launch(plan, tbdsim::aux::kFftC2C, in, out, false);
    });
}

// Real transforms: the last dimension of the complex side holds n/2 + 1 values (Hermitian symmetry).
TBD_EXPORT cufftResult cufftExecR2C(cufftHandle handle, cufftReal* in, cufftComplex* out) {
    if (in == nullptr || out == nullptr) return CUFFT_INVALID_VALUE;
    return with_plan(handle, [&](Plan& plan) {
        if (!plan.made) return CUFFT_INVALID_PLAN;
        if (plan.type != CUFFT_R2C) return CUFFT_INVALID_TYPE;
        const long long n = elements_of(plan.dims);
        const long long last = plan.dims.back(), half = last / 2 + 1, rows = n / last;
        for (int b = 0; b < plan.batch; ++b) {
            std::vector<Complex> data(static_cast<size_t>(n));
            for (long long i = 0; i < n; ++i) data[i] = in[b * n + i];
            dft(data, plan.dims, CUFFT_FORWARD);
            for (long long r = 0; r < rows; ++r) {
                for (long long k = 0; k < half; ++k) {
                    const Complex v = data[r * last + k];
                    out[(b * rows + r) * half + k] = {static_cast<float>(v.real()), static_cast<float>(v.imag())};
                }
            }
        }
        return launch(plan, tbdsim::aux::kFftR2C, in, out, true);
    });
}

TBD_EXPORT cufftResult cufftExecC2R(cufftHandle handle, cufftComplex* in, cufftReal* out) {
    if (in == nullptr || out == nullptr) return CUFFT_INVALID_VALUE;
    return with_plan(handle, [&](Plan& plan) {
        if (!plan.made) return CUFFT_INVALID_PLAN;
        if (plan.type != CUFFT_C2R) return CUFFT_INVALID_TYPE;
        const long long n = elements_of(plan.dims);
        const long long last = plan.dims.back(), half = last / 2 + 1, rows = n / last;
        std::vector<int> outer_dims(plan.dims.begin(), plan.dims.end() - 1);
        for (int b = 0; b < plan.batch; ++b) {
            std::vector<Complex> data(static_cast<size_t>(n));
            // Rebuild the full spectrum: X[r][k] for k >= half is conj(X[-r][n - k]).
            for (long long r = 0; r < rows; ++r) {
                long long mirrored = 0, stride = 1, rest = r;  // index of -r in the outer dims
                for (size_t d = outer_dims.size(); d-- > 0;) {
                    const long long extent = outer_dims[d], coordinate = rest % extent;
                    rest /= extent;
                    mirrored += ((extent - coordinate) % extent) * stride;
                    stride *= extent;
                }
                for (long long k = 0; k < last; ++k) {
                    const cufftComplex v =
                        k < half ? in[(b * rows + r) * half + k] : in[(b * rows + mirrored) * half + (last - k)];
                    data[r * last + k] = k < half ? Complex(v.x, v.y) : Complex(v.x, -v.y);
                }
            }
            dft(data, plan.dims, CUFFT_INVERSE);
            for (long long i = 0; i < n; ++i) out[b * n + i] = static_cast<float>(data[i].real());
        }
        return launch(plan, tbdsim::aux::kFftC2R, in, out, true);
    });
}
