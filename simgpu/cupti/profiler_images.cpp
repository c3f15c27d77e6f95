#include "profiler_images.h"

#include <simgpu/private_api.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace tbdsim::cupti::profiler {
namespace {

constexpr char kConfigMagic[8] = {'T', 'B', 'D', 'S', 'I', 'M', 'C', 'F'};
constexpr char kCounterMagic[8] = {'T', 'B', 'D', 'S', 'I', 'M', 'C', 'D'};

constexpr char kFadd[] = "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum";
constexpr char kFmul[] = "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum";
constexpr char kFfma[] = "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum";
constexpr char kTensorTf32[] = "sm__ops_path_tensor_src_tf32_dst_fp32.sum";
constexpr char kTensorFp16[] = "sm__ops_path_tensor_src_fp16_dst_fp32.sum";
constexpr char kTensorBf16[] = "sm__ops_path_tensor_src_bf16_dst_fp32.sum";

}  // namespace

const std::vector<std::string>& supported_metrics() {
    // Never destroyed: profilers evaluate their last ranges from exit handlers, which may run after
    // this library's static destructors.
    static const auto* metrics =
        new std::vector<std::string>{kFadd, kFmul, kFfma, kTensorTf32, kTensorFp16, kTensorBf16};
    return *metrics;
}

bool is_supported_metric(const char* name) {
    if (name == nullptr) return false;
    for (const std::string& metric : supported_metrics())
        if (metric == name) return true;
    return false;
}

double evaluate_metric(const char* metric, const RangeCounters& counters) {
    constexpr double kNotAvailable = std::numeric_limits<double>::quiet_NaN();
    // FP64 work is not modelled by any of the simulated counters: not available rather than a 0.
    if (counters.flops <= 0 || counters.precision == TBDSIM_PRECISION_NONE ||
        counters.precision == TBDSIM_PRECISION_FP64) {
        return kNotAvailable;
    }
    const double flops = std::round(counters.flops);
    const std::string_view name(metric);
    if (counters.precision == TBDSIM_PRECISION_FP32) {
        // The simulated SIMT kernels do their work as FFMAs (2 FLOPs each); an odd count (a k == 0
        // GEMM's C = beta*C, m*n FLOPs) leaves one FMUL.
        const double ffma = std::floor(flops / 2);
        if (name == kFfma) return ffma;
        if (name == kFmul) return flops - 2 * ffma;
        if (name == kFadd) return 0;
        return 0;  // no tensor-core work
    }
    // Tensor-core kernels: the sm__ops_path_tensor_* counters count math operations (FLOPs).
    if (name == kTensorTf32) return counters.precision == TBDSIM_PRECISION_TF32 ? flops : 0;
    if (name == kTensorFp16) return counters.precision == TBDSIM_PRECISION_FP16 ? flops : 0;
    if (name == kTensorBf16) return counters.precision == TBDSIM_PRECISION_BF16 ? flops : 0;
    return 0;  // no FP32 SIMT instructions in a simulated tensor-core kernel
}

std::vector<uint8_t> make_config_image(const std::vector<std::string>& metrics) {
    ConfigImageHeader header{};
    std::memcpy(header.magic, kConfigMagic, sizeof header.magic);
    header.metric_count = static_cast<uint32_t>(metrics.size());
    std::string names;
    for (const std::string& metric : metrics) names.append(metric).push_back('\0');
    header.names_bytes = static_cast<uint32_t>(names.size());
    std::vector<uint8_t> image(sizeof header + names.size());
    std::memcpy(image.data(), &header, sizeof header);
    std::memcpy(image.data() + sizeof header, names.data(), names.size());
    return image;
}

bool parse_config_image(const uint8_t* image, size_t size, std::vector<std::string>& metrics) {
    ConfigImageHeader header{};
    if (image == nullptr || size < sizeof header) return false;
    std::memcpy(&header, image, sizeof header);
    if (std::memcmp(header.magic, kConfigMagic, sizeof header.magic) != 0 || size < sizeof header + header.names_bytes)
        return false;
    metrics.clear();
    const char* cursor = reinterpret_cast<const char*>(image + sizeof header);
    const char* end = cursor + header.names_bytes;
    while (cursor < end) {
        const size_t length = strnlen(cursor, static_cast<size_t>(end - cursor));
        if (cursor + length == end) return false;  // unterminated
        metrics.emplace_back(cursor, length);
        cursor += length + 1;
    }
    return metrics.size() == header.metric_count;
}

size_t counter_data_size(size_t max_ranges) {
    return sizeof(CounterDataHeader) + max_ranges * sizeof(RangeCounters);
}

void initialize_counter_data(uint8_t* image, size_t max_ranges) {
    CounterDataHeader header{};
    std::memcpy(header.magic, kCounterMagic, sizeof header.magic);
    header.max_ranges = max_ranges;
    std::memcpy(image, &header, sizeof header);
    std::memset(image + sizeof header, 0, max_ranges * sizeof(RangeCounters));
}

const CounterDataHeader* counter_data_header(const uint8_t* image, size_t size) {
    if (image == nullptr || size < sizeof(CounterDataHeader) || reinterpret_cast<uintptr_t>(image) % 8 != 0)
        return nullptr;
    const auto* header = reinterpret_cast<const CounterDataHeader*>(image);
    if (std::memcmp(header->magic, kCounterMagic, sizeof header->magic) != 0) return nullptr;
    if (size < counter_data_size(header->max_ranges) || header->range_count > header->max_ranges) return nullptr;
    return header;
}

CounterDataHeader* counter_data_header(uint8_t* image, size_t size) {
    return const_cast<CounterDataHeader*>(counter_data_header(static_cast<const uint8_t*>(image), size));
}

}  // namespace tbdsim::cupti::profiler
