// NVTX: the collector as an NVTX injection library. nvtx3 is header-only; every shared object that
// uses it keeps its own function table and, at its first NVTX call, dlopens the library named in
// NVTX_INJECTION64_PATH (tbdprof sets it to this library, which is also in LD_PRELOAD, so the loader
// hands back the copy already loaded) and calls its exported InitializeInjectionNvtx2 with that
// object's export-table getter. We write our functions into the table's slots; NVTX makes every
// slot we leave alone a no-op. (Layout: nvtx3/nvtxDetail/nvtxTypes.h and nvtxImpl.h.)
//
// Recorded: push/pop ranges (nvtxRangePushA/W/Ex, nvtxDomainRangePushEx, and their pops),
// start/end ranges (nvtxRangeStartA/W/Ex, nvtxDomainRangeStartEx, nvtxRangeEnd, nvtxDomainRangeEnd),
// marks, domains and registered strings. A domain handle and a registered-string handle are the
// RawString id of their text, so no table is needed to map them back. Everything else (categories,
// thread and resource names, payloads, colours) is left to NVTX's no-ops.
#define NVTX_NO_IMPL  // types only: the tool side
#include <nvtx3/nvToolsExt.h>

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>

#include "tbdprof/collector/capture_gate.h"
#include "tbdprof/collector/range_recorder.h"
#include "tbdprof/collector/recorder.h"

#include "nvtx_text.h"

#define TBD_VISIBLE __attribute__((visibility("default")))

namespace tbdprof::preload {

namespace nvtx {

// wchar_t is UTF-32 on Linux.
size_t utf8_of_wide(const wchar_t* text, NameBuffer& buffer) {
    size_t n = 0;
    for (; *text != 0 && n < kMaxNameBytes; ++text) {
        auto c = static_cast<uint32_t>(*text);
        if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) c = 0xFFFD;
        if (c < 0x80) {
            buffer[n++] = static_cast<char>(c);
        } else if (c < 0x800) {
            buffer[n++] = static_cast<char>(0xC0 | (c >> 6));
            buffer[n++] = static_cast<char>(0x80 | (c & 0x3F));
        } else if (c < 0x10000) {
            buffer[n++] = static_cast<char>(0xE0 | (c >> 12));
            buffer[n++] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            buffer[n++] = static_cast<char>(0x80 | (c & 0x3F));
        } else {
            buffer[n++] = static_cast<char>(0xF0 | (c >> 18));
            buffer[n++] = static_cast<char>(0x80 | ((c >> 12) & 0x3F));
            buffer[n++] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
            buffer[n++] = static_cast<char>(0x80 | (c & 0x3F));
        }
    }
    return n;
}

}  // namespace nvtx

