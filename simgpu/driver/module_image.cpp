#include "module_image.h"

#include <algorithm>
#include <cstring>
#include <elf.h>
#include <zstd.h>

namespace tbdsim::driver {
namespace {

constexpr uint32_t kFatbinWrapperMagic = 0x466243b1;  // __fatDeviceText written by nvcc
constexpr uint32_t kFatbinMagic = 0xBA55ED50;
constexpr uint16_t kEntryPtx = 1;
constexpr uint16_t kEntryCubin = 2;
constexpr uint64_t kEntryFlagCompressedLegacy = 0x2000;  // older, non-zstd scheme: not supported
constexpr uint8_t kZstdMagic[4] = {0x28, 0xB5, 0x2F, 0xFD};

// .nv.info attribute encoding: one format byte, one attribute byte, then a value whose shape the
// format gives (none, one byte, two bytes, or a 16-bit length and that many bytes).
constexpr uint8_t kFormatNoValue = 0x01;
constexpr uint8_t kFormatByte = 0x02;
constexpr uint8_t kFormatHalf = 0x03;
constexpr uint8_t kFormatSized = 0x04;
constexpr uint8_t kAttrKparamInfo = 0x17;
// What nvcc writes instead of kAttrKparamInfo for a parameter over 4 KB (CUDA 12.1's large kernel
// parameters, PyTorch's multi_tensor_apply metadata): the same index, ordinal and offset, then the
// size as a whole 32-bit word (seen in the .nv.info of kernels our own nvcc builds).
constexpr uint8_t kAttrKparamInfoLarge = 0x45;
constexpr uint8_t kAttrMaxThreads = 0x05;
constexpr uint8_t kAttrRegCount = 0x2f;  // in the module-wide .nv.info: symbol index, registers

struct FatbinHeader {
    uint32_t magic;
    uint16_t version;
    uint16_t header_size;
    uint64_t fat_size;  // bytes of entries after the header
};

struct FatbinEntryHeader {
    uint16_t kind;
    uint16_t version;
    uint32_t header_size;
    uint64_t padded_payload_size;
    uint32_t compressed_size;
    uint32_t unknown0;
    uint16_t unknown1;
    uint16_t ptx_version;
    uint32_t arch;
    uint32_t name_offset;
    uint32_t name_size;
    uint64_t flags;
    uint64_t unknown2;
    uint64_t uncompressed_size;
};
static_assert(sizeof(FatbinEntryHeader) == 64);

template <typename T> T read_at(const uint8_t* p) {
    T value;
    std::memcpy(&value, p, sizeof value);
    return value;
}

bool decompress_zstd(const uint8_t* data, size_t size, size_t expected, std::vector<uint8_t>& out) {
    if (size < 4 || std::memcmp(data, kZstdMagic, 4) != 0) return false;
    unsigned long long content = ZSTD_getFrameContentSize(data, size);
    size_t capacity = expected;
    if (content != ZSTD_CONTENTSIZE_ERROR && content != ZSTD_CONTENTSIZE_UNKNOWN)
        capacity = static_cast<size_t>(content);
    if (capacity == 0 || capacity > (1u << 30)) return false;
    out.resize(capacity);
    size_t got = ZSTD_decompress(out.data(), out.size(), data, size);
    if (ZSTD_isError(got)) return false;
    out.resize(got);
    return true;
}

// One fatbin (header + entries). Returns bytes consumed, 0 when not a fatbin.
size_t parse_fatbin(const uint8_t* base, ModuleImage& out) {
    FatbinHeader header = read_at<FatbinHeader>(base);
    if (header.magic != kFatbinMagic || header.header_size < sizeof(FatbinHeader)) return 0;
    const uint8_t* entry = base + header.header_size;
    const uint8_t* end = entry + header.fat_size;
    while (entry + sizeof(FatbinEntryHeader) <= end) {
        auto eh = read_at<FatbinEntryHeader>(entry);
        if (eh.header_size < 16 || eh.kind == 0) break;
        const uint8_t* payload = entry + eh.header_size;
        size_t payload_size = eh.padded_payload_size;
        if (payload + payload_size > end) break;
        bool zstd = payload_size >= 4 && std::memcmp(payload, kZstdMagic, 4) == 0;
        bool legacy_compressed = !zstd && (eh.flags & kEntryFlagCompressedLegacy);
        if (eh.kind == kEntryCubin || eh.kind == kEntryPtx) {
            ImageCodeKind kind = eh.kind == kEntryCubin ? ImageCodeKind::Cubin : ImageCodeKind::Ptx;
            out.codes.push_back({kind, static_cast<int>(eh.arch), zstd || legacy_compressed});
            std::vector<uint8_t> plain;
            const uint8_t* bytes = payload;
            size_t size = payload_size;
            if (zstd) {
                size_t packed = eh.compressed_size ? eh.compressed_size : payload_size;
                if (decompress_zstd(payload, packed, eh.uncompressed_size, plain)) {
                    bytes = plain.data();
                    size = plain.size();
                } else {
                    bytes = nullptr;
                }
            } else if (legacy_compressed) {
                bytes = nullptr;
            }
            // The first readable description of the kernels wins; layouts do not depend on arch.
            if (bytes && out.kernels.empty()) {
                if (kind == ImageCodeKind::Cubin)
                    parse_cubin(bytes, size, out);
                else
                    parse_ptx(reinterpret_cast<const char*>(bytes), size, out);
            }
        }
        entry = payload + payload_size;
    }
    return header.header_size + header.fat_size;
}

void parse_nv_info(const uint8_t* p, size_t size, KernelInfo& kernel) {
    std::vector<std::pair<uint32_t, KernelParam>> by_ordinal;
    size_t pos = 0;
    while (pos + 2 <= size) {
        uint8_t format = p[pos];
        uint8_t attr = p[pos + 1];
        pos += 2;
        if (format == kFormatNoValue) continue;
        if (format == kFormatByte) {
            pos += 1;
            continue;
        }
        if (format == kFormatHalf) {
            pos += 2;
            continue;
        }
        if (format != kFormatSized || pos + 2 > size) break;
        uint16_t length = read_at<uint16_t>(p + pos);
        pos += 2;
        if (pos + length > size) break;
        const uint8_t* value = p + pos;
        if (attr == kAttrKparamInfo && length >= 12) {
            uint16_t ordinal = read_at<uint16_t>(value + 4);
            uint16_t offset = read_at<uint16_t>(value + 6);
            uint32_t packed = read_at<uint32_t>(value + 8);
            uint32_t bytes = (packed >> 18) & 0x3fff;
            by_ordinal.push_back({ordinal, {offset, bytes}});
        } else if (attr == kAttrKparamInfoLarge && length >= 12) {
            uint16_t ordinal = read_at<uint16_t>(value + 4);
            uint16_t offset = read_at<uint16_t>(value + 6);
            by_ordinal.push_back({ordinal, {offset, read_at<uint32_t>(value + 8)}});
        } else if (attr == kAttrMaxThreads && length >= 12) {
            uint32_t x = read_at<uint32_t>(value), y = read_at<uint32_t>(value + 4),
                     z = read_at<uint32_t>(value + 8);
            if (x && y && z) kernel.max_threads_per_block = x * y * z;
        }
        pos += length;
    }
    std::sort(by_ordinal.begin(), by_ordinal.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    kernel.params.clear();
    for (const auto& [ordinal, param] : by_ordinal) kernel.params.push_back(param);
}

void collect_register_counts(const uint8_t* p, size_t size,
                             std::vector<std::pair<uint32_t, uint32_t>>& out) {
    size_t pos = 0;
    while (pos + 2 <= size) {
        uint8_t format = p[pos], attr = p[pos + 1];
        pos += 2;
        if (format == kFormatNoValue) continue;
        if (format == kFormatByte || format == kFormatHalf) {
            pos += format == kFormatByte ? 1 : 2;
            continue;
        }
        if (format != kFormatSized || pos + 2 > size) break;
        uint16_t length = read_at<uint16_t>(p + pos);
        pos += 2;
        if (pos + length > size) break;
        if (attr == kAttrRegCount && length >= 8)
            out.push_back({read_at<uint32_t>(p + pos), read_at<uint32_t>(p + pos + 4)});
        pos += length;
    }
}

size_t ptx_type_size(const std::string& type) {
    if (type.size() < 3) return 0;
    // .u64 .s32 .f32 .b8 .pred ...
    std::string digits;
    for (char c : type)
        if (c >= '0' && c <= '9') digits += c;
    if (digits.empty()) return type == ".pred" ? 1 : 0;
    return static_cast<size_t>(std::stoul(digits)) / 8;
}

}  // namespace

bool parse_cubin(const uint8_t* data, size_t size, ModuleImage& out) {
    if (size < sizeof(Elf64_Ehdr) || std::memcmp(data, ELFMAG, SELFMAG) != 0) return false;
    auto eh = read_at<Elf64_Ehdr>(data);
    if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr)) return false;
    if (eh.e_shoff + uint64_t(eh.e_shnum) * sizeof(Elf64_Shdr) > size) return false;
    auto section = [&](unsigned i) {
        return read_at<Elf64_Shdr>(data + eh.e_shoff + i * sizeof(Elf64_Shdr));
    };
    if (eh.e_shstrndx >= eh.e_shnum) return false;
    Elf64_Shdr names = section(eh.e_shstrndx);
    if (names.sh_offset + names.sh_size > size) return false;
    auto section_name = [&](const Elf64_Shdr& s) -> std::string {
        if (s.sh_name >= names.sh_size) return {};
        const char* n = reinterpret_cast<const char*>(data + names.sh_offset + s.sh_name);
        return std::string(n, strnlen(n, names.sh_size - s.sh_name));
    };
    const std::string text_prefix = ".text.", info_prefix = ".nv.info.", shared_prefix = ".nv.shared.";
    std::vector<KernelInfo> kernels;
    std::vector<std::string> with_text;   // sections named after a kernel exist only for kernels
    std::vector<std::string> symbol_names;  // by symbol index
    std::vector<std::pair<uint32_t, uint32_t>> register_counts;  // symbol index, registers
    auto kernel_named = [&](const std::string& name) -> KernelInfo& {
        for (auto& k : kernels)
            if (k.name == name) return k;
        kernels.push_back({});
        kernels.back().name = name;
        return kernels.back();
    };
    for (unsigned i = 0; i < eh.e_shnum; ++i) {
        Elf64_Shdr s = section(i);
        std::string name = section_name(s);
        bool in_file = s.sh_type == SHT_NOBITS || s.sh_offset + s.sh_size <= size;
        if (!in_file) return false;
        if (name.rfind(text_prefix, 0) == 0) {
            // Older cubins keep the register count in the top 8 bits of the text section's sh_info;
            // newer ones in the module-wide .nv.info (read below).
            std::string kernel = name.substr(text_prefix.size());
            with_text.push_back(kernel);
            if (s.sh_info >> 24) kernel_named(kernel).registers = s.sh_info >> 24;
        } else if (name.rfind(info_prefix, 0) == 0) {
            parse_nv_info(data + s.sh_offset, s.sh_size,
                          kernel_named(name.substr(info_prefix.size())));
        } else if (name == ".nv.info") {
            collect_register_counts(data + s.sh_offset, s.sh_size, register_counts);
        } else if (name.rfind(shared_prefix, 0) == 0) {
            kernel_named(name.substr(shared_prefix.size())).static_shared_bytes =
                static_cast<uint32_t>(s.sh_size);
        } else if (s.sh_type == SHT_SYMTAB && s.sh_entsize == sizeof(Elf64_Sym) &&
                   s.sh_link < eh.e_shnum) {
            Elf64_Shdr strings = section(s.sh_link);
            for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= s.sh_size; off += sizeof(Elf64_Sym)) {
                auto sym = read_at<Elf64_Sym>(data + s.sh_offset + off);
                symbol_names.push_back(
                    sym.st_name < strings.sh_size
                        ? std::string(reinterpret_cast<const char*>(data + strings.sh_offset + sym.st_name))
                        : std::string());
                if (ELF64_ST_TYPE(sym.st_info) != STT_OBJECT || sym.st_size == 0) continue;
                if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= eh.e_shnum) continue;
                std::string where = section_name(section(sym.st_shndx));
                if (where.rfind(".nv.global", 0) != 0 && where != ".nv.constant3" &&
                    where.rfind(".nv.constant", 0) != 0)
                    continue;
                if (where.rfind(".nv.constant0", 0) == 0) continue;  // parameter bank
                if (sym.st_name >= strings.sh_size) continue;
                const char* n = reinterpret_cast<const char*>(data + strings.sh_offset + sym.st_name);
                GlobalInfo global{n, sym.st_size, {}};
                // Initialized globals (__device__ int x = 5; __managed__ ones too) carry their bytes.
                const Elf64_Shdr holder = section(sym.st_shndx);
                if (holder.sh_type == SHT_PROGBITS && sym.st_value + sym.st_size <= holder.sh_size &&
                    holder.sh_offset + holder.sh_size <= size) {
                    const uint8_t* bytes = data + holder.sh_offset + sym.st_value;
                    global.initial.assign(bytes, bytes + sym.st_size);
                }
                out.globals.push_back(std::move(global));
            }
        }
    }
    for (const auto& [index, registers] : register_counts)
        if (index < symbol_names.size())
            for (auto& k : kernels)
                if (k.name == symbol_names[index]) k.registers = registers;
    for (auto& k : kernels) {
        if (std::find(with_text.begin(), with_text.end(), k.name) == with_text.end()) continue;
        bool known = false;
        for (const auto& existing : out.kernels) known |= existing.name == k.name;
        if (!known) out.kernels.push_back(std::move(k));
    }
    return true;
}

