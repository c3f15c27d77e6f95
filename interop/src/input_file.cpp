#include "input_file.h"

#include "tbdprof/interop/interop_error.h"

#include <zlib.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

namespace tbdprof::interop {
namespace {

struct FileCloser {
    void operator()(FILE* file) const { std::fclose(file); }
};
using FilePtr = std::unique_ptr<FILE, FileCloser>;

constexpr size_t kChunk = 1 << 20;

// Grows `out` (a plain byte buffer) as decompressed data arrives; returns the decompressed size.
std::vector<char> gunzip(FILE* file, const std::string& path, uint64_t file_size, const ReadProgress& progress) {
    std::vector<char> out;
    out.reserve(static_cast<size_t>(file_size) * 8);
    std::vector<unsigned char> in(kChunk);
    z_stream stream{};
    // 15 + 32: zlib or gzip header, detected automatically.
    if (inflateInit2(&stream, 15 + 32) != Z_OK) throw InteropError(path + ": cannot start gzip decompression");
    struct Ender {
        z_stream* s;
        ~Ender() { inflateEnd(s); }
    } ender{&stream};
    uint64_t read_total = 0;
    int rc = Z_OK;
    bool at_member_end = false;
    for (;;) {
        const size_t got = std::fread(in.data(), 1, in.size(), file);
        if (got == 0) break;
        read_total += got;
        if (progress) progress(read_total, file_size);
        stream.next_in = in.data();
        stream.avail_in = static_cast<uInt>(got);
        while (stream.avail_in > 0) {
            if (at_member_end) {
                // Concatenated gzip members (allowed by RFC 1952): keep going with the next one.
                inflateReset(&stream);
                at_member_end = false;
            }
            if (out.capacity() - out.size() < kChunk) out.reserve(out.capacity() * 2 + kChunk);
            const size_t before = out.size();
            out.resize(before + kChunk);
            stream.next_out = reinterpret_cast<unsigned char*>(out.data() + before);
            stream.avail_out = static_cast<uInt>(kChunk);
            rc = inflate(&stream, Z_NO_FLUSH);
            out.resize(before + (kChunk - stream.avail_out));
            if (rc == Z_STREAM_END) {
                at_member_end = true;
            } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
                throw InteropError(path + ": corrupt gzip data (" + (stream.msg ? stream.msg : "inflate failed") +
                                   ") after " + std::to_string(out.size()) + " decompressed bytes");
            }
        }
    }
    if (std::ferror(file)) throw InteropError(path + ": read error: " + std::strerror(errno));
    if (!at_member_end) {
        throw InteropError(path + ": truncated gzip file (the compressed stream ends early, after " +
                           std::to_string(out.size()) + " decompressed bytes)");
    }
    return out;
}

}  // namespace

simdjson::padded_string read_json_input(const std::string& path, const ReadProgress& progress) {
    FilePtr file(std::fopen(path.c_str(), "rb"));
    if (!file) throw InteropError(path + ": cannot open: " + std::strerror(errno));
    std::fseek(file.get(), 0, SEEK_END);
    const long size = std::ftell(file.get());
    std::fseek(file.get(), 0, SEEK_SET);
    if (size <= 0) throw InteropError(path + ": empty file");
    unsigned char magic[2] = {0, 0};
    const size_t magic_got = std::fread(magic, 1, 2, file.get());
    std::fseek(file.get(), 0, SEEK_SET);
    if (magic_got == 2 && magic[0] == 0x1f && magic[1] == 0x8b) {
        std::vector<char> data = gunzip(file.get(), path, static_cast<uint64_t>(size), progress);
        if (data.empty()) throw InteropError(path + ": the gzip stream holds no data");
        return simdjson::padded_string(data.data(), data.size());
    }
    simdjson::padded_string data(static_cast<size_t>(size));
    size_t done = 0;
    while (done < static_cast<size_t>(size)) {
        const size_t got = std::fread(data.data() + done, 1, std::min(kChunk, static_cast<size_t>(size) - done), file.get());
        if (got == 0) throw InteropError(path + ": read error: " + std::strerror(errno));
        done += got;
        if (progress) progress(done, static_cast<uint64_t>(size));
    }
    return data;
}

}  // namespace tbdprof::interop
