#include "sample_traces.h"

namespace tbdprof::interop::test {

std::string current_layout_trace() {
    return R"json({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "Tesla V100-SXM2-32GB", "totalGlobalMem": 34089730048,
                        "computeMajor": 7, "computeMinor": 0, "numSms": 80, "warpSize": 32}],
  "distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8},
  "traceName": "sample",
  "traceEvents": [
  {"ph": "M", "name": "process_name", "pid": 100, "tid": 0, "args": {"name": "python3 train.py"}},
  {"ph": "M", "name": "process_name", "pid": 0, "tid": 0, "args": {"name": "python3 train.py"}},
  {"ph": "M", "name": "process_labels", "pid": 0, "tid": 0, "args": {"labels": "GPU 0"}},
  {"ph": "M", "name": "thread_name", "pid": 100, "tid": 100, "args": {"name": "thread 100 (python3)"}},
  {"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": "Spans", "tid": "PyTorch Profiler", "ts": 1000000, "dur": 1000},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#7", "pid": 100, "tid": 100, "ts": 1000010, "dur": 400},
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#8", "pid": 100, "tid": 100, "ts": 1000410, "dur": 400},
  {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 100, "tid": 100, "ts": 1000020, "dur": 30, "args": {"External id": 1}},
  {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 100, "tid": 101, "ts": 1000060, "dur": 10.5},
  {"ph": "X", "cat": "user_annotation", "name": "forward", "pid": 100, "tid": 100, "ts": 1000015, "dur": 100},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 100, "ts": 1000025.250, "dur": 5, "args": {"correlation": 11, "cbid": 211}},
  {"ph": "X", "cat": "kernel", "name": "volta_sgemm_128x64_nn", "pid": 0, "tid": 7, "ts": 1000040.125, "dur": 20.5,
   "args": {"device": 0, "context": 1, "stream": 7, "correlation": 11, "grid": [64, 2, 1], "block": [256, 1, 1], "shared memory": 4096}},
  {"ph": "s", "id": 11, "pid": 100, "tid": 100, "ts": 1000025.250, "cat": "ac2g", "name": "ac2g"},
  {"ph": "f", "id": 11, "pid": 0, "tid": 7, "ts": 1000040.125, "cat": "ac2g", "name": "ac2g", "bp": "e"},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 101, "ts": 1000061, "dur": 4, "args": {"correlation": 12}},
  {"ph": "X", "cat": "kernel", "name": "add_kernel", "pid": 0, "tid": 7, "ts": 1000070, "dur": 3,
   "args": {"device": 0, "stream": 7, "correlation": 12, "grid": [8, 1, 1], "block": [128, 1, 1], "shared memory": 0}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 100, "tid": 100, "ts": 1000100, "dur": 4, "args": {"correlation": 13}},
  {"ph": "X", "cat": "kernel", "name": "ncclKernel_AllReduce_RING_LL_Sum_float", "pid": 0, "tid": 20, "ts": 1000110, "dur": 50,
   "args": {"device": 0, "stream": 20, "correlation": 13, "grid": [2, 1, 1], "block": [512, 1, 1]}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 100, "tid": 100, "ts": 1000200, "dur": 6, "args": {"correlation": 14}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": 7, "ts": 1000210, "dur": 2,
   "args": {"device": 0, "stream": 7, "correlation": 14, "bytes": 4096}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemsetAsync", "pid": 100, "tid": 100, "ts": 1000220, "dur": 3, "args": {"correlation": 15}},
  {"ph": "X", "cat": "gpu_memset", "name": "Memset (Device)", "pid": 0, "tid": 7, "ts": 1000230, "dur": 1,
   "args": {"device": 0, "stream": 7, "correlation": 15, "bytes": 256}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 100, "tid": 100, "ts": 1000240, "dur": 30, "args": {"correlation": 16}},
  {"ph": "X", "cat": "gpu_user_annotation", "name": "forward", "pid": 0, "tid": 7, "ts": 1000040, "dur": 40},
  {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 100, "tid": 100, "ts": 1000021,
   "args": {"Device Type": 1, "Device Id": 0, "Addr": 139900000000000, "Bytes": 1048576, "Total Allocated": 1056768, "Total Reserved": 2097152}},
  {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 100, "tid": 100, "ts": 1000022,
   "args": {"Device Type": 1, "Device Id": 0, "Addr": 139900001048576, "Bytes": 512, "Total Allocated": 1057280, "Total Reserved": 2097152}},
  {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 100, "tid": 100, "ts": 1000300,
   "args": {"Device Type": 1, "Device Id": 0, "Addr": 139900000000000, "Bytes": -1048576, "Total Allocated": 8704, "Total Reserved": 2097152}},
  {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 100, "tid": 101, "ts": 1000310,
   "args": {"Device Type": 1, "Device Id": 0, "Addr": 139800000000000, "Bytes": -8192, "Total Allocated": 512, "Total Reserved": 2097152}},
  {"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": 100, "tid": 100, "ts": 1000023,
   "args": {"Device Type": 0, "Device Id": -1, "Addr": 94000000, "Bytes": 64}},
  {"ph": "X", "cat": "some_future_category", "name": "mystery", "pid": 100, "tid": 100, "ts": 1000050, "dur": 1}
  ]
})json";
}

