#include "input_file.h"

#include "tbdprof/interop/interop_error.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <isa-l/igzip_lib.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

namespace tbdprof::interop {
namespace {

constexpr size_t kChunk = 1 << 20;

std::string megabytes(uint64_t bytes) {
    if (bytes < 1000000) return std::to_string(bytes) + " bytes";
    return fmt::format("{:.1f} MB", static_cast<double>(bytes) / 1e6);
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
        if (ready < 0) throw InputError(in.path + ": cannot wait for data: " + std::strerror(errno));
        if (++waited_s == 1 && ::isatty(STDERR_FILENO))
            std::fprintf(stderr, "tbdprof import: waiting for a program to write to the FIFO %s (at most %ld s)\n",
                         in.path.c_str(), limit_s);
        if (waited_s >= limit_s)
            throw InputError(in.path + ": nothing was written to this FIFO within " + std::to_string(limit_s) +
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
        if (in.fd < 0) throw InputError(path + ": cannot open: " + std::strerror(errno));
    }
    struct stat st {};
    if (::fstat(in.fd, &st) != 0) throw InputError(path + ": cannot read: " + std::strerror(errno));
    if (S_ISDIR(st.st_mode)) throw InputError(path + ": is a directory, not a trace file");
    in.regular = S_ISREG(st.st_mode);
    in.size = in.regular ? static_cast<uint64_t>(st.st_size) : 0;
    if (in.regular && in.size == 0) throw InputError(path + ": empty file");
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
        if (errno != EINTR) throw InputError(in.path + ": read error: " + std::strerror(errno));
    }
}

[[noreturn]] void over_cap(const std::string& path, uint64_t cap) {
    throw InputError(path + ": holds more than " + megabytes(cap) + " of JSON (the --max-json-size given)");
}

// Why ISA-L's inflate stopped, in zlib's words where it has them.
const char* inflate_error(int code) {
    switch (code) {
        case ISAL_INVALID_BLOCK:
            return "invalid deflate block";
        case ISAL_INVALID_SYMBOL:
            return "invalid code in a deflate block";
        case ISAL_INVALID_LOOKBACK:
            return "invalid distance too far back";
        case ISAL_INVALID_WRAPPER:
            return "incorrect header check";
        case ISAL_UNSUPPORTED_METHOD:
            return "unknown compression method";
        case ISAL_INCORRECT_CHECKSUM:
            return "incorrect data check";
        default:
            return "inflate failed";
    }
}

// Decompresses gzip as the caller asks for text, under the caps of InputLimits. ISA-L's inflate
// (Debian libisal-dev) streams like zlib's and checks the same (header, CRC-32, length) at about
// three times its speed: inflating was a tenth of a compressed trace's import.
class Gunzip {
public:
    Gunzip(const Input& in, const InputLimits& limits) : in_(in), limits_(limits) {
        isal_inflate_init(&state_);
        state_.crc_flag = ISAL_GZIP;  // parse the gzip header, check the CRC and length at the end
    }
    Gunzip(const Gunzip&) = delete;
    Gunzip& operator=(const Gunzip&) = delete;

    bool wants_input() const { return state_.avail_in == 0; }
    void feed(const unsigned char* data, size_t n) {
        compressed_ += n;
        state_.next_in = const_cast<unsigned char*>(data);
        state_.avail_in = static_cast<uint32_t>(n);
    }

    // Up to `n` decompressed bytes from what was fed (0: feed more).
    size_t inflate_into(char* into, size_t n) {
        if (at_member_end_) next_member();
        state_.next_out = reinterpret_cast<unsigned char*>(into);
        state_.avail_out = static_cast<uint32_t>(std::min<size_t>(n, 1u << 30));
        const uint32_t asked = state_.avail_out;
        const int rc = isal_inflate(&state_);
        const size_t produced = asked - state_.avail_out;
        json_bytes_ += produced;
        if (rc != ISAL_DECOMP_OK) {
            throw InputError(in_.path + ": corrupt gzip data (" + inflate_error(rc) + ") after " +
                             std::to_string(json_bytes_) + " decompressed bytes");
        }
        at_member_end_ = state_.block_state == ISAL_BLOCK_FINISH;
        check_caps();
        return produced;
    }

