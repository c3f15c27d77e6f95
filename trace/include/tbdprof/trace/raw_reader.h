// Reads one raw event file (`raw-<pid>.tbdraw`, layout in contracts/include/tbdprof/raw_format.h)
// after the run. The file is mapped, not copied; records are handed out as views into the mapping.
//
// The one reader of raw files: the builder, the collector's ground-truth checks, the raw dump tool and
// the writer benchmark all read through it. Its compatibility rule is in docs/collector.md ("Raw files").
//
// Robust by design: a file that ends mid-record (the process crashed while writing) is read up to the
// last whole record; a record whose size field is impossible ends the reading there (the rest of the
// file cannot be framed any more). Both are reported, never thrown, so the builder can still build.
#pragma once

#include <tbdprof/raw_format.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace tbdprof::trace {

struct RawRecordView {
    raw::RecordKind kind;
    uint32_t tid;
    const std::byte* data;  // the whole record, starting with its RawRecordHeader
    size_t size;            // bytes, from the header
    uint64_t ordinal;       // position of the record in its file (0, 1, ...): the order of events
    size_t offset;          // where the record starts in its file (bytes; grows with the ordinal)

    // The record as struct T. A record shorter than T (written before fields were appended) reads
    // the missing fields as zero; a longer one (fields appended later) is cut to T.
    template <class T>
    T as() const {
        static_assert(std::is_trivially_copyable_v<T>);
        T value;
        std::memset(&value, 0, sizeof value);
        std::memcpy(&value, data, size < sizeof(T) ? size : sizeof(T));
        return value;
    }
    // Bytes after the fixed part T (string text, stack ips, pointer candidates).
    template <class T>
    std::string_view tail() const {
        if (size <= sizeof(T)) return {};
        return {reinterpret_cast<const char*>(data) + sizeof(T), size - sizeof(T)};
    }
    // A RawString's text, without the padding after its `length` bytes.
    std::string_view string_text() const { return tail<raw::RawString>().substr(0, as<raw::RawString>().length); }
    // Appends the `declared` items after the fixed part T (RawStack: its ips; RawLaunch: its pointer
    // candidates), as many as the record holds; returns how many were appended.
    template <class T, class Item>
    size_t append_items(uint64_t declared, std::vector<Item>& out) const {
        const std::string_view bytes = tail<T>();
        const size_t count = std::min<uint64_t>(declared, bytes.size() / sizeof(Item));
        const size_t first = out.size();
        if (count == 0) return 0;
        out.resize(first + count);
        std::memcpy(static_cast<void*>(out.data() + first), bytes.data(), count * sizeof(Item));
        return count;
    }
};

enum class RawFileEnd { Clean, Truncated, Corrupt };

class RawFile {
public:
    RawFile() = default;
    RawFile(RawFile&& other) noexcept;
    RawFile& operator=(RawFile&& other) noexcept;
    RawFile(const RawFile&) = delete;
    RawFile& operator=(const RawFile&) = delete;
    ~RawFile();

    // Maps `path` and checks its header. False with `error` set when it is not a raw file of this
    // format version (or shorter than its header).
    bool open(const std::string& path, std::string& error);

    const raw::RawFileHeader& header() const { return header_; }
    const std::string& path() const { return path_; }

    // Iterates the records in file order. next() returns false at the end; end() then says why.
    class Cursor {
    public:
        explicit Cursor(const RawFile& file);
        bool next(RawRecordView& record);
        RawFileEnd end() const { return end_; }
        size_t end_offset() const { return offset_; }  // where reading stopped
    private:
        const std::byte* base_;
        size_t size_;
        size_t offset_;
        uint64_t ordinal_ = 0;
        RawFileEnd end_ = RawFileEnd::Clean;
    };
    Cursor records() const { return Cursor(*this); }

    // The record that starts at `offset`, a position a cursor handed out before (so it is whole and
    // framed): for readers that keep offsets rather than copies of records. Its ordinal reads 0.
    RawRecordView record_at(size_t offset) const;

    // Lets the kernel drop the mapped pages before byte `offset` from this process's resident set
    // (they stay in the page cache and fault back in when a view into them is read again). Decoding
    // calls it as it goes, so a large raw file does not stay resident as a whole.
    void drop_pages_before(size_t offset) const;
    // The same for the pages of [begin, end) (bytes of the file).
    void drop_pages(size_t begin, size_t end) const;

private:
    void release();

    std::string path_;
    const std::byte* map_ = nullptr;
    size_t size_ = 0;
    raw::RawFileHeader header_{};
};

const char* describe(RawFileEnd end);

// Every `raw-<pid>[-N].tbdraw` in a run directory, sorted by name. `error` is set when the directory
// cannot be read.
std::vector<std::string> list_raw_files(const std::string& run_dir, std::string& error);

}  // namespace tbdprof::trace
