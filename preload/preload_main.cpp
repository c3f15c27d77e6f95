// Entry and exit of libtbdprof_preload.so. Without TBDPROF_RUN_DIR nothing is set up and every hook is
// a plain pass-through to the real function.
#include <dlfcn.h>

#include <cstdint>

#include "hook_registry.h"
#include "kernel_catalog.h"
#include "tbdprof/collector/recorder.h"
#include "tbdprof/collector/session.h"
#include "tbdprof/collector/stack_capture.h"
#include "tbdprof/collector/symbol_lookup.h"
#include "tbdprof/collector/user_messages.h"

namespace tbdprof::preload {
namespace {

__attribute__((constructor)) void preload_start() {
    resolve_real_dl_functions();
    collector::set_symbol_lookup(&real_dlsym);
    const collector::CodeRange own = collector::code_range_of(reinterpret_cast<const void*>(&preload_start));
    collector::initialize_from_environment(own.low, own.high);
}

__attribute__((destructor)) void preload_finish() {
    collector::finish_in_destructor();
    if (const uint64_t misses = kernel_catalog_misses(); misses > 0 && collector::collector_enabled())
        collector::tell_user("note: the kernel catalog was full: %llu launches described their kernel again",
                             static_cast<unsigned long long>(misses));
}

}  // namespace
}  // namespace tbdprof::preload