    // At the end of the compressed input: the last member must be complete.
    void finish() const {
        if (!at_member_end_) {
            throw InputError(in_.path + ": truncated gzip file (the compressed stream ends early, after " +
                             std::to_string(json_bytes_) + " decompressed bytes)");
        }
        if (json_bytes_ == 0) throw InputError(in_.path + ": the gzip stream holds no data");
    }

private:
    // Concatenated gzip members (allowed by RFC 1952): the next one starts in what is left of the input.
    void next_member() {
        unsigned char* const next_in = state_.next_in;
        const uint32_t avail_in = state_.avail_in;
        isal_inflate_reset(&state_);
        state_.crc_flag = ISAL_GZIP;
        state_.next_in = next_in;
        state_.avail_in = avail_in;
        at_member_end_ = false;
    }

    void check_caps() const {
        if (limits_.max_json_bytes) {
            if (json_bytes_ > limits_.max_json_bytes) over_cap(in_.path, limits_.max_json_bytes);
        } else if (json_bytes_ > kMaxGzipRatio * compressed_ + kGzipAllowanceBytes) {
            throw InputError(in_.path + ": its gzip stream expands more than " + std::to_string(kMaxGzipRatio) +
                             " times (over " + megabytes(json_bytes_) + " from " + megabytes(compressed_) +
                             "), far beyond what a trace compresses to: not imported (a decompression bomb?); "
                             "a real trace this compressible is read with --max-json-size SIZE");
        }
    }

    const Input& in_;
    const InputLimits& limits_;
    inflate_state state_{};
    uint64_t compressed_ = 0;
    uint64_t json_bytes_ = 0;
    bool at_member_end_ = false;
};

}  // namespace

struct JsonInput::State {
    Input in;
    ReadProgress progress;
    InputLimits limits;
    std::vector<unsigned char> chunk = std::vector<unsigned char>(kChunk);
    size_t first_left = 0;  // plain input: bytes of the first chunk not handed out yet
    uint64_t raw_done = 0;  // bytes read from the input (compressed ones for gzip)
    uint64_t json_done = 0;
    bool input_end = false;
    std::unique_ptr<Gunzip> gunzip;

    size_t read_raw(void* into, size_t n) {
        const size_t got = read_some(in, into, n);
        raw_done += got;
        if (progress && got > 0) progress(raw_done, in.size);
        if (got == 0) {
            input_end = true;
            if (in.regular && raw_done < in.size)
                throw InputError(in.path + ": read error: the file got shorter while it was read");
        }
        return got;
    }

    size_t read_plain(char* into, size_t n) {
        size_t got = 0;
        if (first_left > 0) {
            got = std::min(n, first_left);
            std::memcpy(into, chunk.data() + (raw_done - first_left), got);
            first_left -= got;
        } else if (!input_end) {
            got = read_raw(into, n);
        }
        json_done += got;
        if (limits.max_json_bytes && json_done > limits.max_json_bytes) over_cap(in.path, limits.max_json_bytes);
        return got;
    }

    size_t read_gzip(char* into, size_t n) {
        for (;;) {
            if (gunzip->wants_input()) {
                if (input_end) {
                    gunzip->finish();
                    return 0;
                }
                const size_t got = read_raw(chunk.data(), chunk.size());
                if (got > 0) gunzip->feed(chunk.data(), got);
                continue;
            }
            if (const size_t produced = gunzip->inflate_into(into, n)) return produced;
        }
    }
};

JsonInput::JsonInput(const std::string& path, ReadProgress progress, InputLimits limits)
    : state_(std::make_unique<State>()) {
    State& s = *state_;
    s.progress = std::move(progress);
    s.limits = limits;
    open_input(path, s.in);
    const size_t got = s.read_raw(s.chunk.data(), s.chunk.size());
    if (got == 0) throw InputError(path + (s.in.regular ? ": empty file" : ": empty (nothing came through the pipe)"));
    if (got >= 2 && s.chunk[0] == 0x1f && s.chunk[1] == 0x8b) {
        s.gunzip = std::make_unique<Gunzip>(s.in, s.limits);
        s.gunzip->feed(s.chunk.data(), got);
    } else {
        s.first_left = got;
    }
}

JsonInput::~JsonInput() = default;

size_t JsonInput::read(char* into, size_t n) {
    return state_->gunzip ? state_->read_gzip(into, n) : state_->read_plain(into, n);
}

const std::string& JsonInput::path() const {
    return state_->in.path;
}

}  // namespace tbdprof::interop
