// Sorts more records than the build should hold in memory: records are gathered in a bounded
// buffer, each full buffer is sorted and written as a run to an unlinked temporary file, and the
// runs are merged when read back. Memory: one buffer plus a small read buffer per run, whatever
// the number of records. Equal records come back in the order they were added (stable).
// Internal to the builder (kernel rows and edges, kernel_stage.h).
#pragma once

#include <unistd.h>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <queue>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace tbdprof::trace::detail {

// An unlinked temporary file in TMPDIR (else /tmp): gone when closed, even if the build is killed.
class SpillFile {
public:
    SpillFile() = default;
    SpillFile(const SpillFile&) = delete;
    SpillFile& operator=(const SpillFile&) = delete;
    ~SpillFile() {
        if (fd_ >= 0) ::close(fd_);
    }

    // Appends `bytes` at the end; returns the offset they were written at.
    size_t append(const void* data, size_t bytes) {
        if (fd_ < 0) open();
        const size_t at = size_;
        const auto* p = static_cast<const char*>(data);
        for (size_t done = 0; done < bytes;) {
            const ssize_t n = ::pwrite(fd_, p + done, bytes - done, static_cast<off_t>(at + done));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) fail("cannot write the build's temporary file");
            done += static_cast<size_t>(n);
        }
        size_ += bytes;
        return at;
    }
    void read(size_t offset, void* data, size_t bytes) const {
        auto* p = static_cast<char*>(data);
        for (size_t done = 0; done < bytes;) {
            const ssize_t n = ::pread(fd_, p + done, bytes - done, static_cast<off_t>(offset + done));
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) fail("cannot read the build's temporary file");
            done += static_cast<size_t>(n);
        }
    }

private:
    void open() {
        const char* dir = std::getenv("TMPDIR");
        std::string path = std::string(dir && *dir ? dir : "/tmp") + "/tbdprof-build-XXXXXX";
        fd_ = ::mkstemp(path.data());
        if (fd_ < 0) fail("cannot create a temporary file in " + path.substr(0, path.rfind('/')));
        ::unlink(path.c_str());
    }
    [[noreturn]] static void fail(const std::string& what) {
        throw std::runtime_error(what + ": " + std::strerror(errno) +
                                 " (the build keeps kernel rows and edges there until it writes them; set TMPDIR "
                                 "to a disk with room)");
    }

    int fd_ = -1;
    size_t size_ = 0;
};

template <class Record, class Less>
class SpillSorter {
    static_assert(std::is_trivially_copyable_v<Record>, "runs are written and read back as bytes");

public:
    explicit SpillSorter(size_t buffer_records, Less less = Less()) : capacity_(buffer_records), less_(less) {}

    void add(const Record& r) {
        if (buffer_.capacity() == 0) buffer_.reserve(capacity_);
        buffer_.push_back(r);
        ++count_;
        if (buffer_.size() == capacity_) spill();
    }
    size_t size() const { return count_; }

    // Calls visit(record) for every record in order. Records may not be added afterwards, but the
    // records may be visited again.
    template <class Visit>
    void for_each(Visit visit) {
        if (runs_.empty()) {  // everything fits the buffer: sorted in memory, no file
            sort_buffer();
            for (const Record& r : buffer_) visit(r);
            return;
        }
        if (!buffer_.empty()) spill();
        std::vector<Reader> readers;
        readers.reserve(runs_.size());
        for (const Run& run : runs_) readers.emplace_back(file_, run);
        // Of equal records the one of the earlier run first: runs were written in the order added.
        const auto after = [&](size_t a, size_t b) {
            const Record& x = readers[a].head();
            const Record& y = readers[b].head();
            return less_(y, x) || (!less_(x, y) && a > b);
        };
        std::priority_queue<size_t, std::vector<size_t>, decltype(after)> heads(after);
        for (size_t i = 0; i < readers.size(); ++i) heads.push(i);
        while (!heads.empty()) {
            const size_t i = heads.top();
            heads.pop();
            visit(readers[i].head());
            if (readers[i].advance()) heads.push(i);
        }
    }

private:
    struct Run {
        size_t offset, records;
    };
    // Reads one run back a block at a time.
    class Reader {
    public:
        Reader(const SpillFile& file, const Run& run) : file_(&file), run_(run) { fill(); }
        const Record& head() const { return block_[at_]; }
        bool advance() {
            if (++at_ < block_.size()) return true;
            return fill();
        }

    private:
        static constexpr size_t kBlockRecords = std::max<size_t>(1, (32 << 10) / sizeof(Record));
        bool fill() {
            const size_t n = std::min(kBlockRecords, run_.records - read_);
            block_.resize(n);
            at_ = 0;
            if (n == 0) return false;
            file_->read(run_.offset + read_ * sizeof(Record), block_.data(), n * sizeof(Record));
            read_ += n;
            return true;
        }
        const SpillFile* file_;
        Run run_;
        size_t read_ = 0, at_ = 0;
        std::vector<Record> block_;
    };

    void sort_buffer() {
        if (!std::is_sorted(buffer_.begin(), buffer_.end(), less_))
            std::stable_sort(buffer_.begin(), buffer_.end(), less_);
    }
    void spill() {
        sort_buffer();
        const size_t offset = file_.append(buffer_.data(), buffer_.size() * sizeof(Record));
        runs_.push_back({offset, buffer_.size()});
        buffer_.clear();
    }

    size_t capacity_;
    Less less_;
    std::vector<Record> buffer_;
    std::vector<Run> runs_;
    SpillFile file_;
    size_t count_ = 0;
};

}  // namespace tbdprof::trace::detail
