#include "tbdprof/raw_reader.h"

#include <algorithm>
#include <cerrno>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tbdprof::raw {

std::string_view RecordView::string_text() const {
    const auto* s = as<RawString>();
    if (s == nullptr || kind() != RecordKind::String || sizeof(RawString) + s->length > size_) return {};
    return {reinterpret_cast<const char*>(bytes_ + sizeof(RawString)), s->length};
}

std::span<const RawPointerCandidate> RecordView::launch_candidates() const {
    const auto* launch = as<RawLaunch>();
    if (launch == nullptr || kind() != RecordKind::Launch) return {};
    const size_t available = (size_ - sizeof(RawLaunch)) / sizeof(RawPointerCandidate);
    const size_t count = std::min<size_t>(launch->candidate_count, available);
    return {reinterpret_cast<const RawPointerCandidate*>(bytes_ + sizeof(RawLaunch)), count};
}

std::span<const uint64_t> RecordView::stack_ips() const {
    const auto* stack = as<RawStack>();
    if (stack == nullptr || kind() != RecordKind::Stack) return {};
    const size_t available = (size_ - sizeof(RawStack)) / sizeof(uint64_t);
    const size_t count = std::min<size_t>(stack->depth, available);
    return {reinterpret_cast<const uint64_t*>(bytes_ + sizeof(RawStack)), count};
}

std::optional<RawFileReader> RawFileReader::open(const std::string& path, std::string* error) {
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (error) *error = "cannot open " + path + ": " + std::strerror(errno);
        return std::nullopt;
    }
    std::vector<uint8_t> bytes;
    struct stat st{};
    if (::fstat(fd, &st) == 0 && st.st_size > 0) bytes.reserve(static_cast<size_t>(st.st_size));
    uint8_t chunk[1 << 16];
    for (;;) {
        ssize_t n = ::read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            if (error) *error = "cannot read " + path + ": " + std::strerror(errno);
            ::close(fd);
            return std::nullopt;
        }
        if (n == 0) break;
        bytes.insert(bytes.end(), chunk, chunk + n);
    }
    ::close(fd);
    auto reader = from_bytes(std::move(bytes), error);
    if (!reader && error) *error = path + ": " + *error;
    return reader;
}

std::optional<RawFileReader> RawFileReader::from_bytes(std::vector<uint8_t> bytes, std::string* error) {
    RawFileReader reader;
    reader.data_ = std::move(bytes);
    if (!reader.parse(error)) return std::nullopt;
    return reader;
}

bool RawFileReader::parse(std::string* error) {
    if (data_.size() < sizeof(RawFileHeader)) {
        if (error) *error = "not a tbdprof raw file (too short)";
        return false;
    }
    std::memcpy(&header_, data_.data(), sizeof header_);
    if (std::memcmp(header_.magic, kMagic, sizeof kMagic) != 0) {
        if (error) *error = "not a tbdprof raw file (bad magic)";
        return false;
    }
    if (header_.version != kVersion) {
        if (error) {
            *error = "raw file version " + std::to_string(header_.version) + ", this build reads version " +
                     std::to_string(kVersion);
        }
        return false;
    }
    size_t offset = sizeof(RawFileHeader);
    while (offset < data_.size()) {
        if (data_.size() - offset < sizeof(RawRecordHeader)) {
            truncated_ = true;
            break;
        }
        RawRecordHeader h;
        std::memcpy(&h, data_.data() + offset, sizeof h);
        if (h.size < sizeof(RawRecordHeader) || h.size % 8 != 0) {
            truncated_ = true;
            break;
        }
        if (h.size > data_.size() - offset) {
            truncated_ = true;
            break;
        }
        records_.emplace_back(data_.data() + offset, h.size);
        offset += h.size;
    }
    return true;
}

std::vector<std::string> list_raw_files(const std::string& run_dir) {
    std::vector<std::string> files;
    DIR* dir = ::opendir(run_dir.c_str());
    if (dir == nullptr) return files;
    while (dirent* entry = ::readdir(dir)) {
        std::string_view name = entry->d_name;
        if (name.starts_with("raw-") && name.ends_with(".tbdraw")) files.push_back(run_dir + "/" + std::string(name));
    }
    ::closedir(dir);
    std::sort(files.begin(), files.end());
    return files;
}

}  // namespace tbdprof::raw
