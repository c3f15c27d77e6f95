#include "options.h"

#include "check.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <utility>

namespace tbdsample {
namespace {

// Whole-string integer parse: "12x", "", " 3" and out-of-range values are all rejected.
bool parse_integer(const std::string& text, long long& out) {
    if (text.empty() || text[0] == ' ' || text[0] == '+') return false;
    errno = 0;
    char* end = nullptr;
    long long value = std::strtoll(text.c_str(), &end, 10);
    if (errno != 0 || end == text.c_str() || *end != '\0') return false;
    out = value;
    return true;
}

bool parse_unsigned(const std::string& text, unsigned long long& out) {
    if (text.empty() || text[0] < '0' || text[0] > '9') return false;  // strtoull accepts "-1"
    errno = 0;
    char* end = nullptr;
    unsigned long long value = std::strtoull(text.c_str(), &end, 10);
    if (errno != 0 || *end != '\0') return false;
    out = value;
    return true;
}

bool parse_real(const std::string& text, double& out) {
    if (text.empty() || text[0] == ' ') return false;
    errno = 0;
    char* end = nullptr;
    double value = std::strtod(text.c_str(), &end);
    if (errno != 0 || end == text.c_str() || *end != '\0' || !std::isfinite(value)) return false;
    out = value;
    return true;
}

std::string range_text(long min, long max) {
    if (max == std::numeric_limits<long>::max()) return "an integer >= " + std::to_string(min);
    return "an integer from " + std::to_string(min) + " to " + std::to_string(max);
}

}  // namespace

OptionParser::OptionParser(const char* program, const char* description)
    : program_(program), description_(description) {
    set_program_name(program);
}

namespace {
// Parses a whole number within [min, max] into `*target` (int or long).
template <typename T>
auto bounded_integer(T* target, long min, long max) {
    return [target, min, max](const std::string& text) {
        long long value = 0;
        if (!parse_integer(text, value) || value < min || value > max) return false;
        *target = static_cast<T>(value);
        return true;
    };
}
}  // namespace

void OptionParser::add_int(const char* name, int* target, long min, long max, const char* help) {
    options_.push_back({name, "N", std::to_string(*target), help, bounded_integer(target, min, max),
                        range_text(min, max)});
}

void OptionParser::add_long(const char* name, long* target, long min, long max, const char* help) {
    options_.push_back({name, "N", std::to_string(*target), help, bounded_integer(target, min, max),
                        range_text(min, max)});
}

void OptionParser::add_size(const char* name, std::size_t* target, const char* help) {
    options_.push_back({name, "BYTES", std::to_string(*target), help,
                        [target](const std::string& text) {
                            unsigned long long value = 0;
                            if (!parse_unsigned(text, value)) return false;
                            *target = static_cast<std::size_t>(value);
                            return true;
                        },
                        "a number of bytes (an integer >= 0)"});
}

void OptionParser::add_u64(const char* name, std::uint64_t* target, const char* help) {
    options_.push_back({name, "N", std::to_string(*target), help,
                        [target](const std::string& text) {
                            unsigned long long value = 0;
                            if (!parse_unsigned(text, value)) return false;
                            *target = static_cast<std::uint64_t>(value);
                            return true;
                        },
                        "an integer >= 0"});
}

void OptionParser::add_float(const char* name, float* target, float min, float max,
                             const char* help) {
    char default_text[32];
    std::snprintf(default_text, sizeof default_text, "%g", static_cast<double>(*target));
    char accepted[96];
    std::snprintf(accepted, sizeof accepted, "a number from %g to %g", static_cast<double>(min),
                  static_cast<double>(max));
    options_.push_back({name, "X", default_text, help,
                        [target, min, max](const std::string& text) {
                            double value = 0;
                            if (!parse_real(text, value) || value < min || value > max) return false;
                            *target = static_cast<float>(value);
                            return true;
                        },
                        accepted});
}

void OptionParser::add_flag(const char* name, bool* target, const char* help) {
    Option option{name, "", "off", help, [target](const std::string& text) {
                      if (!text.empty()) return false;
                      *target = true;
                      return true;
                  },
                  "no value"};
    option.is_flag = true;
    options_.push_back(std::move(option));
}

void OptionParser::add_choice(const char* name, std::vector<std::string> words, int default_index,
                              std::function<void(int)> apply, const char* help) {
    std::string hint;
    for (const auto& word : words) hint += (hint.empty() ? "" : "|") + word;
    std::string default_word = words.at(static_cast<std::size_t>(default_index));
    options_.push_back({name, hint, default_word, help,
                        [words = std::move(words), apply = std::move(apply)](const std::string& text) {
                            for (std::size_t i = 0; i < words.size(); ++i) {
                                if (words[i] == text) {
                                    apply(static_cast<int>(i));
                                    return true;
                                }
                            }
                            return false;
                        },
                        "one of " + hint});
}

void OptionParser::add_alias(const char* alias, const char* existing) {
    // Checked here so that a typo in a program's own option table fails at once, not on use.
    bool known = false;
    for (const auto& option : options_) known = known || option.name == existing;
    if (!known) fail_message("option alias for an option that was never added", __FILE__, __LINE__);
    aliases_.emplace_back(alias, existing);
}

const OptionParser::Option* OptionParser::find(const std::string& name) const {
    std::string target = name;
    for (const auto& [alias, existing] : aliases_)
        if (alias == name) target = existing;
    const Option* option = nullptr;
    for (const auto& candidate : options_)
        if (candidate.name == target) option = &candidate;
    return option;
}

void OptionParser::usage_error(const std::string& message) const {
    std::fprintf(stderr, "%s: error: %s (try '%s --help')\n", program_.c_str(), message.c_str(),
                 program_.c_str());
    std::exit(2);
}

void OptionParser::print_help() const {
    std::printf("usage: %s [options]\n%s\n\noptions:\n", program_.c_str(), description_.c_str());
    for (const auto& option : options_) {
        if (option.is_flag) {
            std::printf("  %-34s %s\n", ("--" + option.name).c_str(), option.help.c_str());
            continue;
        }
        std::string left = "--" + option.name + " " + option.value_hint;
        std::printf("  %-34s %s (default %s)\n", left.c_str(), option.help.c_str(),
                    option.default_text.c_str());
    }
    for (const auto& [alias, existing] : aliases_) {
        std::string left = "--" + alias + " " + find(existing)->value_hint;
        std::printf("  %-34s same as --%s\n", left.c_str(), existing.c_str());
    }
    std::printf("  %-34s %s\n", "--help", "print this help and exit");
    std::printf("\nenvironment:\n  %-34s %s\n", "TBD_SAMPLE_LABELS=PATH",
                "write the true category of every device allocation and free to PATH");
}

void OptionParser::parse(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
        std::string argument = argv[i];
        if (argument == "--help" || argument == "-h") {
            print_help();
            std::exit(0);
        }
        if (argument.rfind("--", 0) != 0) usage_error("unexpected argument '" + argument + "'");
        std::string name = argument.substr(2);
        std::string value;
        bool has_value = false;
        if (auto equals = name.find('='); equals != std::string::npos) {
            value = name.substr(equals + 1);
            name.resize(equals);
            has_value = true;
        }
        const Option* option = find(name);
        if (option == nullptr) usage_error("unknown option '--" + name + "'");
        if (option->is_flag && has_value) usage_error("option '--" + name + "' takes no value");
        if (!has_value && !option->is_flag) {
            if (i + 1 >= argc) usage_error("option '--" + name + "' needs a value (" + option->accepted + ")");
            value = argv[++i];
        }
        if (!option->apply(value))
            usage_error("bad value '" + value + "' for '--" + name + "': expected " + option->accepted);
    }
}