bool parse_ptx(const char* text, size_t size, ModuleImage& out) {
    std::string ptx(text, strnlen(text, size));
    size_t pos = 0;
    while ((pos = ptx.find(".entry", pos)) != std::string::npos) {
        pos += 6;
        size_t open = ptx.find('(', pos);
        size_t brace = ptx.find('{', pos);
        std::string name;
        size_t name_end = std::min(open, brace);
        for (size_t i = pos; i < name_end && i < ptx.size(); ++i)
            if (!isspace(static_cast<unsigned char>(ptx[i]))) name += ptx[i];
        KernelInfo kernel;
        kernel.name = name;
        if (open != std::string::npos && open < brace) {
            size_t close = ptx.find(')', open);
            std::string list = ptx.substr(open + 1, close - open - 1);
            uint32_t offset = 0;
            size_t p = 0;
            while ((p = list.find(".param", p)) != std::string::npos) {
                p += 6;
                size_t comma = list.find(',', p);
                std::string decl = list.substr(p, comma == std::string::npos ? std::string::npos
                                                                              : comma - p);
                // ".u64 name" or ".align 8 .b8 name[16]"
                uint32_t align = 0, bytes = 0;
                size_t a = decl.find(".align");
                if (a != std::string::npos) align = static_cast<uint32_t>(std::stoul(decl.substr(a + 6)));
                size_t t = decl.find('.', a == std::string::npos ? 0 : a + 6);
                size_t t_end = decl.find_first_of(" \t\n", t);
                uint32_t element = static_cast<uint32_t>(ptx_type_size(decl.substr(t, t_end - t)));
                size_t bracket = decl.find('[');
                uint32_t count = bracket == std::string::npos
                                     ? 1
                                     : static_cast<uint32_t>(std::stoul(decl.substr(bracket + 1)));
                bytes = element * count;
                if (!align) align = element ? element : 1;
                offset = (offset + align - 1) / align * align;
                kernel.params.push_back({offset, bytes});
                offset += bytes;
                if (comma == std::string::npos) break;
                p = comma;
            }
        }
        out.kernels.push_back(std::move(kernel));
    }
    return true;
}

