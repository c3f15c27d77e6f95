#include "input_file.h"

#include "tbdprof/interop/interop_error.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace tbdprof::interop {
namespace {

constexpr size_t kChunk = 1 << 20;

std::string megabytes(uint64_t bytes) {
    if (bytes < 1000000) return std::to_string(bytes) + " bytes";
    char text[32];
    std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / 1e6);
    return text;
}

// An open input: a regular file (size known) or a stream (a FIFO, a pipe, stdin; size unknown).
struct Input {
    std::string path;
    int fd = -1;
    bool regular = false;
    uint64_t size = 0;
    bool own_fd = true;
    ~Input() {
        if (own_fd && fd >= 0) ::close(fd);
    }
};

// A FIFO in the file system that no program writes to would block the open, then the read, for
// ever: wait at most TBDPROF_IMPORT_WAIT_SECONDS (60) for its first byte, saying so on a terminal.
void wait_for_writer(const Input& in) {
    const char* env = std::getenv("TBDPROF_IMPORT_WAIT_SECONDS");
    const long limit_s = env && std::atol(env) > 0 ? std::atol(env) : 60;
    pollfd waiting{in.fd, POLLIN, 0};
    for (long waited_s = 0;;) {
        const int ready = ::poll(&waiting, 1, 1000);
        if (ready > 0) break;
        if (ready < 0 && errno == EINTR) continue;
        if (ready < 0) throw InteropError(in.path + ": cannot wait for data: " + std::strerror(errno));
        if (++waited_s == 1 && ::isatty(STDERR_FILENO))
            std::fprintf(stderr, "tbdprof import: waiting for a program to write to the FIFO %s (at most %ld s)\n",
                         in.path.c_str(), limit_s);
        if (waited_s >= limit_s)
            throw InteropError(in.path + ": nothing was written to this FIFO within " + std::to_string(limit_s) +
                               " s (start the program that writes it first, or pipe it: ... | tbdprof import -)");
    }
    ::fcntl(in.fd, F_SETFL, ::fcntl(in.fd, F_GETFL) & ~O_NONBLOCK);
}

void open_input(const std::string& path, Input& in) {
    in.path = path;
    if (path == "-") {
        in.fd = STDIN_FILENO;
        in.own_fd = false;
    } else {
        // O_NONBLOCK: opening a FIFO without a writer would block here (cleared below).
        in.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (in.fd < 0) throw InteropError(path + ": cannot open: " + std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(in.fd, &st) != 0) throw InteropError(path + ": cannot read: " + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) throw InteropError(path + ": is a directory, not a trace file");
    in.regular = S_ISREG(st.st_mode);
    in.size = in.regular ? static_cast<uint64_t>(st.st_size) : 0;
    if (in.regular && in.size == 0) throw InteropError(path + ": empty file");
    struct stat named {};
    if (path != "-" && ::lstat(path.c_str(), &named) == 0 && S_ISFIFO(named.st_mode)) {
        wait_for_writer(in);
    } else if (in.own_fd) {
        ::fcntl(in.fd, F_SETFL, ::fcntl(in.fd, F_GETFL) & ~O_NONBLOCK);  // a pipe: its writer's pace
    }
}

// Up to `n` bytes; 0 at the end of the input.
size_t read_some(const Input& in, void* into, size_t n) {
    for (;;) {
        const ssize_t got = ::read(in.fd, into, n);
        if (got >= 0) return static_cast<size_t>(got);
        if (errno != EINTR) throw InteropError(in.path + ": read error: " + std::strerror(errno));
    }
}

uint64_t json_cap(const InputLimits& limits) {
    return limits.max_json_bytes ? std::min(limits.max_json_bytes, kMaxJsonBytes) : kMaxJsonBytes;
}

[[noreturn]] void over_cap(const std::string& path, uint64_t cap, const InputLimits& limits) {
    if (limits.max_json_bytes)
        throw InteropError(path + ": holds more than " + megabytes(cap) + " of JSON (the --max-json-size given)");
    throw InteropError(path + ": holds more than " + megabytes(cap) +
                       " of JSON, more than tbdprof import reads (its JSON parser takes at most 4 GiB - 1)");
}

// Decompresses gzip (or zlib) as it arrives, under the caps of InputLimits.
class Gunzip {
public:
    Gunzip(const Input& in, const InputLimits& limits) : in_(in), limits_(limits), cap_(json_cap(limits)) {
        // 15 + 32: zlib or gzip header, detected automatically.
        if (inflateInit2(&stream_, 15 + 32) != Z_OK) throw InteropError(in.path + ": cannot start gzip decompression");
        out_.reserve(static_cast<size_t>(std::min<uint64_t>(in.size * 8, std::min<uint64_t>(cap_, 1ull << 30))));
    }
    Gunzip(const Gunzip&) = delete;
    Gunzip& operator=(const Gunzip&) = delete;
    ~Gunzip() { inflateEnd(&stream_); }

    void feed(const unsigned char* data, size_t n) {
        compressed_ += n;
        stream_.next_in = const_cast<unsigned char*>(data);
        stream_.avail_in = static_cast<uInt>(n);
        while (stream_.avail_in > 0) {
            if (at_member_end_) {
                // Concatenated gzip members (allowed by RFC 1952): keep going with the next one.
                inflateReset(&stream_);
                at_member_end_ = false;
            }
            if (out_.capacity() - out_.size() < kChunk) out_.reserve(out_.capacity() * 2 + kChunk);
            const size_t before = out_.size();
            out_.resize(before + kChunk);
            stream_.next_out = reinterpret_cast<unsigned char*>(out_.data() + before);
            stream_.avail_out = static_cast<uInt>(kChunk);
            const int rc = inflate(&stream_, Z_NO_FLUSH);
            out_.resize(before + (kChunk - stream_.avail_out));
            if (rc == Z_STREAM_END) {
                at_member_end_ = true;
            } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
                throw InteropError(in_.path + ": corrupt gzip data (" + (stream_.msg ? stream_.msg : "inflate failed") +
                                   ") after " + std::to_string(out_.size()) + " decompressed bytes");
            }
            check_caps();
        }
    }

    std::vector<char> finish() {
        if (!at_member_end_) {
            throw InteropError(in_.path + ": truncated gzip file (the compressed stream ends early, after " +
                               std::to_string(out_.size()) + " decompressed bytes)");
        }
        if (out_.empty()) throw InteropError(in_.path + ": the gzip stream holds no data");
        return std::move(out_);
    }

private:
    void check_caps() const {
        if (out_.size() > cap_) over_cap(in_.path, cap_, limits_);
        if (limits_.max_json_bytes == 0 && out_.size() > kMaxGzipRatio * compressed_ + kGzipAllowanceBytes) {
            throw InteropError(in_.path + ": its gzip stream expands more than " + std::to_string(kMaxGzipRatio) +
                               " times (over " + megabytes(out_.size()) + " from " + megabytes(compressed_) +
                               "), far beyond what a trace compresses to: not imported (a decompression bomb?); "
                               "a real trace this compressible is read with --max-json-size SIZE");
        }
    }

    const Input& in_;
    const InputLimits& limits_;
    const uint64_t cap_;
    z_stream stream_{};
    std::vector<char> out_;
    uint64_t compressed_ = 0;
    bool at_member_end_ = false;
};

