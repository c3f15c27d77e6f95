// Which NVIDIA library (or framework) a module file of a call stack belongs to, by its file name:
// the one home of that mapping for every stage that reads stacks (the tagger's library-made memory,
// the analyzer's "memory the framework cannot see").
#pragma once

#include <string_view>
#include <utility>

namespace tbdprof::trace {

// The file name of a module path (/usr/lib/libcublas.so.13 -> libcublas.so.13).
inline std::string_view module_file_name(std::string_view module) {
    const size_t slash = module.rfind('/');
    return slash == std::string_view::npos ? module : module.substr(slash + 1);
}

// The library a module file belongs to (libcublasLt.so.13 -> "cuBLASLt"); empty: none known. The
// longer prefix comes first where one name starts another (libcublasLt before libcublas).
inline std::string_view library_of_module(std::string_view module) {
    static constexpr std::pair<std::string_view, std::string_view> kLibraries[] = {
        {"libcublasLt", "cuBLASLt"}, {"libcublas", "cuBLAS"},     {"libcudnn", "cuDNN"},
        {"libnccl", "NCCL"},         {"libcufft", "cuFFT"},       {"libcurand", "cuRAND"},
        {"libcusparse", "cuSPARSE"}, {"libcusolver", "cuSOLVER"}, {"libc10_cuda", "PyTorch"}};
    const std::string_view name = module_file_name(module);
    for (const auto& [prefix, library] : kLibraries)
        if (name.starts_with(prefix)) return library;
    return {};
}

// The CUDA runtime or driver: a library that allocates through them has their frames innermost.
inline bool cuda_runtime_module(std::string_view module) {
    const std::string_view name = module_file_name(module);
    return name.starts_with("libcudart") || name.starts_with("libcuda.so");
}

}  // namespace tbdprof::trace
