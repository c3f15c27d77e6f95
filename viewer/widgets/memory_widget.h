// The memory chart on screen, sharing the timeline's axis (wheel zooms, drag pans, W/S/A/D as
// there). A click picks a moment: momentChosen(t) lists the allocations live then; where lifetime
// bars are drawn, a click on a bar picks that allocation (or tensor of a segment): barChosen.
#pragma once

#include <QWidget>

#include <optional>

#include "memory_painter.h"

namespace tbdprof::viewer {

class MemoryWidget : public QWidget {
    Q_OBJECT
public:
    MemoryWidget(TraceSession* session, TimeAxis* axis, QWidget* parent = nullptr);
    void paintTo(QPainter& painter, const QRect& area);
    void setMoment(std::optional<int64_t> moment);
    // Lifetime bars when zoomed in far enough (on by default); off: always the stacked chart.
    void setLifetimeBars(bool on);
    bool lifetimeBars() const { return options_.lifetime_bars; }
    const MemoryPainter& memoryPainter() const { return painter_; }
    QSize sizeHint() const override { return {1000, 320}; }

signals:
    void momentChosen(qint64 trace_ns);
    void barChosen(qulonglong allocation, qulonglong subrange);  // subrange: SIZE_MAX for a whole allocation
    void axisChanged();

protected:
    void paintEvent(QPaintEvent* event) override;
    void resizeEvent(QResizeEvent* event) override;
    void wheelEvent(QWheelEvent* event) override;
    void mousePressEvent(QMouseEvent* event) override;
    void mouseMoveEvent(QMouseEvent* event) override;
    void mouseReleaseEvent(QMouseEvent* event) override;
    void keyPressEvent(QKeyEvent* event) override;
    bool event(QEvent* event) override;

private:
    void syncWidth();
    TraceSession* session_;
    TimeAxis* axis_;
    MemoryPainter painter_;
    ViewerColors colors_;
    MemoryPaintOptions options_;
    QPoint press_, last_;
    bool dragging_ = false;
};

}  // namespace tbdprof::viewer
