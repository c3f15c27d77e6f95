#include "allocations_model.h"

#include <algorithm>

#include "tbdprof/analyzer/units.h"

namespace tbdprof::viewer {

void AllocationsModel::showMoment(const Overview* overview, int64_t trace_ns) {
    resetting_ = true;  // views and testers that fetch on modelReset get the first page only
    beginResetModel();
    overview_ = overview;
    moment_ = trace_ns;
    live_.clear();
    shown_ = 0;
    if (overview) {
        // Allocations are sorted by alloc_ns: those after t cannot be live.
        for (const AllocationInfo& a : overview->allocations) {
            if (a.alloc_ns > trace_ns) break;
            if (a.free_ns > trace_ns) live_.push_back(&a);
        }
        std::stable_sort(live_.begin(), live_.end(),
                         [](const AllocationInfo* x, const AllocationInfo* y) { return x->bytes > y->bytes; });
        shown_ = std::min<int>(kPage, static_cast<int>(live_.size()));
    }
    endResetModel();
    resetting_ = false;
}

const AllocationInfo* AllocationsModel::allocation(int row) const {
    return row >= 0 && row < shown_ ? live_[static_cast<size_t>(row)] : nullptr;
}

int AllocationsModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : shown_;
}
int AllocationsModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

bool AllocationsModel::canFetchMore(const QModelIndex& parent) const {
    return !parent.isValid() && !resetting_ && !fetching_ && shown_ < static_cast<int>(live_.size());
}

void AllocationsModel::fetchMore(const QModelIndex& parent) {
    // Not again from a slot connected to the insertion being announced (views and testers fetch).
    if (parent.isValid() || resetting_ || fetching_) return;
    const int more = std::min<int>(kPage, static_cast<int>(live_.size()) - shown_);
    if (more <= 0) return;
    fetching_ = true;
    beginInsertRows({}, shown_, shown_ + more - 1);
    shown_ += more;
    endInsertRows();
    fetching_ = false;
}

QVariant AllocationsModel::data(const QModelIndex& index, int role) const {
    const AllocationInfo* a = index.isValid() ? allocation(index.row()) : nullptr;
    if (!a || index.column() < 0 || index.column() >= ColumnCount) return {};
    const auto column = static_cast<Column>(index.column());
    if (role == Qt::UserRole) return static_cast<qlonglong>(a->id);
    if (role == Qt::ToolTipRole) return QString::fromStdString(a->reason);
    if (role == Qt::TextAlignmentRole && (column == Size || column == Confidence)) {
        return QVariant(Qt::AlignRight | Qt::AlignVCenter);
    }
    if (role != Qt::DisplayRole) return {};
    switch (column) {
        case Size:
            return QString::fromStdString(analyzer::format_bytes(a->bytes));
        case Category:
            return QString::fromUtf8(analyzer::category_name(a->category));
        case Rule:
            return QString::fromStdString(a->rule.empty() ? "-" : a->rule);
        case Confidence:
            return a->confidence < 0 ? QString("-") : QString::number(a->confidence, 'f', 2);
        case Lifetime: {
            const std::string from = analyzer::format_duration_ns(static_cast<double>(a->alloc_ns));
            const std::string to = a->free_ns == INT64_MAX
                                       ? std::string("end")
                                       : analyzer::format_duration_ns(static_cast<double>(a->free_ns));
            return QString::fromStdString(from + " – " + to);
        }
        case Device:
            return static_cast<qlonglong>(a->device);
        case Id:
            return static_cast<qlonglong>(a->id);
        default:
            return {};
    }
}

QVariant AllocationsModel::headerData(int section, Qt::Orientation orientation, int role) const {
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
    static const char* const kHeaders[ColumnCount] = {"size",     "category", "rule", "confidence",
                                                      "lifetime", "GPU",      "id"};
    return section >= 0 && section < ColumnCount ? QVariant(tr(kHeaders[section])) : QVariant();
}

}  // namespace tbdprof::viewer
