// The timeline on screen: mouse wheel zooms at the cursor, dragging pans, W/S zoom, A/D pan,
// F fits the selection (or the run), '.'/',' step to the next/previous item of the selected row,
// Shift+drag chooses a time range,
// Backspace goes back in the zoom history, R resets. A click selects the item under it.
#pragma once

#include <QWidget>

#include <optional>
#include <utility>
#include <vector>

#include "timeline_painter.h"

namespace tbdprof::viewer {

class TimelineWidget : public QWidget {
    Q_OBJECT
public:
    TimelineWidget(TraceSession* session, TimeAxis* axis, QWidget* parent = nullptr);
    TimelinePainter& timelinePainter() { return painter_; }
    const Selection& selection() const { return selection_; }
    void select(const Selection& selection);
    void highlightKernel(const QString& name);
    void paintTo(QPainter& painter, const QRect& area);
    QSize sizeHint() const override { return {1000, 420}; }
    // Zoom history (fits and keyboard zooms push onto it).
    void back();
    void reset();

signals:
    void selectionChanged(const tbdprof::viewer::Selection& selection);
    void axisChanged();
    void rangeSelected(double t0_ns, double t1_ns);

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
    void pushHistory();
    void step(int direction);
    double centreX() const;

    TraceSession* session_;
    TimeAxis* axis_;
    TimelinePainter painter_;
    ViewerColors colors_;
    Selection selection_;
    int first_row_ = 0;
    QPoint press_, last_;
    bool dragging_ = false;
    bool ranging_ = false;
    std::optional<std::pair<double, double>> range_;
    std::vector<std::pair<double, double>> history_;  // (begin, end)
};

}  // namespace tbdprof::viewer
