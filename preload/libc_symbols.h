// The real dlsym and dlvsym, found without calling either: we export both, so any dynamic lookup of
// them from this library would find our own hooks. libc.so.6's dynamic symbol table is read directly
// (GNU hash table + version table), choosing each symbol's default version.
#pragma once

#include <dlfcn.h>

namespace tbdprof::preload {

using DlsymFn = void* (*)(void*, const char*);
using DlvsymFn = void* (*)(void*, const char*, const char*);

// Null when libc could not be read (then the hooks pass nothing through: see dl_hooks.cpp).
DlsymFn libc_dlsym();
DlvsymFn libc_dlvsym();

// The next definition of a libc function after this library's own hook (null when none is found).
template <class Fn>
Fn next_libc(const char* name) {
    const auto real_dlsym = libc_dlsym();
    return real_dlsym ? reinterpret_cast<Fn>(real_dlsym(RTLD_NEXT, name)) : nullptr;
}

}  // namespace tbdprof::preload
