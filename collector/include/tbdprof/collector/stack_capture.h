// Allocation call stacks: captured with libunwind in the hook, deduplicated by hash in a fixed
// lock-free set; a stack seen for the first time is written once as a RawStack. Instruction
// pointers are symbolized later by the writer thread, never here.
#pragma once

#include <cstdint>

#include "tbdprof/collector/recorder.h"

namespace tbdprof::collector {

// Frames whose instruction pointer lies in [low, high) are the collector's own and are skipped.
void set_own_code_range(uint64_t low, uint64_t high);

// The addresses [low, high) that the executable segments of the loaded module holding `address`
// span; both 0 when no module holds it.
struct CodeRange {
    uint64_t low = 0, high = 0;
};
CodeRange code_range_of(const void* address);

// The id of the calling thread's current stack (TBDPROF_STACK_DEPTH frames, innermost first, the
// collector's own frames left out), emitting its RawStack the first time. 0 when stacks are off or
// the stack table is full (counted as a StackTableFull drop).
uint64_t capture_stack(ThreadState& thread);

// Same, from instruction pointers already captured (tests, and the hook after unwinding).
uint64_t record_stack(ThreadState& thread, const uint64_t* ips, uint32_t depth);

// Stacks that could not be recorded because the table was full.
uint64_t stack_table_full_count();

void reset_stack_table_after_fork();

}  // namespace tbdprof::collector
