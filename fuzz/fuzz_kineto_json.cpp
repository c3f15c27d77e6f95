// libFuzzer target: the PyTorch profiler (Kineto) / Chrome trace JSON parser of `tbdprof import`, and
// the memory-timeline parser it chooses between, read as a stream (chrome_stream.h) like an import
// reads a file. Any bytes must end in a parsed trace or InteropError.
#include "chrome_stream.h"
#include "foreign_trace.h"
#include "json_window.h"

#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    tbdprof::interop::MemorySource source(std::string_view(reinterpret_cast<const char*>(data), size));
    tbdprof::interop::ForeignTrace trace;
    try {
        tbdprof::interop::parse_trace_stream(source, trace);
    } catch (const std::exception&) {
        // refused with a message: fine
    }
    return 0;
}
