#include "elf_symbols.h"

#include <algorithm>
#include <cstring>
#include <elf.h>
#include <fstream>
#include <iterator>

namespace tbdprof::trace {
namespace {

constexpr size_t kMaxFileBytes = size_t(1) << 30;  // do not read giant files into memory

template <typename T> bool read_at(const std::vector<char>& data, uint64_t offset, T& out) {
    if (offset > data.size() || data.size() - offset < sizeof(T)) return false;
    std::memcpy(&out, data.data() + offset, sizeof(T));
    return true;
}

}  // namespace

ElfSymbolizer::Module& ElfSymbolizer::load(const std::string& path) {
    Module& m = modules_[path];
    if (m.loaded) return m;
    m.loaded = true;
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) return m;
    auto size = static_cast<size_t>(in.tellg());
    if (size > kMaxFileBytes) return m;
    std::vector<char> data(size);
    in.seekg(0);
    if (!in.read(data.data(), static_cast<std::streamsize>(size))) return m;
    Elf64_Ehdr eh;
    if (!read_at(data, 0, eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
        return m;
    // The collector's offsets are ip - load address; symbol values are virtual addresses, which for
    // a shared object or PIE start at the first PT_LOAD's vaddr (usually 0).
    for (unsigned i = 0; i < eh.e_phnum; ++i) {
        Elf64_Phdr ph;
        if (!read_at(data, eh.e_phoff + uint64_t(i) * sizeof(Elf64_Phdr), ph)) return m;
        if (ph.p_type == PT_LOAD) {
            m.first_load_vaddr = ph.p_vaddr & ~uint64_t(ph.p_align ? ph.p_align - 1 : 0);
            break;
        }
    }
    for (unsigned i = 0; i < eh.e_shnum; ++i) {
        Elf64_Shdr sh;
        if (!read_at(data, eh.e_shoff + uint64_t(i) * sizeof(Elf64_Shdr), sh)) return m;
        if ((sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) || sh.sh_entsize != sizeof(Elf64_Sym)) continue;
        Elf64_Shdr strings;
        if (sh.sh_link >= eh.e_shnum ||
            !read_at(data, eh.e_shoff + uint64_t(sh.sh_link) * sizeof(Elf64_Shdr), strings))
            continue;
        for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= sh.sh_size; off += sizeof(Elf64_Sym)) {
            Elf64_Sym sym;
            if (!read_at(data, sh.sh_offset + off, sym)) break;
            if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || sym.st_value == 0 || sym.st_name >= strings.sh_size) continue;
            uint64_t name_at = strings.sh_offset + sym.st_name;
            if (name_at >= data.size()) continue;
            const char* name = data.data() + name_at;
            m.symbols.push_back({sym.st_value, sym.st_size, std::string(name, strnlen(name, data.size() - name_at))});
        }
    }
    std::sort(m.symbols.begin(), m.symbols.end(), [](const Symbol& a, const Symbol& b) { return a.start < b.start; });
    return m;
}

std::optional<std::string> ElfSymbolizer::function_at(const std::string& path, uint64_t offset) {
    if (path.empty() || path[0] != '/') return std::nullopt;
    Module& m = load(path);
    uint64_t vaddr = offset + m.first_load_vaddr;
    auto it = std::upper_bound(m.symbols.begin(), m.symbols.end(), vaddr,
                               [](uint64_t v, const Symbol& s) { return v < s.start; });
    if (it == m.symbols.begin()) return std::nullopt;
    --it;
    // A symbol without a size (hand-written assembly) covers up to the next one.
    bool inside = it->size ? vaddr < it->start + it->size : std::next(it) == m.symbols.end() || vaddr < std::next(it)->start;
    if (!inside) return std::nullopt;
    return it->name;
}

}  // namespace tbdprof::trace
