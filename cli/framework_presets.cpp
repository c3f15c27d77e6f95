#include "framework_presets.h"

#include "tbdprof/step_names.h"

#include <fstream>

namespace tbdprof::cli {
namespace {

FrameworkPreset preset(const std::string& name) {
    if (name == "pytorch")
        return {name, {{"PYTORCH_CUDA_ALLOC_CONF", "backend:cudaMallocAsync"}},
                "PyTorch uses CUDA's stream-ordered allocator (one cudaMallocAsync per tensor): a few percent "
                "slower than its own caching allocator, peak memory can differ slightly"};
    if (name == "tensorflow")
        return {name, {{"TF_GPU_ALLOCATOR", "cuda_malloc_async"}},
                "TensorFlow uses cudaMallocAsync per tensor instead of its BFC pool: small slowdown"};
    if (name == "jax")
        return {name, {{"XLA_PYTHON_CLIENT_ALLOCATOR", "platform"}, {"XLA_PYTHON_CLIENT_PREALLOCATE", "false"}},
                "JAX allocates and frees on demand (no preallocated pool): markedly slower; XLA still packs "
                "an executable's temporaries into one buffer"};
    if (name == "mxnet")
        return {name, {{"MXNET_GPU_MEM_POOL_TYPE", "Unpooled"}},
                "MXNet calls cudaMalloc/cudaFree per array: slow for small arrays"};
    return {};
}

// The framework a Python script imports, from its first 64 KiB.
std::string framework_imported_by(const std::string& path) {
    std::ifstream in(path);
    if (!in) return {};
    std::string text(65536, '\0');
    in.read(text.data(), static_cast<std::streamsize>(text.size()));
    text.resize(static_cast<size_t>(in.gcount()));
    for (const auto& [needle, name] : std::vector<std::pair<std::string, std::string>>{
             {"import torch", "pytorch"}, {"from torch", "pytorch"}, {"import tensorflow", "tensorflow"},
             {"from tensorflow", "tensorflow"}, {"import jax", "jax"}, {"from jax", "jax"},
             {"import mxnet", "mxnet"}, {"from mxnet", "mxnet"}})
        if (text.find(needle) != std::string::npos) return name;
    return {};
}

std::string guess(const std::vector<std::string>& command) {
    for (size_t i = 0; i < command.size(); ++i) {
        std::string word = steps::lowercase(command[i]);
        std::string base = word.substr(word.find_last_of('/') + 1);
        if (base == "torchrun" || word.find("torch") != std::string::npos) return "pytorch";
        if (word.find("tensorflow") != std::string::npos) return "tensorflow";
        if (base == "jax" || word.rfind("jax.", 0) == 0) return "jax";
        if (word.find("mxnet") != std::string::npos) return "mxnet";
        if (base.size() > 3 && base.compare(base.size() - 3, 3, ".py") == 0) {
            std::string found = framework_imported_by(command[i]);
            if (!found.empty()) return found;
        }
    }
    return {};
}

}  // namespace

bool runs_pytorch(const std::vector<std::string>& command) { return guess(command) == "pytorch"; }

const char* framework_names() { return "pytorch, tensorflow, jax, mxnet, auto, none"; }

bool resolve_framework(const std::string& requested, const std::vector<std::string>& command, FrameworkPreset& out) {
    std::string name = steps::lowercase(requested);
    if (name == "none" || name.empty()) {
        out = {};
        return true;
    }
    if (name == "auto") name = guess(command);
    else if (name != "pytorch" && name != "tensorflow" && name != "jax" && name != "mxnet") return false;
    out = preset(name);
    return true;
}

}  // namespace tbdprof::cli