namespace {

namespace ranges = collector::ranges;
using collector::ThreadState;

uint64_t handle_id(const void* handle) { return reinterpret_cast<uintptr_t>(handle); }

// A string id is a 64-bit hash; 0 means "none" in RawRange, so a text hashing to 0 (never seen in
// practice) would read as unnamed. Handles must not be null either: NVTX treats null as failure.
uint64_t intern(std::string_view text) {
    ThreadState& thread = collector::thread_state();
    const uint64_t id = collector::intern_string(thread, text);
    collector::capture::classify_range_name(id, text);  // --steps: is it a step range? (cheap when unused)
    return id;
}

uint64_t intern_ascii(const char* text) { return text == nullptr ? 0 : intern(std::string_view(text)); }

uint64_t intern_wide(const wchar_t* text) {
    if (text == nullptr) return 0;
    nvtx::NameBuffer buffer;
    return intern(std::string_view(buffer, nvtx::utf8_of_wide(text, buffer)));
}

// The message of an event-attributes structure. Older, shorter structures stop before `message`.
uint64_t message_id(const nvtxEventAttributes_t* attributes) {
    if (attributes == nullptr) return 0;
    constexpr size_t kMessageEnd = offsetof(nvtxEventAttributes_t, message) + sizeof(nvtxMessageValue_t);
    if (attributes->size != 0 && attributes->size < kMessageEnd) return 0;
    switch (attributes->messageType) {
        case NVTX_MESSAGE_TYPE_ASCII: return intern_ascii(attributes->message.ascii);
        case NVTX_MESSAGE_TYPE_UNICODE: return intern_wide(attributes->message.unicode);
        case NVTX_MESSAGE_TYPE_REGISTERED: return handle_id(attributes->message.registered);
        default: return 0;
    }
}

// ---- Core module -------------------------------------------------------------------------------

void mark_a(const char* message) { ranges::mark(intern_ascii(message), 0); }
void mark_w(const wchar_t* message) { ranges::mark(intern_wide(message), 0); }
void mark_ex(const nvtxEventAttributes_t* attributes) { ranges::mark(message_id(attributes), 0); }

nvtxRangeId_t range_start_a(const char* message) { return ranges::start(intern_ascii(message), 0); }
nvtxRangeId_t range_start_w(const wchar_t* message) { return ranges::start(intern_wide(message), 0); }
nvtxRangeId_t range_start_ex(const nvtxEventAttributes_t* attributes) {
    return ranges::start(message_id(attributes), 0);
}
void range_end(nvtxRangeId_t id) { ranges::end(id); }

int range_push_a(const char* message) { return ranges::push(intern_ascii(message), 0); }
int range_push_w(const wchar_t* message) { return ranges::push(intern_wide(message), 0); }
int range_push_ex(const nvtxEventAttributes_t* attributes) { return ranges::push(message_id(attributes), 0); }
int range_pop() { return ranges::pop(0); }

// ---- Core2 module (domains) ----------------------------------------------------------------------

void domain_mark_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
    ranges::mark(message_id(attributes), handle_id(domain));
}
nvtxRangeId_t domain_range_start_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
    return ranges::start(message_id(attributes), handle_id(domain));
}
void domain_range_end(nvtxDomainHandle_t, nvtxRangeId_t id) { ranges::end(id); }
int domain_range_push_ex(nvtxDomainHandle_t domain, const nvtxEventAttributes_t* attributes) {
    return ranges::push(message_id(attributes), handle_id(domain));
}
int domain_range_pop(nvtxDomainHandle_t domain) { return ranges::pop(handle_id(domain)); }

nvtxDomainHandle_t domain_create_a(const char* name) {
    return reinterpret_cast<nvtxDomainHandle_t>(static_cast<uintptr_t>(intern_ascii(name)));
}
nvtxDomainHandle_t domain_create_w(const wchar_t* name) {
    return reinterpret_cast<nvtxDomainHandle_t>(static_cast<uintptr_t>(intern_wide(name)));
}
void domain_destroy(nvtxDomainHandle_t) {}

nvtxStringHandle_t register_string_a(nvtxDomainHandle_t, const char* text) {
    return reinterpret_cast<nvtxStringHandle_t>(static_cast<uintptr_t>(intern_ascii(text)));
}
nvtxStringHandle_t register_string_w(nvtxDomainHandle_t, const wchar_t* text) {
    return reinterpret_cast<nvtxStringHandle_t>(static_cast<uintptr_t>(intern_wide(text)));
}

// ---- Filling one module's table ------------------------------------------------------------------

struct Slot {
    unsigned id;
    NvtxFunctionPointer function;
};

template <typename F>
NvtxFunctionPointer as_slot(F* function) {
    return reinterpret_cast<NvtxFunctionPointer>(function);
}

// Writes each function into its slot. The table holds pointers to the module's function-pointer
// variables; `size` is the number of slots (ids 1..size-1 are valid, 0 is unused).
bool fill_module(const NvtxExportTableCallbacks& callbacks, NvtxCallbackModule module, const Slot* slots,
                 size_t count) {
    NvtxFunctionTable table = nullptr;
    unsigned int size = 0;
    if (callbacks.GetModuleFunctionTable(module, &table, &size) == 0 || table == nullptr) return false;
    for (size_t i = 0; i < count; ++i) {
        if (slots[i].id >= size || table[slots[i].id] == nullptr) continue;
        *table[slots[i].id] = slots[i].function;
    }
    return true;
}

