// Turns the generated export tables (simgpu/stubs/<library>.inc, scripts/gen_simgpu_stubs.py) into
// functions, so that a program linked against a library we do not (fully) model loads and gets the
// documented "not supported" status instead of a missing-symbol error. Every stub is weak: a
// modelled function of the same name elsewhere in the library wins at link time. The stubs take no
// parameters on purpose: in the x86-64 and AArch64 C ABIs the caller owns its arguments, so a stub
// that ignores them is safe whatever the real signature is. Each stub names itself once
// (simgpu/not_modelled.h): a program that fails on a hole is told which one.
// Include after defining TBDSIM_NOT_SUPPORTED (the library's status value) and
// TBDSIM_NOT_SUPPORTED_NAME (its name, as the header spells it), in a file that includes no library
// header.
#pragma once

#include <simgpu/not_modelled.h>

#define TBDSIM_STUB_ATTRIBUTES extern "C" __attribute__((weak, visibility("default")))
#define TBDSIM_STUB_STATUS(name)                               \
    TBDSIM_STUB_ATTRIBUTES int name() {                        \
        tbdsim_not_modelled(#name, TBDSIM_NOT_SUPPORTED_NAME); \
        return TBDSIM_NOT_SUPPORTED;                           \
    }
#define TBDSIM_STUB_STRING(name)                          \
    TBDSIM_STUB_ATTRIBUTES const char* name() {           \
        tbdsim_not_modelled(#name, "a placeholder text"); \
        return "not supported by the simulated GPU";      \
    }
#define TBDSIM_STUB_POINTER(name)           \
    TBDSIM_STUB_ATTRIBUTES void* name() {   \
        tbdsim_not_modelled(#name, "NULL"); \
        return nullptr;                     \
    }
#define TBDSIM_STUB_VALUE(name)          \
    TBDSIM_STUB_ATTRIBUTES long name() { \
        tbdsim_not_modelled(#name, "0"); \
        return 0;                        \
    }
#define TBDSIM_STUB_VOID(name)                 \
    TBDSIM_STUB_ATTRIBUTES void name() {       \
        tbdsim_not_modelled(#name, "nothing"); \
    }
