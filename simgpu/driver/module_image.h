// Reading the images that cuModuleLoadData/cuLibraryLoadData accept: nvcc fat binaries (bare or inside
// the __fatDeviceText wrapper), cubin ELF files, and PTX text. What the real driver learns from them
// and we need: the kernels, their parameter layouts, register and static shared memory use, and the
// architectures the image can run on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tbdsim::driver {

struct KernelParam {
    uint32_t offset = 0;  // byte offset in the parameter buffer
    uint32_t size = 0;    // bytes
};

struct KernelInfo {
    std::string name;  // mangled name, as in the cubin's symbol table
    std::vector<KernelParam> params;  // by ordinal
    uint32_t registers = 0;
    uint32_t static_shared_bytes = 0;
    uint32_t max_threads_per_block = 1024;
};

struct GlobalInfo {
    std::string name;
    uint64_t size = 0;
    std::vector<uint8_t> initial;  // initializer bytes (.nv.global.init); empty: zero-filled
};

enum class ImageCodeKind { Cubin, Ptx };

struct ImageCode {
    ImageCodeKind kind;
    int arch;  // compute capability * 10 + minor, e.g. 90
    bool compressed;
};

struct ModuleImage {
    std::vector<KernelInfo> kernels;
    std::vector<GlobalInfo> globals;
    std::vector<ImageCode> codes;  // every entry found, for the architecture check
};

enum class ImageError { None, InvalidImage, NoKernelInfo };

// Parses `image` (a pointer handed to the driver; fat binaries carry their own size, a cubin's size is
// read from its ELF header, PTX is NUL-terminated). Returns nullopt and sets `error` when unreadable.
std::optional<ModuleImage> parse_module_image(const void* image, ImageError& error);

// Parses a cubin of known size (also used on fatbin entries).
bool parse_cubin(const uint8_t* data, size_t size, ModuleImage& out);

// Parses PTX text: .entry names and parameter sizes (alignment from .align).
bool parse_ptx(const char* text, size_t size, ModuleImage& out);

// Whether the image has code a device of compute capability `arch` can run: a cubin of the same major
// version and a minor version not above the device's, or PTX of an architecture not above it (JIT).
bool image_runs_on(const ModuleImage& image, int arch);

}  // namespace tbdsim::driver
