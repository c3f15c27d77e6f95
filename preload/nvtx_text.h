// Text the NVTX injection receives: NVTX's wide strings are UTF-32 on Linux; the trace stores UTF-8.
// Shared by the core injection (nvtx_injection.cpp) and the memory extension's (nvtx_mem_injection.cpp).
#pragma once

#include <cstddef>

namespace tbdprof::preload::nvtx {

// Names are short; longer ones are cut at this many bytes of UTF-8.
inline constexpr size_t kMaxNameBytes = 508;
using NameBuffer = char[kMaxNameBytes + 4];

// Writes the UTF-8 of `text` (not NUL-terminated) into `buffer`; returns its length in bytes. Code
// points that are not Unicode scalar values become U+FFFD.
size_t utf8_of_wide(const wchar_t* text, NameBuffer& buffer);

}  // namespace tbdprof::preload::nvtx
