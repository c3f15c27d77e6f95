// Small hand-written traces in both Kineto layouts, with what each holds spelled out, for tests that
// need exact expectations.
#pragma once

#include <string>

namespace tbdprof::interop::test {

// Current layout (torch >= 1.10): one process (pid 100, threads 100 and 101), one device (0) with
// streams 7 and 20. Holds: 3 kernels (2 launched by cudaLaunchKernel with correlations 11 and 12, one
// NCCL kernel on stream 20 with correlation 13), 1 HtoD copy of 4096 bytes (correlation 14), 1 memset
// of 256 bytes (correlation 15), 1 cudaStreamSynchronize, 2 ProfilerStep ranges, 2 cpu_ops, 1 user
// annotation, 1 gpu_user_annotation, 4 [memory] events with addresses (2 allocs, 1 free of the first,
// 1 free of a block allocated before the trace), 1 CPU [memory] event, flows, metadata, and one event
// of an unknown category. Times in microseconds from 1000000.
std::string current_layout_trace();

// The 2021 layout: capitalised categories, string tids, "external id", memory without addresses.
// Holds 2 kernels, 1 Memcpy HtoD, 1 Memset, 4 Runtime calls (2 launches, 1 cudaMemcpyAsync,
// 1 cudaMemsetAsync), 1 ProfilerStep#1 Operator, 1 aten::conv2d Operator, GPU memory +1024, +2048,
// -1024, and one CPU memory event.
std::string layout_2021_trace();

}  // namespace tbdprof::interop::test
