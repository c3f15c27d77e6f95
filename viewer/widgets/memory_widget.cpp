#include "memory_widget.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QWheelEvent>

#include <cmath>

#include "timeline_painter.h"

namespace tbdprof::viewer {

MemoryWidget::MemoryWidget(TraceSession* session, TimeAxis* axis, QWidget* parent)
    : QWidget(parent), session_(session), axis_(axis), colors_(ViewerColors::from(palette())) {
    setFocusPolicy(Qt::StrongFocus);
    setMinimumHeight(160);
    options_.lifetime_bars = true;
}

void MemoryWidget::paintTo(QPainter& painter, const QRect& area) {
    painter_.paint(painter, area, *session_, *axis_, colors_, options_);
}

void MemoryWidget::paintEvent(QPaintEvent*) {
    syncWidth();
    QPainter painter(this);
    paintTo(painter, rect());
}

void MemoryWidget::setMoment(std::optional<int64_t> moment) {
    options_.moment = moment;
    update();
}

void MemoryWidget::setLifetimeBars(bool on) {
    options_.lifetime_bars = on;
    update();
}

// Timeline and memory chart share one axis but not always one width (the details pane): each
// takes its own width before it uses the axis; the span stays, so both show the same times.
void MemoryWidget::syncWidth() {
    axis_->set_width(std::max(1, width() - kLabelWidth));
}

void MemoryWidget::resizeEvent(QResizeEvent*) {
    syncWidth();
}

bool MemoryWidget::event(QEvent* event) {
    if (event->type() == QEvent::PaletteChange) {
        colors_ = ViewerColors::from(palette());
        update();
    }
    return QWidget::event(event);
}

void MemoryWidget::wheelEvent(QWheelEvent* event) {
    syncWidth();
    axis_->zoom(std::pow(1.25, event->angleDelta().y() / 120.0), event->position().x() - kLabelWidth);
    emit axisChanged();
    update();
}

void MemoryWidget::mousePressEvent(QMouseEvent* event) {
    syncWidth();
    press_ = last_ = event->pos();
    dragging_ = false;
    setFocus();
}

void MemoryWidget::mouseMoveEvent(QMouseEvent* event) {
    if (!(event->buttons() & Qt::LeftButton)) return;
    if ((event->pos() - press_).manhattanLength() > 4) dragging_ = true;
    if (dragging_) {
        axis_->pan(last_.x() - event->pos().x());
        last_ = event->pos();
        emit axisChanged();
        update();
    }
}

void MemoryWidget::mouseReleaseEvent(QMouseEvent* event) {
    if (!dragging_ && event->pos().x() >= kLabelWidth) {
        const auto t = static_cast<int64_t>(axis_->trace_ns_at(event->pos().x() - kLabelWidth));
        const QRect plot = MemoryPainter::plotArea(rect());
        if (painter_.drewBars() && painter_.barHeight() > 0 && event->pos().y() >= plot.top()) {
            const int lane = (event->pos().y() - plot.top()) / painter_.barHeight();
            const double slack = 2 * axis_->ns_per_px();  // thin bars stay clickable
            if (const LifetimeBar* bar =
                    bar_at(painter_.bars(), axis_->trace_ns_at(event->pos().x() - kLabelWidth), lane, slack)) {
                options_.chosen = std::make_pair(bar->allocation, bar->subrange);
                update();
                emit barChosen(bar->allocation, bar->subrange);
                dragging_ = false;
                return;
            }
        }
        setMoment(t);
        emit momentChosen(t);
    }
    dragging_ = false;
}

void MemoryWidget::keyPressEvent(QKeyEvent* event) {
    syncWidth();
    const double centre = axis_->width() / 2.0;
    switch (event->key()) {
        case Qt::Key_W:
            axis_->zoom(1.5, centre);
            break;
        case Qt::Key_S:
            axis_->zoom(1 / 1.5, centre);
            break;
        case Qt::Key_A:
            axis_->pan(-axis_->width() * 0.15);
            break;
        case Qt::Key_D:
            axis_->pan(axis_->width() * 0.15);
            break;
        case Qt::Key_F:
            axis_->fit_run();
            break;
        default:
            QWidget::keyPressEvent(event);
            return;
    }
    emit axisChanged();
    update();
}

}  // namespace tbdprof::viewer
