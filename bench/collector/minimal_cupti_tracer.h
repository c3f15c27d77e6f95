// A minimal CUPTI kernel tracer inside the benchmark target, for the `cupti_alone` configuration:
// what any tool that records kernel times with CUPTI's Activity API pays per launch (CUPTI's own
// record keeping), without tbdprof. The difference between `cupti_on` and `cupti_alone` is then what
// tbdprof adds on top of plain CUPTI tracing.
#pragma once

// With TBD_BENCH_CUPTI_ALONE=1: loads libcupti.so.13, enables CONCURRENT_KERNEL records, and consumes
// delivered buffers the way a tool does (walks every record, reuses buffers). Returns false when
// CUPTI is not wanted or cannot be started (the caller then measures without it).
bool start_minimal_cupti_tracer();

// Flushes and reports how many kernel records were delivered ("cupti_alone kernels=N" on stderr).
void stop_minimal_cupti_tracer();
