#include "tbdprof/collector/symbol_lookup.h"

#include <dlfcn.h>

namespace tbdprof::collector {

namespace {
SymbolLookup g_lookup = nullptr;
}

void set_symbol_lookup(SymbolLookup lookup) { g_lookup = lookup; }

void* lookup_symbol(void* handle, const char* name) {
    return g_lookup != nullptr ? g_lookup(handle, name) : dlsym(handle, name);
}

}  // namespace tbdprof::collector
