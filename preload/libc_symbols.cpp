#include "libc_symbols.h"

#include <elf.h>
#include <link.h>

#include <cstdint>
#include <cstring>

namespace tbdprof::preload {

namespace {

struct LibcTables {
    ElfW(Addr) base = 0;
    const ElfW(Sym)* symbols = nullptr;
    const char* strings = nullptr;
    const uint32_t* gnu_hash = nullptr;
    const ElfW(Half)* versions = nullptr;  // DT_VERSYM
};

uint32_t gnu_hash_of(const char* name) {
    uint32_t h = 5381;
    for (auto c = reinterpret_cast<const unsigned char*>(name); *c != 0; ++c) h = h * 33 + *c;
    return h;
}

// ld.so relocates most dynamic-section addresses in place; some architectures leave them relative.
template <typename T>
const T* dynamic_pointer(ElfW(Addr) base, ElfW(Addr) value) {
    return reinterpret_cast<const T*>(value < base ? base + value : value);
}

int find_libc(dl_phdr_info* info, size_t, void* data) {
    if (info->dlpi_name == nullptr || std::strstr(info->dlpi_name, "/libc.so.6") == nullptr) {
        if (info->dlpi_name == nullptr || std::strcmp(info->dlpi_name, "libc.so.6") != 0) return 0;
    }
    auto* tables = static_cast<LibcTables*>(data);
    tables->base = info->dlpi_addr;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        if (info->dlpi_phdr[i].p_type != PT_DYNAMIC) continue;
        for (auto* d = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
             d->d_tag != DT_NULL; ++d) {
            switch (d->d_tag) {
            case DT_SYMTAB: tables->symbols = dynamic_pointer<ElfW(Sym)>(info->dlpi_addr, d->d_un.d_ptr); break;
            case DT_STRTAB: tables->strings = dynamic_pointer<char>(info->dlpi_addr, d->d_un.d_ptr); break;
            case DT_GNU_HASH: tables->gnu_hash = dynamic_pointer<uint32_t>(info->dlpi_addr, d->d_un.d_ptr); break;
            case DT_VERSYM: tables->versions = dynamic_pointer<ElfW(Half)>(info->dlpi_addr, d->d_un.d_ptr); break;
            default: break;
            }
        }
    }
    return 1;
}

void* lookup(const char* name) {
    LibcTables t;
    dl_iterate_phdr(find_libc, &t);
    if (t.symbols == nullptr || t.strings == nullptr || t.gnu_hash == nullptr) return nullptr;
    const uint32_t buckets_count = t.gnu_hash[0];
    const uint32_t first_symbol = t.gnu_hash[1];
    const uint32_t bloom_words = t.gnu_hash[2];
    const auto* bloom = reinterpret_cast<const ElfW(Addr)*>(t.gnu_hash + 4);
    const auto* buckets = reinterpret_cast<const uint32_t*>(bloom + bloom_words);
    const uint32_t* chain = buckets + buckets_count;
    const uint32_t hash = gnu_hash_of(name);
    uint32_t index = buckets[hash % buckets_count];
    if (index < first_symbol) return nullptr;
    void* fallback = nullptr;
    for (;; ++index) {
        const uint32_t entry_hash = chain[index - first_symbol];
        const ElfW(Sym)& sym = t.symbols[index];
        if ((entry_hash | 1) == (hash | 1) && std::strcmp(t.strings + sym.st_name, name) == 0 && sym.st_value != 0) {
            void* address = reinterpret_cast<void*>(t.base + sym.st_value);
            // The default version (not hidden) is what a normal link would bind to.
            if (t.versions == nullptr || (t.versions[index] & 0x8000) == 0) return address;
            if (fallback == nullptr) fallback = address;
        }
        if (entry_hash & 1) break;
    }
    return fallback;
}

}  // namespace

DlsymFn libc_dlsym() {
    static const DlsymFn fn = reinterpret_cast<DlsymFn>(lookup("dlsym"));
    return fn;
}

DlvsymFn libc_dlvsym() {
    static const DlvsymFn fn = reinterpret_cast<DlvsymFn>(lookup("dlvsym"));
    return fn;
}

}  // namespace tbdprof::preload
