// The C++ side of the dlsym/dlvsym hooks (the entry points are in dl_hooks_x86_64.S). A lookup on a
// real handle is done by the real function first; then, when the result is one of the driver or
// cuBLAS functions we record, the caller gets our wrapper instead. This is how cuBLAS, cuDNN and
// NCCL (dlopen + dlsym of cuGetProcAddress on libcuda) and TensorFlow-style users (dlsym of cuBLAS
// entry points) reach our hooks. Names are matched exactly, never by prefix.
#include <dlfcn.h>

#include "hook_registry.h"
#include "libc_symbols.h"
#include "tbdprof/collector/recorder.h"

using tbdprof::preload::DlsymFn;
using tbdprof::preload::DlvsymFn;

extern "C" {
// Read by the assembly stubs; set in the library constructor.
__attribute__((visibility("hidden"))) DlsymFn tbdprof_real_dlsym = nullptr;
__attribute__((visibility("hidden"))) DlvsymFn tbdprof_real_dlvsym = nullptr;

__attribute__((visibility("hidden"))) void* tbdprof_dlsym_hook(void* handle, const char* name);
__attribute__((visibility("hidden"))) void* tbdprof_dlvsym_hook(void* handle, const char* name, const char* version);
}

namespace tbdprof::preload {

void resolve_real_dl_functions() {
    if (tbdprof_real_dlsym == nullptr) tbdprof_real_dlsym = libc_dlsym();
    if (tbdprof_real_dlvsym == nullptr) tbdprof_real_dlvsym = libc_dlvsym();
}

void* real_dlsym(void* handle, const char* name) {
    if (tbdprof_real_dlsym == nullptr) resolve_real_dl_functions();
    return tbdprof_real_dlsym != nullptr ? tbdprof_real_dlsym(handle, name) : nullptr;
}

}  // namespace tbdprof::preload

extern "C" void* tbdprof_dlsym_hook(void* handle, const char* name) {
    void* result = tbdprof::preload::real_dlsym(handle, name);
    if (result == nullptr || name == nullptr || !tbdprof::collector::collector_enabled()) return result;
    return tbdprof::preload::substitute_looked_up_symbol(name, result);
}

extern "C" void* tbdprof_dlvsym_hook(void* handle, const char* name, const char* version) {
    if (tbdprof_real_dlvsym == nullptr) tbdprof::preload::resolve_real_dl_functions();
    if (tbdprof_real_dlvsym == nullptr) return nullptr;
    void* result = tbdprof_real_dlvsym(handle, name, version);
    if (result == nullptr || name == nullptr || !tbdprof::collector::collector_enabled()) return result;
    return tbdprof::preload::substitute_looked_up_symbol(name, result);
}
