// Ground-truth labels: the true category of every device allocation the program makes, written to
// the file named by TBD_SAMPLE_LABELS in the format of docs (shared/notes/definitions.md):
//   alloc<TAB>0x7f3a2c000000<TAB>1048576<TAB>weights
//   free<TAB>0x7f3a2c000000<TAB>0<TAB>-
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

private:
    std::FILE* file_ = nullptr;
};

}  // namespace tbdsample
