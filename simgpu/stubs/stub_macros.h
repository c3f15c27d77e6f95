// Turns the generated export tables (simgpu/stubs/<library>.inc, scripts/gen_simgpu_stubs.py) into
// functions, so that a program linked against a library we do not (fully) model loads and gets the
// documented "not supported" status instead of a missing-symbol error. Every stub is weak: a
// modelled function of the same name elsewhere in the library wins at link time. The stubs take no
// parameters on purpose: in the x86-64 and AArch64 C ABIs the caller owns its arguments, so a stub
// that ignores them is safe whatever the real signature is. Include after defining
// TBDSIM_NOT_SUPPORTED (the library's status value), in a file that includes no library header.
#pragma once

#define TBDSIM_STUB_ATTRIBUTES extern "C" __attribute__((weak, visibility("default")))
#define TBDSIM_STUB_STATUS(name)        \
    TBDSIM_STUB_ATTRIBUTES int name() { \
        return TBDSIM_NOT_SUPPORTED;    \
    }
#define TBDSIM_STUB_STRING(name)                     \
    TBDSIM_STUB_ATTRIBUTES const char* name() {      \
        return "not supported by the simulated GPU"; \
    }
#define TBDSIM_STUB_POINTER(name)         \
    TBDSIM_STUB_ATTRIBUTES void* name() { \
        return nullptr;                   \
    }
#define TBDSIM_STUB_VALUE(name)          \
    TBDSIM_STUB_ATTRIBUTES long name() { \
        return 0;                        \
    }
#define TBDSIM_STUB_VOID(name) \
    TBDSIM_STUB_ATTRIBUTES void name() {}