// The rest of a plain regular file after its first `got` bytes, straight into the padded buffer.
simdjson::padded_string read_regular(const Input& in, const std::vector<unsigned char>& first, size_t got,
                                     const ReadProgress& progress, const InputLimits& limits) {
    if (in.size > json_cap(limits)) over_cap(in.path, json_cap(limits), limits);
    simdjson::padded_string data(static_cast<size_t>(in.size));
    size_t done = std::min(got, static_cast<size_t>(in.size));
    std::memcpy(data.data(), first.data(), done);
    while (done < in.size) {
        const size_t n = read_some(in, data.data() + done, std::min(kChunk, static_cast<size_t>(in.size) - done));
        if (n == 0) throw InteropError(in.path + ": read error: the file got shorter while it was read");
        done += n;
        if (progress) progress(done, in.size);
    }
    return data;
}

}  // namespace

simdjson::padded_string read_json_input(const std::string& path, const ReadProgress& progress,
                                        const InputLimits& limits) {
    Input in;
    open_input(path, in);
    std::vector<unsigned char> chunk(kChunk);
    size_t got = read_some(in, chunk.data(), chunk.size());
    if (got == 0) throw InteropError(path + (in.regular ? ": empty file" : ": empty (nothing came through the pipe)"));
    uint64_t done = got;
    if (progress) progress(done, in.size);
    const bool gzip = got >= 2 && chunk[0] == 0x1f && chunk[1] == 0x8b;
    if (!gzip && in.regular) return read_regular(in, chunk, got, progress, limits);
    if (gzip) {
        Gunzip gunzip(in, limits);
        done = 0;
        for (; got > 0; got = read_some(in, chunk.data(), chunk.size())) {
            gunzip.feed(chunk.data(), got);
            done += got;
            if (progress) progress(done, in.size);
        }
        const std::vector<char> data = gunzip.finish();
        return simdjson::padded_string(data.data(), data.size());
    }
    // Plain JSON from a pipe: gathered, under the same cap, then copied into the padded buffer.
    std::vector<char> data;
    const uint64_t cap = json_cap(limits);
    for (; got > 0; got = read_some(in, chunk.data(), chunk.size())) {
        if (data.size() + got > cap) over_cap(path, cap, limits);
        data.insert(data.end(), chunk.begin(), chunk.begin() + static_cast<std::ptrdiff_t>(got));
        if (progress) progress(data.size(), 0);
    }
    return simdjson::padded_string(data.data(), data.size());
}

}  // namespace tbdprof::interop
