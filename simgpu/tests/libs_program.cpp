// A program linked against the toolkit's cuRAND, cuFFT, cuSPARSE, cuSOLVER and NVRTC, run on the
// simulated GPU (directly and under `tbdprof --sim`): every library loads from the simulated GPU's
// directory, the modelled calls give right answers, and unmodelled ones the documented status.
//   libs_program TOOLKIT_LIBRARY_DIR    (fails if anything from that directory got mapped)
#include <cuda_runtime_api.h>
#include <cufft.h>
#include <curand.h>
#include <cusolverDn.h>
#include <cusparse.h>
#include <dlfcn.h>
#include <nvrtc.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

namespace {

int g_failures = 0;

#define EXPECT(condition)                                                    \
    do {                                                                     \
        if (!(condition)) {                                                  \
            std::printf("FAIL %s:%d: %s\n", __FILE__, __LINE__, #condition); \
            ++g_failures;                                                    \
        }                                                                    \
    } while (0)

template <typename T>
T* device_array(size_t count) {
    void* p = nullptr;
    EXPECT(cudaMalloc(&p, count * sizeof(T)) == cudaSuccess);
    return static_cast<T*>(p);
}

template <typename T>
std::vector<T> to_host(const T* device, size_t count) {
    std::vector<T> host(count);
    EXPECT(cudaMemcpy(host.data(), device, count * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
    return host;
}

void moments(const std::vector<float>& v, double* mean, double* variance) {
    double sum = 0, squares = 0;
    for (float x : v) {
        sum += x;
        squares += static_cast<double>(x) * x;
    }
    *mean = sum / static_cast<double>(v.size());
    *variance = squares / static_cast<double>(v.size()) - *mean * *mean;
}

// Sobol' generators: results ordered by dimension, dimension 1 being van der Corput's sequence in
// Gray-code order (0, 1/2, 3/4, 1/4, ...); every dimension's points are evenly spread.
void check_quasirandom(cudaStream_t stream) {
    curandGenerator_t quasi = nullptr;
    EXPECT(curandCreateGenerator(&quasi, CURAND_RNG_QUASI_DEFAULT) == CURAND_STATUS_SUCCESS);
    EXPECT(curandSetStream(quasi, stream) == CURAND_STATUS_SUCCESS);
    EXPECT(curandSetPseudoRandomGeneratorSeed(quasi, 1) == CURAND_STATUS_TYPE_ERROR);
    EXPECT(curandSetQuasiRandomGeneratorDimensions(quasi, 3) == CURAND_STATUS_SUCCESS);
    const size_t points = 1024;
    float* d = device_array<float>(3 * points);
    EXPECT(curandGenerateUniform(quasi, d, 3 * points - 1) == CURAND_STATUS_LENGTH_NOT_MULTIPLE);
    EXPECT(curandGenerateUniform(quasi, d, 3 * points) == CURAND_STATUS_SUCCESS);
    const std::vector<float> values = to_host(d, 3 * points);
    EXPECT(values[0] < 1e-6f && std::fabs(values[1] - 0.5f) < 1e-6f && std::fabs(values[2] - 0.75f) < 1e-6f &&
           std::fabs(values[3] - 0.25f) < 1e-6f);
    for (int dimension = 0; dimension < 3; ++dimension) {
        int in_each_quarter[4] = {};
        for (size_t i = 0; i < points; ++i) ++in_each_quarter[std::min(3, int(values[dimension * points + i] * 4))];
        EXPECT(in_each_quarter[0] == 256 && in_each_quarter[1] == 256 && in_each_quarter[2] == 256);
    }
    // The offset skips points in every dimension: point 2 of dimension 1 is 3/4.
    EXPECT(curandSetGeneratorOffset(quasi, 2) == CURAND_STATUS_SUCCESS);
    EXPECT(curandGenerateUniform(quasi, d, 3) == CURAND_STATUS_SUCCESS);
    EXPECT(std::fabs(to_host(d, 1)[0] - 0.75f) < 1e-6f);
    unsigned long long* d64 = device_array<unsigned long long>(4);
    EXPECT(curandGenerateLongLong(quasi, d64, 3) == CURAND_STATUS_TYPE_ERROR);  // 32-bit Sobol'
    curandGenerator_t sobol64 = nullptr;
    EXPECT(curandCreateGenerator(&sobol64, CURAND_RNG_QUASI_SCRAMBLED_SOBOL64) == CURAND_STATUS_SUCCESS);
    EXPECT(curandGenerateLongLong(sobol64, d64, 4) == CURAND_STATUS_SUCCESS);
    unsigned long long* scramble = nullptr;
    EXPECT(curandGetScrambleConstants64(&scramble) == CURAND_STATUS_SUCCESS);
    EXPECT(to_host(d64, 1)[0] == scramble[0]);  // point 0 is 0, XORed with dimension 1's constant
    curandDirectionVectors32_t* vectors = nullptr;
    EXPECT(curandGetDirectionVectors32(&vectors, CURAND_DIRECTION_VECTORS_32_JOEKUO6) == CURAND_STATUS_SUCCESS);
    EXPECT(vectors[0][0] == 0x80000000u && vectors[0][31] == 1u && (vectors[19999][31] & 1u) == 1u);
    EXPECT(curandGetDirectionVectors32(&vectors, CURAND_DIRECTION_VECTORS_64_JOEKUO6) == CURAND_STATUS_OUT_OF_RANGE);
    curandDiscreteDistribution_t poisson = nullptr;
    EXPECT(curandCreatePoissonDistribution(9.0, &poisson) == CURAND_STATUS_SUCCESS);
    EXPECT(curandCreatePoissonDistribution(-1.0, &poisson) == CURAND_STATUS_OUT_OF_RANGE);
    EXPECT(curandDestroyDistribution(poisson) == CURAND_STATUS_SUCCESS);
    EXPECT(curandDestroyGenerator(sobol64) == CURAND_STATUS_SUCCESS);
    EXPECT(curandDestroyGenerator(quasi) == CURAND_STATUS_SUCCESS);
    cudaFree(d64);
    cudaFree(d);
}

void check_curand(cudaStream_t stream) {
    constexpr size_t n = 1 << 18;
    curandGenerator_t g = nullptr;
    EXPECT(curandCreateGenerator(&g, CURAND_RNG_PSEUDO_PHILOX4_32_10) == CURAND_STATUS_SUCCESS);
    EXPECT(curandSetStream(g, stream) == CURAND_STATUS_SUCCESS);
    EXPECT(curandSetPseudoRandomGeneratorSeed(g, 1234) == CURAND_STATUS_SUCCESS);
    float* d = device_array<float>(n);
    double mean = 0, variance = 0;
    EXPECT(curandGenerateUniform(g, d, n) == CURAND_STATUS_SUCCESS);
    const std::vector<float> uniform = to_host(d, n);
    moments(uniform, &mean, &variance);
    EXPECT(std::fabs(mean - 0.5) < 0.005 && std::fabs(variance - 1.0 / 12) < 0.002);
    bool in_range = true;
    for (float x : uniform) in_range = in_range && x > 0.0f && x <= 1.0f;
    EXPECT(in_range);
    EXPECT(curandGenerateNormal(g, d, n, 2.0f, 3.0f) == CURAND_STATUS_SUCCESS);
    moments(to_host(d, n), &mean, &variance);
    EXPECT(std::fabs(mean - 2.0) < 0.05 && std::fabs(std::sqrt(variance) - 3.0) < 0.05);
    EXPECT(curandGenerateLogNormal(g, d, n, 0.0f, 0.5f) == CURAND_STATUS_SUCCESS);
    moments(to_host(d, n), &mean, &variance);
    EXPECT(std::fabs(mean - std::exp(0.125)) < 0.01);
    EXPECT(curandGenerateNormal(g, d, 3, 0.0f, 1.0f) == CURAND_STATUS_LENGTH_NOT_MULTIPLE);

    // Same seed and offset, same numbers; the offset advances by what was generated.
    EXPECT(curandSetGeneratorOffset(g, 0) == CURAND_STATUS_SUCCESS);
    EXPECT(curandGenerateUniform(g, d, 100) == CURAND_STATUS_SUCCESS);
    const std::vector<float> first = to_host(d, 100);
    EXPECT(curandSetGeneratorOffset(g, 50) == CURAND_STATUS_SUCCESS);
    EXPECT(curandGenerateUniform(g, d, 50) == CURAND_STATUS_SUCCESS);
    EXPECT(std::memcmp(to_host(d, 50).data(), first.data() + 50, 50 * sizeof(float)) == 0);
    EXPECT(curandSetPseudoRandomGeneratorSeed(g, 99) == CURAND_STATUS_SUCCESS);
    EXPECT(curandSetGeneratorOffset(g, 0) == CURAND_STATUS_SUCCESS);
    EXPECT(curandGenerateUniform(g, d, 100) == CURAND_STATUS_SUCCESS);
    EXPECT(std::memcmp(to_host(d, 100).data(), first.data(), 100 * sizeof(float)) != 0);

    // A host generator computes in host memory; Poisson counts have mean and variance lambda.
    curandGenerator_t host = nullptr;
    EXPECT(curandCreateGeneratorHost(&host, CURAND_RNG_PSEUDO_DEFAULT) == CURAND_STATUS_SUCCESS);
    std::vector<unsigned> counts(n);
    EXPECT(curandGeneratePoisson(host, counts.data(), n, 4.0) == CURAND_STATUS_SUCCESS);
    std::vector<float> as_float(counts.begin(), counts.end());
    moments(as_float, &mean, &variance);
    EXPECT(std::fabs(mean - 4.0) < 0.03 && std::fabs(variance - 4.0) < 0.1);
    // Binomial(20, 0.25): mean n p = 5, variance n p (1 - p) = 3.75. curand.h declares the binomial
    // generators but the toolkit's import library does not export them: looked up at run time.
    using Binomial = curandStatus_t (*)(curandGenerator_t, unsigned*, size_t, unsigned, double);
    const auto binomial = reinterpret_cast<Binomial>(dlsym(RTLD_DEFAULT, "curandGenerateBinomial"));
    EXPECT(binomial != nullptr);
    EXPECT(binomial(host, counts.data(), n, 20, 0.25) == CURAND_STATUS_SUCCESS);
    as_float.assign(counts.begin(), counts.end());
    moments(as_float, &mean, &variance);
    EXPECT(std::fabs(mean - 5.0) < 0.05 && std::fabs(variance - 3.75) < 0.15);
    EXPECT(curandGeneratePoissonMethod(host, counts.data(), 8, -1.0, CURAND_POISSON) == CURAND_STATUS_OUT_OF_RANGE);
    EXPECT(curandDestroyGenerator(host) == CURAND_STATUS_SUCCESS);
    EXPECT(curandDestroyGenerator(g) == CURAND_STATUS_SUCCESS);
    cudaFree(d);
    check_quasirandom(stream);
}

void check_cufft(cudaStream_t stream) {
    constexpr int n = 16;
    cufftHandle plan = 0;
    EXPECT(cufftPlan1d(&plan, n, CUFFT_C2C, 2) == CUFFT_SUCCESS);
    EXPECT(cufftSetStream(plan, stream) == CUFFT_SUCCESS);
    std::vector<cufftComplex> signal(2 * n, cufftComplex{0, 0});
    signal[0] = {1, 0};  // batch 0: a delta -> all ones
    for (int i = 0; i < n; ++i)
        signal[n + i] = {static_cast<float>(std::cos(2 * M_PI * 3 * i / n)), 0};  // peaks at 3, 13
    cufftComplex* d = device_array<cufftComplex>(2 * n);
    EXPECT(cudaMemcpy(d, signal.data(), sizeof(cufftComplex) * 2 * n, cudaMemcpyHostToDevice) == cudaSuccess);
    EXPECT(cufftExecC2C(plan, d, d, CUFFT_FORWARD) == CUFFT_SUCCESS);
    const std::vector<cufftComplex> spectrum = to_host(d, 2 * n);
    bool ones = true, peaks = true;
    for (int k = 0; k < n; ++k) {
        ones = ones && std::fabs(spectrum[k].x - 1) < 1e-5 && std::fabs(spectrum[k].y) < 1e-5;
        const double expected = (k == 3 || k == 13) ? n / 2.0 : 0.0;
        peaks = peaks && std::fabs(spectrum[n + k].x - expected) < 1e-4 && std::fabs(spectrum[n + k].y) < 1e-4;
    }
    EXPECT(ones && peaks);
    EXPECT(cufftExecR2C(plan, reinterpret_cast<cufftReal*>(d), d) == CUFFT_INVALID_TYPE);
    EXPECT(cufftDestroy(plan) == CUFFT_SUCCESS);

    // 2D real round trip: C2R(R2C(x)) = rows * cols * x.
    constexpr int rows = 4, cols = 6;
    cufftHandle forward = 0, inverse = 0;
    EXPECT(cufftPlan2d(&forward, rows, cols, CUFFT_R2C) == CUFFT_SUCCESS);
    EXPECT(cufftPlan2d(&inverse, rows, cols, CUFFT_C2R) == CUFFT_SUCCESS);
    std::vector<float> x(rows * cols);
    for (int i = 0; i < rows * cols; ++i) x[i] = static_cast<float>(std::sin(i * 0.7) + 0.1 * i);
    float* real = device_array<float>(rows * cols);
    cufftComplex* half = device_array<cufftComplex>(rows * (cols / 2 + 1));
    EXPECT(cudaMemcpy(real, x.data(), sizeof(float) * x.size(), cudaMemcpyHostToDevice) == cudaSuccess);
    EXPECT(cufftExecR2C(forward, real, half) == CUFFT_SUCCESS);
    EXPECT(cufftExecC2R(inverse, half, real) == CUFFT_SUCCESS);
    const std::vector<float> back = to_host(real, rows * cols);
    bool round_trip = true;
    for (int i = 0; i < rows * cols; ++i) round_trip = round_trip && std::fabs(back[i] - rows * cols * x[i]) < 1e-3;
    EXPECT(round_trip);
    cufftHandle many = 0;
    int dims[] = {8};
    int embed[] = {8};
    EXPECT(cufftPlanMany(&many, 1, dims, embed, 2, 16, embed, 2, 16, CUFFT_C2C, 1) == CUFFT_NOT_SUPPORTED);
    cufftDestroy(forward);
    cufftDestroy(inverse);
    cudaFree(d);
    cudaFree(real);
    cudaFree(half);
}

void check_cusparse(cudaStream_t stream) {
    // A = [[1 0 2], [0 3 0]] (CSR), B 3 x 2 row-major; C = A B.
    const int offsets[] = {0, 2, 3}, columns[] = {0, 2, 1};
    const float values[] = {1, 2, 3}, b[] = {1, 2, 3, 4, 5, 6};
    int* d_offsets = device_array<int>(3);
    int* d_columns = device_array<int>(3);
    float* d_values = device_array<float>(3);
    float* d_b = device_array<float>(6);
    float* d_c = device_array<float>(4);
    cudaMemcpy(d_offsets, offsets, sizeof(offsets), cudaMemcpyHostToDevice);
    cudaMemcpy(d_columns, columns, sizeof(columns), cudaMemcpyHostToDevice);
    cudaMemcpy(d_values, values, sizeof(values), cudaMemcpyHostToDevice);
    cudaMemcpy(d_b, b, sizeof(b), cudaMemcpyHostToDevice);
    cusparseHandle_t handle = nullptr;
    EXPECT(cusparseCreate(&handle) == CUSPARSE_STATUS_SUCCESS);
    EXPECT(cusparseSetStream(handle, stream) == CUSPARSE_STATUS_SUCCESS);
    cusparseSpMatDescr_t a = nullptr;
    cusparseDnMatDescr_t mb = nullptr, mc = nullptr;
    EXPECT(cusparseCreateCsr(&a, 2, 3, 3, d_offsets, d_columns, d_values, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                             CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F) == CUSPARSE_STATUS_SUCCESS);
    EXPECT(cusparseCreateDnMat(&mb, 3, 2, 2, d_b, CUDA_R_32F, CUSPARSE_ORDER_ROW) == CUSPARSE_STATUS_SUCCESS);
    EXPECT(cusparseCreateDnMat(&mc, 2, 2, 2, d_c, CUDA_R_32F, CUSPARSE_ORDER_ROW) == CUSPARSE_STATUS_SUCCESS);
    const float one = 1, zero = 0;
    size_t buffer = 1;
    EXPECT(cusparseSpMM_bufferSize(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a,
                                   mb, &zero, mc, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT,
                                   &buffer) == CUSPARSE_STATUS_SUCCESS);
    EXPECT(cusparseSpMM(handle, CUSPARSE_OPERATION_NON_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, mb, &zero,
                        mc, CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, nullptr) == CUSPARSE_STATUS_SUCCESS);
    const std::vector<float> c = to_host(d_c, 4);
    EXPECT(c[0] == 11 && c[1] == 14 && c[2] == 9 && c[3] == 12);
    EXPECT(cusparseSpMM(handle, CUSPARSE_OPERATION_TRANSPOSE, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, a, mb, &zero, mc,
                        CUDA_R_32F, CUSPARSE_SPMM_ALG_DEFAULT, nullptr) == CUSPARSE_STATUS_NOT_SUPPORTED);
    cusparseMatDescr_t legacy = nullptr;  // the legacy API is not modelled
    EXPECT(cusparseCreateMatDescr(&legacy) == CUSPARSE_STATUS_NOT_SUPPORTED);
    cusparseDestroySpMat(a);
    cusparseDestroyDnMat(mb);
    cusparseDestroyDnMat(mc);
    EXPECT(cusparseDestroy(handle) == CUSPARSE_STATUS_SUCCESS);
    cudaFree(d_offsets);
    cudaFree(d_columns);
    cudaFree(d_values);
    cudaFree(d_b);
    cudaFree(d_c);
}

void check_cusolver_and_nvrtc() {
    cusolverDnHandle_t solver = nullptr;
    EXPECT(cusolverDnCreate(&solver) == CUSOLVER_STATUS_SUCCESS);
    int work = 0;
    EXPECT(cusolverDnSpotrf_bufferSize(solver, CUBLAS_FILL_MODE_LOWER, 4, nullptr, 4, &work) ==
           CUSOLVER_STATUS_NOT_SUPPORTED);
    EXPECT(cusolverDnDestroy(solver) == CUSOLVER_STATUS_SUCCESS);

    nvrtcProgram program = nullptr;
    EXPECT(nvrtcCreateProgram(&program, "extern \"C\" __global__ void k(float* x) { x[0] = 1; }", "tiny.cu", 0, nullptr,
                              nullptr) == NVRTC_SUCCESS);
    EXPECT(nvrtcCompileProgram(program, 0, nullptr) == NVRTC_ERROR_COMPILATION);
    size_t log_size = 0;
    EXPECT(nvrtcGetProgramLogSize(program, &log_size) == NVRTC_SUCCESS && log_size > 1);
    size_t ptx_size = 0;
    EXPECT(nvrtcGetPTXSize(program, &ptx_size) == NVRTC_ERROR_INVALID_PROGRAM);
    EXPECT(nvrtcDestroyProgram(&program) == NVRTC_SUCCESS);
}

// Nothing of the toolkit's library directory may be mapped: the simulated libraries stood in.
void check_maps(const std::string& toolkit_dir) {
    std::ifstream maps("/proc/self/maps");
    for (std::string line; std::getline(maps, line);) {
        if (line.find(toolkit_dir) != std::string::npos) {
            std::printf("FAIL: toolkit library mapped: %s\n", line.c_str());
            ++g_failures;
            return;
        }
    }
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: libs_program TOOLKIT_LIBRARY_DIR\n");
        return 2;
    }
    cudaStream_t stream = nullptr;
    EXPECT(cudaStreamCreate(&stream) == cudaSuccess);
    check_curand(stream);
    check_cufft(stream);
    check_cusparse(stream);
    check_cusolver_and_nvrtc();
    EXPECT(cudaStreamSynchronize(stream) == cudaSuccess);
    cudaStreamDestroy(stream);
    check_maps(argv[1]);
    if (g_failures == 0) std::printf("OK\n");
    return g_failures == 0 ? 0 : 1;
}
