#include "tbdprof/trace/raw_reader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <system_error>
#include <utility>

namespace tbdprof::trace {

RawFile::RawFile(RawFile&& other) noexcept { *this = std::move(other); }

RawFile& RawFile::operator=(RawFile&& other) noexcept {
    if (this != &other) {
        release();
        path_ = std::move(other.path_);
        map_ = std::exchange(other.map_, nullptr);
        size_ = std::exchange(other.size_, 0);
        header_ = other.header_;
    }
    return *this;
}

RawFile::~RawFile() { release(); }

void RawFile::release() {
    if (map_ != nullptr && size_ > 0) munmap(const_cast<std::byte*>(map_), size_);
    map_ = nullptr;
    size_ = 0;
}

bool RawFile::open(const std::string& path, std::string& error) {
    release();
    path_ = path;
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        error = path + ": " + std::strerror(errno);
        return false;
    }
    struct stat st {};
    if (fstat(fd, &st) != 0) {
        error = path + ": " + std::strerror(errno);
        ::close(fd);
        return false;
    }
    const auto size = static_cast<size_t>(st.st_size);
    if (size < sizeof(raw::RawFileHeader)) {
        ::close(fd);
        error = path + ": shorter than a raw file header (" + std::to_string(size) + " bytes)";
        return false;
    }
    void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    ::close(fd);
    if (map == MAP_FAILED) {
        error = path + ": mmap: " + std::strerror(errno);
        return false;
    }
    madvise(map, size, MADV_SEQUENTIAL);
    map_ = static_cast<const std::byte*>(map);
    size_ = size;
    std::memcpy(&header_, map_, sizeof header_);
    if (std::memcmp(header_.magic, raw::kMagic, sizeof raw::kMagic) != 0) {
        error = path + ": not a tbdprof raw event file (bad magic)";
        release();
        return false;
    }
    if (header_.version != raw::kVersion) {
        error = path + ": raw format version " + std::to_string(header_.version) + ", this build reads " +
                std::to_string(raw::kVersion);
        release();
        return false;
    }
    return true;
}

void RawFile::drop_pages_before(size_t offset) const {
    const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t bytes = std::min(offset, size_) / page * page;
    // A read-only private mapping of the file: dropping pages loses nothing, only residency.
    if (map_ != nullptr && bytes > 0) madvise(const_cast<std::byte*>(map_), bytes, MADV_DONTNEED);
}

void RawFile::drop_pages(size_t begin, size_t end) const {
    const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t first = begin / page * page;
    const size_t last = std::min(end, size_);
    if (map_ != nullptr && last > first) madvise(const_cast<std::byte*>(map_) + first, last - first, MADV_DONTNEED);
}

RawRecordView RawFile::record_at(size_t offset) const {
    raw::RawRecordHeader header;
    std::memcpy(&header, map_ + offset, sizeof header);
    return {header.kind, header.tid, map_ + offset, header.size, 0, offset};
}

RawFile::Cursor::Cursor(const RawFile& file)
    : base_(file.map_), size_(file.size_), offset_(sizeof(raw::RawFileHeader)) {}

bool RawFile::Cursor::next(RawRecordView& record) {
    if (end_ != RawFileEnd::Clean) return false;
    const size_t left = size_ - offset_;
    if (left == 0) return false;
    if (left < sizeof(raw::RawRecordHeader)) {
        end_ = RawFileEnd::Truncated;
        return false;
    }
    raw::RawRecordHeader header;
    std::memcpy(&header, base_ + offset_, sizeof header);
    if (header.size < sizeof(raw::RawRecordHeader) || header.size % 8 != 0) {
        // A zero size is also what a crash leaves when the file was extended but not yet written:
        // either way nothing after this point can be framed.
        end_ = header.size == 0 ? RawFileEnd::Truncated : RawFileEnd::Corrupt;
        return false;
    }
    if (header.size > left) {
        end_ = RawFileEnd::Truncated;
        return false;
    }
    record.kind = header.kind;
    record.tid = header.tid;
    record.data = base_ + offset_;
    record.size = header.size;
    record.ordinal = ordinal_++;
    record.offset = offset_;
    offset_ += header.size;
    return true;
}

const char* describe(RawFileEnd end) {
    switch (end) {
        case RawFileEnd::Clean: return "complete";
        case RawFileEnd::Truncated: return "ends mid-record (the process probably crashed)";
        case RawFileEnd::Corrupt: return "has a corrupt record";
    }
    return "?";
}

std::vector<std::string> list_raw_files(const std::string& run_dir, std::string& error) {
    namespace fs = std::filesystem;
    std::vector<std::string> files;
    std::error_code ec;
    for (fs::directory_iterator it(run_dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.starts_with("raw-") && name.size() > 11 && name.ends_with(".tbdraw"))
            files.push_back(it->path().string());
    }
    if (ec) error = "cannot read run directory " + run_dir + ": " + ec.message();
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace tbdprof::trace
