#include "tbdprof/collector/symbolizer.h"

#include <cxxabi.h>
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "tbdprof/collector/recorder.h"
#include "tbdprof/raw_format.h"

namespace tbdprof::collector {

std::string demangle(const char* name) {
    if (name == nullptr) return {};
    int status = 0;
    char* text = abi::__cxa_demangle(name, nullptr, nullptr, &status);
    if (status != 0 || text == nullptr) return name;
    std::string result = text;
    std::free(text);
    return result;
}

namespace {

int find_main_program(dl_phdr_info* info, size_t, void* data) {
    // The first object is the main program; its load address is that of its first PT_LOAD segment.
    uint64_t low = UINT64_MAX;
    for (int i = 0; i < info->dlpi_phnum; ++i)
        if (info->dlpi_phdr[i].p_type == PT_LOAD && info->dlpi_phdr[i].p_vaddr < low) low = info->dlpi_phdr[i].p_vaddr;
    *static_cast<uint64_t*>(data) = info->dlpi_addr + (low == UINT64_MAX ? 0 : low);
    return 1;
}

// dladdr names the main program as it was started (argv[0], maybe relative): use its real path.
std::string module_path(const Dl_info& info) {
    std::string name = info.dli_fname != nullptr ? info.dli_fname : "";
    if (!name.empty() && name[0] == '/') return name;
    uint64_t main_base = 0;
    dl_iterate_phdr(find_main_program, &main_base);
    char path[PATH_MAX] = {};
    if (reinterpret_cast<uint64_t>(info.dli_fbase) == main_base) {
        const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        if (n > 0) return std::string(path, static_cast<size_t>(n));
    }
    if (!name.empty() && realpath(name.c_str(), path) != nullptr) return path;
    return name;
}

}  // namespace

void Symbolizer::note_stack(std::span<const uint64_t> ips) {
    for (uint64_t ip : ips)
        if (seen_.insert(ip).second) pending_.push_back(ip);
}

uint64_t Symbolizer::string_id(uint32_t tid, const std::string& text, const Output& out) {
    const uint64_t id = string_id_of(text);
    if (!emitted_strings_.insert(id).second) return id;
    const size_t size = (sizeof(raw::RawString) + text.size() + 7) & ~size_t{7};
    if (size > 65535) return 0;
    std::vector<uint8_t> bytes(size, 0);
    raw::RawString s{};
    s.header = {raw::RecordKind::String, static_cast<uint16_t>(size), tid};
    s.id = id;
    s.length = static_cast<uint32_t>(text.size());
    std::memcpy(bytes.data(), &s, sizeof s);
    std::memcpy(bytes.data() + sizeof s, text.data(), text.size());
    out(bytes.data(), bytes.size());
    return id;
}

void Symbolizer::emit_pending(uint32_t tid, const Output& out) {
    for (uint64_t ip : pending_) {
        raw::RawFrame frame{};
        frame.header = {raw::RecordKind::Frame, sizeof(raw::RawFrame), tid};
        frame.ip = ip;
        Dl_info info{};
        // ip is a return address: the call instruction is just before it.
        if (dladdr(reinterpret_cast<void*>(ip - 1), &info) != 0) {
            if (const std::string module = module_path(info); !module.empty()) {
                frame.module_string = string_id(tid, module, out);
            }
            frame.offset = ip - reinterpret_cast<uint64_t>(info.dli_fbase);
            if (info.dli_sname != nullptr) frame.symbol_string = string_id(tid, demangle(info.dli_sname), out);
        }
        out(&frame, sizeof frame);
    }
    pending_.clear();
}

void Symbolizer::reset() {
    seen_.clear();
    pending_.clear();
    emitted_strings_.clear();
}

}  // namespace tbdprof::collector
