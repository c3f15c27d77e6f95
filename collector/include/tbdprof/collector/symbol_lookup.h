// How the collector looks up symbols in libraries it dlopens (CUPTI). The preload library hooks
// dlsym; it installs the real one here so the collector's own lookups bypass the hook.
#pragma once

namespace tbdprof::collector {

using SymbolLookup = void* (*)(void* handle, const char* name);

// Default: the dlsym the collector is linked against.
void set_symbol_lookup(SymbolLookup lookup);
void* lookup_symbol(void* handle, const char* name);

// Sets `out` to the library's function `name`; false when it lacks one.
template <typename Fn>
bool resolve(void* library, const char* name, Fn& out) {
    out = reinterpret_cast<Fn>(lookup_symbol(library, name));
    return out != nullptr;
}

}  // namespace tbdprof::collector
