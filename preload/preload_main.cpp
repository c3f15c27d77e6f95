// Entry and exit of libtbdprof_preload.so. Without TBDPROF_RUN_DIR nothing is set up and every hook is
// a plain pass-through to the real function.
#include <dlfcn.h>
#include <link.h>

#include <cstdint>

#include "hook_registry.h"
#include "kernel_catalog.h"
#include "tbdprof/collector/recorder.h"
#include "tbdprof/collector/session.h"
#include "tbdprof/collector/symbol_lookup.h"
#include "tbdprof/collector/user_messages.h"

namespace tbdprof::preload {
namespace {

struct CodeRange {
    uintptr_t base;
    uint64_t low = 0, high = 0;
};

int find_own_range(dl_phdr_info* info, size_t, void* data) {
    auto* range = static_cast<CodeRange*>(data);
    if (info->dlpi_addr != range->base) return 0;
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const auto& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
        const uint64_t start = info->dlpi_addr + ph.p_vaddr;
        const uint64_t end = start + ph.p_memsz;
        if (range->low == 0 || start < range->low) range->low = start;
        if (end > range->high) range->high = end;
    }
    return 1;
}

__attribute__((constructor)) void preload_start() {
    resolve_real_dl_functions();
    collector::set_symbol_lookup(&real_dlsym);
    Dl_info self{};
    CodeRange range{};
    if (dladdr(reinterpret_cast<void*>(&preload_start), &self) != 0) {
        range.base = reinterpret_cast<uintptr_t>(self.dli_fbase);
        dl_iterate_phdr(find_own_range, &range);
    }
    collector::initialize_from_environment(range.low, range.high);
}

__attribute__((destructor)) void preload_finish() {
    collector::finish_in_destructor();
    if (const uint64_t misses = kernel_catalog_misses(); misses > 0 && collector::collector_enabled())
        collector::tell_user("note: the kernel catalog was full: %llu launches described their kernel again",
                             static_cast<unsigned long long>(misses));
}

}  // namespace
}  // namespace tbdprof::preload
