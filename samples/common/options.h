// Command-line options of the samples. A small table-driven parser: each program registers its
// options (the common training options plus its own layer sizes), then parses argv. Bad input gives
// one clear message on stderr and exit status 2; --help prints the table and exits 0.
#pragma once

#include "device_memory.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace tbdsample {

enum class GradMode { persistent, transient };
enum class OptimizerKind { sgd, adam };
// How FP32 GEMMs run: plain FP32; TF32 tensor cores for every GEMM (the handle's math mode
// CUBLAS_TF32_TENSOR_OP_MATH, as torch.backends.cuda.matmul.allow_tf32 sets it); or TF32 only where
// the call asks for it (cublasGemmStridedBatchedEx with CUBLAS_COMPUTE_32F_FAST_TF32), SGEMMs FP32.
enum class MathMode { fp32, tf32, fast_tf32 };

// Options every training sample has. Programs set their own defaults before registering them.
struct CommonOptions {
    int iterations = 20;
    int batch = 64;
    int hidden = 512;
    int layers = 2;
    int input = 256;
    int classes = 10;
    long host_work_us = 0;
    AllocMode alloc = AllocMode::direct;
    GradMode grad = GradMode::persistent;
    int accumulate = 1;
    std::size_t workspace_bytes = 0;
    std::uint64_t seed = 1;
    OptimizerKind optimizer = OptimizerKind::sgd;
    float learning_rate = 0.0f;  // 0: the optimizer's usual default (see resolved_learning_rate)
    float momentum = 0.9f;
    MathMode math = MathMode::fp32;
    bool nvtx = false;  // mark steps and their phases with NVTX ranges (see NvtxRange in training.h)
    // What one of N ZeRO-1 ranks keeps, in one process: the optimizer state of the first 1/N of each
    // parameter, and the update of that shard only (the other ranks' shards are not updated here).
    int optimizer_shards = 1;
};

class OptionParser {
public:
    OptionParser(const char* program, const char* description);

    void add_int(const char* name, int* target, long min, long max, const char* help);
    void add_long(const char* name, long* target, long min, long max, const char* help);
    void add_size(const char* name, std::size_t* target, const char* help);
    void add_u64(const char* name, std::uint64_t* target, const char* help);
    void add_float(const char* name, float* target, float min, float max, const char* help);
    // An option without a value: --name sets *target to true.
    void add_flag(const char* name, bool* target, const char* help);
    // A choice among fixed words; `apply` receives the index of the chosen word.
    void add_choice(const char* name, std::vector<std::string> words, int default_index,
                    std::function<void(int)> apply, const char* help);

    // A second name for an option already added (--model-dim for --hidden): same value, same checks.
    void add_alias(const char* alias, const char* existing);

    // Parses --name VALUE and --name=VALUE. Exits 0 after --help, 2 on any error.
    void parse(int argc, char** argv);

    [[noreturn]] void usage_error(const std::string& message) const;

private:
    struct Option {
        std::string name;
        std::string value_hint;
        std::string default_text;
        std::string help;
        std::function<bool(const std::string&)> apply;  // false: the value is not acceptable
        std::string accepted;                           // what is acceptable, for the error message
        bool is_flag = false;                           // takes no value
    };
    void print_help() const;
    const Option* find(const std::string& name) const;  // by name or alias; null when unknown

    std::string program_;
    std::string description_;
    std::vector<Option> options_;
    std::vector<std::pair<std::string, std::string>> aliases_;  // (alias, name of the option)
};

// The learning rate to use: --lr if given, else 0.05 for SGD and 0.001 for Adam.
float resolved_learning_rate(const CommonOptions& options);

// Registers --iterations --batch --hidden --layers --input --classes --host-work-us --alloc --grad
// --accumulate --workspace --blas-math --seed --optimizer --lr --momentum --nvtx --optimizer-shards.
void add_common_options(OptionParser& parser, CommonOptions& options);

}  // namespace tbdsample