float resolved_learning_rate(const CommonOptions& options) {
    if (options.learning_rate > 0.0f) return options.learning_rate;
    return options.optimizer == OptimizerKind::adam ? 0.001f : 0.05f;
}

void add_common_options(OptionParser& parser, CommonOptions& options) {
    constexpr long kMaxSize = 1L << 20;
    parser.add_int("iterations", &options.iterations, 1, 1000000, "training steps (optimizer updates)");
    parser.add_int("batch", &options.batch, 1, kMaxSize, "samples per micro-batch");
    parser.add_int("hidden", &options.hidden, 1, kMaxSize, "hidden width");
    parser.add_int("layers", &options.layers, 1, 64, "number of hidden layers");
    parser.add_int("input", &options.input, 1, kMaxSize, "input features");
    parser.add_int("classes", &options.classes, 2, 4096, "output classes");
    parser.add_long("host-work-us", &options.host_work_us, 0, 60L * 1000 * 1000,
                    "busy host work per iteration in microseconds (leaves the GPU idle)");
    parser.add_choice("alloc", {"direct", "async", "pool"}, 0,
                      [&options](int index) {
                          constexpr AllocMode modes[] = {AllocMode::direct, AllocMode::async, AllocMode::pool};
                          options.alloc = modes[index];
                      },
                      "cudaMalloc/cudaFree or cudaMallocAsync/cudaFreeAsync per tensor, or a caching pool");
    parser.add_choice("grad", {"persistent", "transient"}, 0,
                      [&options](int index) {
                          options.grad = index == 0 ? GradMode::persistent : GradMode::transient;
                      },
                      "gradients allocated once and zeroed each step, or allocated in backward and freed after the step");
    parser.add_int("accumulate", &options.accumulate, 1, 1024,
                   "micro-batches whose gradients are accumulated before each optimizer step");
    parser.add_size("workspace", &options.workspace_bytes,
                    "cuBLAS workspace given with cublasSetWorkspace (0: cuBLAS default)");
    parser.add_choice("blas-math", {"fp32", "tf32", "fast-tf32"}, 0,
                      [&options](int index) {
                          constexpr MathMode modes[] = {MathMode::fp32, MathMode::tf32, MathMode::fast_tf32};
                          options.math = modes[index];
                      },
                      "FP32 GEMMs in FP32; all in TF32 (CUBLAS_TF32_TENSOR_OP_MATH); or only the *Ex batched "
                      "ones (CUBLAS_COMPUTE_32F_FAST_TF32)");
    parser.add_u64("seed", &options.seed, "seed of weights and synthetic data");
    parser.add_choice("optimizer", {"sgd", "adam"}, 0,
                      [&options](int index) {
                          options.optimizer = index == 0 ? OptimizerKind::sgd : OptimizerKind::adam;
                      },
                      "SGD with momentum, or Adam");
    parser.add_float("lr", &options.learning_rate, 0.0f, 10.0f,
                     "learning rate (0: 0.05 for sgd, 0.001 for adam)");
    parser.add_float("momentum", &options.momentum, 0.0f, 0.999f,
                     "SGD momentum (0: plain SGD, no optimizer state)");
    parser.add_flag("nvtx", &options.nvtx,
                    "NVTX ranges: \"step\" around each training step, \"forward\", \"backward\", \"optimizer\" inside");
    parser.add_int("optimizer-shards", &options.optimizer_shards, 1, 4096,
                   "keep and update the optimizer state of 1/N of each parameter, as one of N ZeRO-1 ranks does");
}

}  // namespace tbdsample