bool attach(NvtxGetExportTableFunc_t get_export_table) {
    const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
    if (callbacks == nullptr || callbacks->struct_size < sizeof(NvtxExportTableCallbacks) ||
        callbacks->GetModuleFunctionTable == nullptr) {
        return false;
    }
    const Slot core[] = {
        {NVTX_CBID_CORE_MarkEx, as_slot(&mark_ex)},
        {NVTX_CBID_CORE_MarkA, as_slot(&mark_a)},
        {NVTX_CBID_CORE_MarkW, as_slot(&mark_w)},
        {NVTX_CBID_CORE_RangeStartEx, as_slot(&range_start_ex)},
        {NVTX_CBID_CORE_RangeStartA, as_slot(&range_start_a)},
        {NVTX_CBID_CORE_RangeStartW, as_slot(&range_start_w)},
        {NVTX_CBID_CORE_RangeEnd, as_slot(&range_end)},
        {NVTX_CBID_CORE_RangePushEx, as_slot(&range_push_ex)},
        {NVTX_CBID_CORE_RangePushA, as_slot(&range_push_a)},
        {NVTX_CBID_CORE_RangePushW, as_slot(&range_push_w)},
        {NVTX_CBID_CORE_RangePop, as_slot(&range_pop)},
    };
    const Slot core2[] = {
        {NVTX_CBID_CORE2_DomainMarkEx, as_slot(&domain_mark_ex)},
        {NVTX_CBID_CORE2_DomainRangeStartEx, as_slot(&domain_range_start_ex)},
        {NVTX_CBID_CORE2_DomainRangeEnd, as_slot(&domain_range_end)},
        {NVTX_CBID_CORE2_DomainRangePushEx, as_slot(&domain_range_push_ex)},
        {NVTX_CBID_CORE2_DomainRangePop, as_slot(&domain_range_pop)},
        {NVTX_CBID_CORE2_DomainRegisterStringA, as_slot(&register_string_a)},
        {NVTX_CBID_CORE2_DomainRegisterStringW, as_slot(&register_string_w)},
        {NVTX_CBID_CORE2_DomainCreateA, as_slot(&domain_create_a)},
        {NVTX_CBID_CORE2_DomainCreateW, as_slot(&domain_create_w)},
        {NVTX_CBID_CORE2_DomainDestroy, as_slot(&domain_destroy)},
    };
    if (!fill_module(*callbacks, NVTX_CB_MODULE_CORE, core, std::size(core))) return false;
    fill_module(*callbacks, NVTX_CB_MODULE_CORE2, core2, std::size(core2));  // absent in very old NVTX

    const auto* version = static_cast<const NvtxExportTableVersionInfo*>(get_export_table(NVTX_ETID_VERSIONINFO));
    if (version != nullptr && version->struct_size >= sizeof(NvtxExportTableVersionInfo) &&
        version->SetInjectionNvtxVersion != nullptr) {
        version->SetInjectionNvtxVersion(NVTX_VERSION);
    }
    return true;
}

}  // namespace
}  // namespace tbdprof::preload

// Called once per shared object that uses NVTX, from that object's first NVTX call (NVTX serializes
// the calls of one object; different objects may call concurrently). It only writes into the
// caller's own table and touches no shared state, so it is safe to call any number of times.
// Returning 0 tells NVTX to make every call of that object a no-op: we do that when not recording.
extern "C" TBD_VISIBLE int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
    using namespace tbdprof;
    if (get_export_table == nullptr || !collector::collector_enabled()) return 0;
    return preload::attach(get_export_table) ? 1 : 0;
}
