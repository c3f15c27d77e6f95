// What the launch hook needs to know about a kernel, computed once per CUfunction and kept in a fixed
// lock-free table: the interned mangled name, the parameter layout (cuFuncGetParamInfo, iterated until
// it fails) and which parameters are pointers to const (from the mangled name).
#pragma once

#include <cuda.h>

#include <cstdint>

#include "tbdprof/collector/recorder.h"

namespace tbdprof::preload {

struct KernelInfo {
    static constexpr int kMaxParams = 128;
    uint64_t name_string = 0;
    uint64_t const_mask = 0;  // bit i: parameter i is a pointer to const
    uint16_t param_count = 0;  // parameters with a known layout (at most kMaxParams)
    bool layout_known = false;
    uint16_t offsets[kMaxParams] = {};
    uint16_t sizes[kMaxParams] = {};
};

// The info of `function`: from the table, or computed into a per-thread scratch copy (another thread
// is still filling the entry in, or the table is full). Valid until this thread's next call.
const KernelInfo& kernel_info(collector::ThreadState& ts, CUfunction function);

}  // namespace tbdprof::preload
