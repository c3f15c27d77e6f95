// Allocations live at one moment (size, category, the tagger's rule, reason and confidence,
// lifetime), largest first. Paged: the view fetches 200 rows at a time, so a moment with a million
// live allocations never builds a million rows.
#pragma once

#include <QAbstractTableModel>

#include <vector>

#include "trace_data.h"

namespace tbdprof::viewer {

class AllocationsModel : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Size, Category, Rule, Confidence, Lifetime, Device, Id, ColumnCount };
    static constexpr int kPage = 200;

    explicit AllocationsModel(QObject* parent = nullptr) : QAbstractTableModel(parent) {}
    // Allocations live at t: allocated at or before it, not freed by then.
    void showMoment(const Overview* overview, int64_t trace_ns);
    int64_t moment() const { return moment_; }
    size_t liveCount() const { return live_.size(); }
    const AllocationInfo* allocation(int row) const;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;
    bool canFetchMore(const QModelIndex& parent) const override;
    void fetchMore(const QModelIndex& parent) override;

private:
    const Overview* overview_ = nullptr;
    std::vector<const AllocationInfo*> live_;
    int shown_ = 0;
    bool resetting_ = false;
    bool fetching_ = false;
    int64_t moment_ = 0;
};

}  // namespace tbdprof::viewer