std::optional<ModuleImage> parse_module_image(const void* image, ImageError& error) {
    error = ImageError::None;
    if (!image) {
        error = ImageError::InvalidImage;
        return std::nullopt;
    }
    auto bytes = static_cast<const uint8_t*>(image);
    ModuleImage result;
    uint32_t magic = read_at<uint32_t>(bytes);
    if (magic == kFatbinWrapperMagic) {
        const void* inner = read_at<const void*>(bytes + 8);
        return parse_module_image(inner, error);
    }
    if (magic == kFatbinMagic) {
        // nvcc may place several fat binaries back to back; the wrapper points at the first.
        parse_fatbin(bytes, result);
    } else if (std::memcmp(bytes, ELFMAG, SELFMAG) == 0) {
        auto eh = read_at<Elf64_Ehdr>(bytes);
        size_t size = eh.e_shoff + size_t(eh.e_shnum) * eh.e_shentsize;
        if (!parse_cubin(bytes, size, result)) {
            error = ImageError::InvalidImage;
            return std::nullopt;
        }
        result.codes.push_back({ImageCodeKind::Cubin, 0, false});
    } else if (std::strstr(reinterpret_cast<const char*>(bytes), ".entry") ||
               std::strstr(reinterpret_cast<const char*>(bytes), ".version")) {
        parse_ptx(reinterpret_cast<const char*>(bytes), std::strlen(reinterpret_cast<const char*>(bytes)),
                  result);
        result.codes.push_back({ImageCodeKind::Ptx, 0, false});
    } else {
        error = ImageError::InvalidImage;
        return std::nullopt;
    }
    if (result.codes.empty()) {
        error = ImageError::InvalidImage;
        return std::nullopt;
    }
    return result;
}

bool image_runs_on(const ModuleImage& image, int arch) {
    for (const auto& code : image.codes) {
        if (code.arch == 0) return true;  // bare cubin or PTX: the caller chose it for this device
        if (code.kind == ImageCodeKind::Cubin && code.arch / 10 == arch / 10 && code.arch <= arch)
            return true;
        if (code.kind == ImageCodeKind::Ptx && code.arch <= arch) return true;
    }
    return false;
}

}  // namespace tbdsim::driver