std::string layout_2021_trace() {
    return R"json({
  "schemaVersion": 1,
  "deviceProperties": [{"id": 0, "name": "Tesla V100-DGXS-32GB", "totalGlobalMem": 34084028416, "computeMajor": 7, "computeMinor": 0, "numSms": 80}],
  "traceEvents": [
  {"name": "process_name", "ph": "M", "ts": 5000000, "pid": 555, "tid": 0, "args": {"name": "python"}},
  {"name": "thread_name", "ph": "M", "ts": 5000000, "pid": 555, "tid": "555", "args": {"name": "thread 555 (python)"}},
  {"ph": "X", "cat": "Operator", "name": "ProfilerStep#1", "pid": 555, "tid": "555", "ts": 5000000, "dur": 500, "args": {"External id": 1}},
  {"ph": "X", "cat": "Operator", "name": "aten::conv2d", "pid": 555, "tid": "555", "ts": 5000010, "dur": 100, "args": {"External id": 2}},
  {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 555, "tid": "555", "ts": 5000020, "dur": 5, "args": {"cbid": 211, "correlation": 41, "external id": 2}},
  {"ph": "X", "cat": "Kernel", "name": "implicit_convolve_sgemm", "pid": 0, "tid": "stream 7", "ts": 5000030, "dur": 40,
   "args": {"queued": 0, "device": 0, "context": 1, "stream": 7, "correlation": 41, "external id": 2, "grid": [4, 4, 2], "block": [32, 8, 1], "shared memory": 1024}},
  {"ph": "X", "cat": "Runtime", "name": "cudaLaunchKernel", "pid": 555, "tid": "555", "ts": 5000030, "dur": 5, "args": {"correlation": 42}},
  {"ph": "X", "cat": "Kernel", "name": "relu_kernel", "pid": 0, "tid": "stream 7", "ts": 5000075, "dur": 5,
   "args": {"device": 0, "stream": 7, "correlation": 42, "grid": [16, 1, 1], "block": [256, 1, 1], "shared memory": 0}},
  {"ph": "X", "cat": "Runtime", "name": "cudaMemcpyAsync", "pid": 555, "tid": "555", "ts": 5000200, "dur": 30, "args": {"correlation": 43}},
  {"ph": "X", "cat": "Memcpy", "name": "Memcpy HtoD (Pageable -> Device)", "pid": 0, "tid": "stream 7", "ts": 5000210, "dur": 12,
   "args": {"device": 0, "stream": 7, "correlation": 43, "bytes": 65536}},
  {"ph": "X", "cat": "Runtime", "name": "cudaMemsetAsync", "pid": 555, "tid": "555", "ts": 5000240, "dur": 3, "args": {"correlation": 44}},
  {"ph": "X", "cat": "Memset", "name": "Memset (Device)", "pid": 0, "tid": "stream 7", "ts": 5000250, "dur": 1,
   "args": {"device": 0, "stream": 7, "correlation": 44, "bytes": 128}},
  {"ph": "s", "id": 41, "pid": 555, "tid": 555, "ts": 5000020, "cat": "async", "name": "launch"},
  {"ph": "f", "id": 41, "pid": 0, "tid": "stream 7", "ts": 5000030, "cat": "async", "name": "launch", "bp": "e"},
  {"ph": "i", "s": "t", "name": "[memory]", "pid": 555, "tid": 555, "ts": 5000011, "args": {"Device Type": 1, "Device Id": 0, "Bytes": 1024}},
  {"ph": "i", "s": "t", "name": "[memory]", "pid": 555, "tid": 555, "ts": 5000012, "args": {"Device Type": 1, "Device Id": 0, "Bytes": 2048}},
  {"ph": "i", "s": "t", "name": "[memory]", "pid": 555, "tid": 555, "ts": 5000300, "args": {"Device Type": 1, "Device Id": 0, "Bytes": -1024}},
  {"ph": "i", "s": "t", "name": "[memory]", "pid": 555, "tid": 555, "ts": 5000013, "args": {"Device Type": 0, "Device Id": -1, "Bytes": 4}}
  ]
})json";
}

}  // namespace tbdprof::interop::test
