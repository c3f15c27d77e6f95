// Reads a whole JSON input file into memory, decompressing gzip on the fly, padded as simdjson needs.
#pragma once

#include <simdjson.h>

#include <functional>
#include <string>

namespace tbdprof::interop {

// Called now and then with the bytes read from disk so far and the file's size.
using ReadProgress = std::function<void(uint64_t done, uint64_t total)>;

// Throws InteropError on a missing file, a truncated or corrupt gzip stream, or an empty file.
simdjson::padded_string read_json_input(const std::string& path, const ReadProgress& progress = {});

}  // namespace tbdprof::interop
