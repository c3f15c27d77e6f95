// xla_style_train's temp buffer, after XLA's buffer assignment: every intermediate value of the
// executable lives at a static offset inside ONE temp allocation per execution, and values whose
// lives do not overlap share offsets. Offsets come from a greedy heap simulation (largest value
// first, each at the lowest 256-byte-aligned offset free during its whole life), as XLA's heap
// simulator does by default.
//
// The step is written once and run twice: a planning pass in which ops only declare which values
// they define and use (nothing is launched), then, every step, an executing pass over the same ops
// in which each op's launches run and the label file gets each value when its first op starts and
// loses it when its last op has been launched.
#pragma once

#include "common/labels.h"

#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <utility>
#include <vector>

namespace xla_style {

class BufferPlan {
public:
    static constexpr std::size_t kAlignmentBytes = 256;

    // Starts the planning pass (forgets any previous plan).
    void start_planning() {
        values_.clear();
        planning_ = true;
        next_value_ = 0;
        op_index_ = -1;
    }
    // Starts an executing pass over the temp allocation at `base`.
    void start_step(char* base, tbdsample::LabelWriter& labels) {
        planning_ = false;
        base_ = base;
        labels_ = &labels;
        next_value_ = 0;
        op_index_ = -1;
    }

    // Declares the next value (same order in every pass); returns its id.
    int value(std::size_t bytes, tbdsample::Category category) {
        if (planning_) values_.push_back({bytes, category, -1, -1, 0});
        return next_value_++;
    }

    // One op of the executable: it writes `defs` and reads `uses` (ids; -1 for an operand that is
    // not a temp value); `launch` is called only when executing.
    template <typename Launch>
    void op(std::initializer_list<int> defs, std::initializer_list<int> uses, Launch&& launch) {
        ++op_index_;
        if (planning_) {
            for (int id : defs) touch(id);
            for (int id : uses) touch(id);
            return;
        }
        for (Value& v : values_)
            if (v.first_op == op_index_) labels_->record_alloc(base_ + v.offset, v.bytes, v.category);
        launch();
        for (Value& v : values_)
            if (v.last_op == op_index_) labels_->record_free(base_ + v.offset);
    }

    float* at(int id) const { return reinterpret_cast<float*>(base_ + values_[std::size_t(id)].offset); }

    // Places every value (after the planning pass); returns the temp allocation's size in bytes.
    std::size_t assign_offsets() {
        std::vector<int> order(values_.size());
        for (std::size_t i = 0; i < order.size(); ++i) order[i] = int(i);
        std::stable_sort(order.begin(), order.end(),
                         [&](int a, int b) { return values_[std::size_t(a)].bytes > values_[std::size_t(b)].bytes; });
        std::size_t total = 0;
        for (std::size_t k = 0; k < order.size(); ++k) {
            Value& v = values_[std::size_t(order[k])];
            v.offset = lowest_free_offset(v, order, k);
            total = std::max(total, v.offset + aligned(v.bytes));
        }
        return total;
    }

private:
    struct Value {
        std::size_t bytes;
        tbdsample::Category category;
        int first_op, last_op;  // ops are numbered in launch order within the step
        std::size_t offset;
    };

    static std::size_t aligned(std::size_t bytes) {
        return (bytes + kAlignmentBytes - 1) / kAlignmentBytes * kAlignmentBytes;
    }

    void touch(int id) {
        if (id < 0) return;  // an operand that is not a temp value (an argument of the step)
        Value& v = values_[std::size_t(id)];
        if (v.first_op < 0) v.first_op = op_index_;
        v.last_op = op_index_;
    }

    // The lowest offset at which `v` overlaps none of the first `placed` values of `order` that are
    // alive at the same time.
    std::size_t lowest_free_offset(const Value& v, const std::vector<int>& order, std::size_t placed) const {
        std::vector<std::pair<std::size_t, std::size_t>> busy;  // [begin, end) offsets
        for (std::size_t k = 0; k < placed; ++k) {
            const Value& other = values_[std::size_t(order[k])];
            if (other.first_op <= v.last_op && v.first_op <= other.last_op)
                busy.push_back({other.offset, other.offset + aligned(other.bytes)});
        }
        std::sort(busy.begin(), busy.end());
        std::size_t offset = 0;
        for (const auto& [begin, end] : busy) {
            if (begin >= offset + aligned(v.bytes)) break;
            offset = std::max(offset, end);
        }
        return offset;
    }

    std::vector<Value> values_;
    bool planning_ = true;
    int next_value_ = 0;
    int op_index_ = -1;
    char* base_ = nullptr;
    tbdsample::LabelWriter* labels_ = nullptr;
};

}  // namespace xla_style
