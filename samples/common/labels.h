// Ground-truth labels: the true category of every device allocation the program makes, written to
// the file named by TBD_SAMPLE_LABELS in the format of docs (shared/notes/definitions.md):
//   alloc<TAB>0x7f3a2c000000<TAB>1048576<TAB>weights
//   free<TAB>0x7f3a2c000000<TAB>0<TAB>-
// With a caching allocator (--alloc pool) tensors are sub-ranges of segments; the segments get their
// own lines, and every line ends with a fifth field, the host time (CLOCK_MONOTONIC, ns), because a
// tensor's alloc and free make no API call a trace could be matched with:
//   segment<TAB>0x7f3a2c000000<TAB>2097152<TAB>-<TAB>123456789
//   segment_free<TAB>0x7f3a2c000000<TAB>0<TAB>-<TAB>123999999
// Arenas and statically planned blocks (one cudaMalloc holding many tensors) use the same two
// levels: the allocation is a `segment`, each tensor inside it an `alloc` at its address with its
// bytes and category, freed (`free`) before the segment is.
// Programs that know their loop also write one `span` line per training step, validation pass and
// checkpoint save, when it ends, with its host start and end (CLOCK_MONOTONIC ns):
//   span<TAB>training<TAB>3<TAB>123400000<TAB>123999999      (KIND: training|validation|checkpoint)
// The allocation helper calls this writer with the category of each tensor it creates, so the labels
// follow whatever the program actually allocates; nothing here knows about particular tensors.
#pragma once

#include <cstddef>
#include <cstdio>

namespace tbdsample {

enum class Category { weights, gradients, optimizer_state, activations, workspace, input, other };

const char* category_name(Category category);

// CLOCK_MONOTONIC in ns, the clock of the trace's host times.
long long monotonic_ns();

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
    // From now on every line carries the host time (pool mode, arenas).
    void enable_timestamps() { timestamps_ = true; }
    // One span of the program's loop: kind is "training", "validation" or "checkpoint"; index counts
    // spans of that kind from 0; times as monotonic_ns().
    void record_span(const char* kind, int index, long long begin_ns, long long end_ns);

private:
    void line(const char* event, const void* address, std::size_t bytes, const char* category);

    std::FILE* file_ = nullptr;
    bool timestamps_ = false;
};

}  // namespace tbdsample
