// Ground-truth labels: the true category of every device allocation the program makes, written to
// the file named by TBD_SAMPLE_LABELS in the format of docs (shared/notes/definitions.md):
//   alloc<TAB>0x7f3a2c000000<TAB>1048576<TAB>weights
//   free<TAB>0x7f3a2c000000<TAB>0<TAB>-
// With a caching allocator (--alloc pool) tensors are sub-ranges of segments; the segments get their
// own lines, and every line ends with a fifth field, the host time (CLOCK_MONOTONIC, ns), because a
// tensor's alloc and free make no API call a trace could be matched with:
//   segment<TAB>0x7f3a2c000000<TAB>2097152<TAB>-<TAB>123456789
//   segment_free<TAB>0x7f3a2c000000<TAB>0<TAB>-<TAB>123999999
// The allocation helper calls this writer with the category of each tensor it creates, so the labels
// follow whatever the program actually allocates; nothing here knows about particular tensors.
#pragma once

#include <cstddef>
#include <cstdio>

namespace tbdsample {

enum class Category { weights, gradients, optimizer_state, activations, workspace, input, other };

const char* category_name(Category category);

class LabelWriter {
public:
    // Opens the file named by the environment variable TBD_SAMPLE_LABELS; without it, writes nothing.
    // A name that cannot be opened is a fatal error: a test asking for labels must get them.
    LabelWriter();
    ~LabelWriter();
    LabelWriter(const LabelWriter&) = delete;
    LabelWriter& operator=(const LabelWriter&) = delete;

    bool enabled() const { return file_ != nullptr; }
    void record_alloc(const void* address, std::size_t bytes, Category category);
    void record_free(const void* address);
    void record_segment(const void* address, std::size_t bytes);
    void record_segment_free(const void* address);
    // From now on every line carries the host time (pool mode).
    void enable_timestamps() { timestamps_ = true; }

private:
    void line(const char* event, const void* address, std::size_t bytes, const char* category);

    std::FILE* file_ = nullptr;
    bool timestamps_ = false;
};

}  // namespace tbdsample
