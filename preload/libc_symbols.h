// The real dlsym and dlvsym, found without calling either: we export both, so any dynamic lookup of
// them from this library would find our own hooks. libc.so.6's dynamic symbol table is read directly
// (GNU hash table + version table), choosing each symbol's default version.
#pragma once

namespace tbdprof::preload {

using DlsymFn = void* (*)(void*, const char*);
using DlvsymFn = void* (*)(void*, const char*, const char*);

// Null when libc could not be read (then the hooks pass nothing through: see dl_hooks.cpp).
DlsymFn libc_dlsym();
DlvsymFn libc_dlvsym();

}  // namespace tbdprof::preload
