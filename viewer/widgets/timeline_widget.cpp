#include "timeline_widget.h"

#include <QHelpEvent>
#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include "tbdprof/analyzer/units.h"
#include "trace_session.h"

namespace tbdprof::viewer {

TimelineWidget::TimelineWidget(TraceSession* session, TimeAxis* axis, QWidget* parent)
    : QWidget(parent), session_(session), axis_(axis), colors_(ViewerColors::from(palette())) {
    setFocusPolicy(Qt::StrongFocus);
    setMouseTracking(true);
    setMinimumHeight(160);
    setAccessibleName(QStringLiteral("timeline"));
}

void TimelineWidget::paintTo(QPainter& painter, const QRect& area) {
    painter_.paint(painter, area, *session_, *axis_, colors_, selection_, first_row_);
    if (range_) {  // the chosen range, shaded over every row
        const double x0 = area.left() + kLabelWidth + axis_->x_of(range_->first);
        const double x1 = area.left() + kLabelWidth + axis_->x_of(range_->second);
        QColor shade = colors_.selection;
        shade.setAlphaF(0.18f);
        painter.fillRect(QRectF(x0, area.top() + kRulerHeight, std::max(1.0, x1 - x0), area.height() - kRulerHeight),
                         shade);
        painter.setPen(QPen(colors_.selection, 1));
        painter.drawLine(QPointF(x0, area.top() + kRulerHeight), QPointF(x0, area.bottom()));
        painter.drawLine(QPointF(x1, area.top() + kRulerHeight), QPointF(x1, area.bottom()));
    }
}

void TimelineWidget::paintEvent(QPaintEvent*) {
    syncWidth();
    QPainter painter(this);
    paintTo(painter, rect());
}

// Timeline and memory chart share one axis but not always one width (the details pane): each
// takes its own width before it uses the axis; the span stays, so both show the same times.
void TimelineWidget::syncWidth() {
    axis_->set_width(std::max(1, width() - kLabelWidth));
}

void TimelineWidget::resizeEvent(QResizeEvent*) {
    syncWidth();
}

bool TimelineWidget::event(QEvent* event) {
    if (event->type() == QEvent::PaletteChange) {
        colors_ = ViewerColors::from(palette());
        update();
    }
    if (event->type() == QEvent::ToolTip) {
        // The full (demangled) name of what is under the cursor.
        auto* help = static_cast<QHelpEvent*>(event);
        const Selection under = TimelinePainter::hit(*session_, *axis_, help->pos(), first_row_);
        if (under.valid()) {
            const TimelineRow& row = *session_->rows()[static_cast<size_t>(under.row)];
            QToolTip::showText(help->globalPos(),
                               QString::fromStdString(
                                   row.label_of(under.item) + "\n" +
                                   analyzer::format_duration_ns(static_cast<double>(row.items.duration(under.item)))),
                               this);
        } else {
            QToolTip::hideText();
        }
        return true;
    }
    return QWidget::event(event);
}

void TimelineWidget::select(const Selection& selection) {
    selection_ = selection;
    update();
    emit selectionChanged(selection_);
}

void TimelineWidget::highlightKernel(const QString& name) {
    painter_.setHighlight(session_, name);
    update();
}

double TimelineWidget::centreX() const {
    const QPoint cursor = mapFromGlobal(QCursor::pos());
    return rect().contains(cursor) && cursor.x() > kLabelWidth ? cursor.x() - kLabelWidth : axis_->width() / 2.0;
}

void TimelineWidget::pushHistory() {
    history_.emplace_back(axis_->begin_trace_ns(), axis_->end_trace_ns());
    if (history_.size() > 100) history_.erase(history_.begin());
}

void TimelineWidget::back() {
    if (history_.empty()) return;
    axis_->fit(history_.back().first, history_.back().second, false);
    history_.pop_back();
    emit axisChanged();
    update();
}

void TimelineWidget::reset() {
    pushHistory();
    axis_->fit_run();
    emit axisChanged();
    update();
}

void TimelineWidget::wheelEvent(QWheelEvent* event) {
    syncWidth();
    const double steps = event->angleDelta().y() / 120.0;
    if (event->modifiers() & Qt::ShiftModifier) {  // scroll rows
        first_row_ = std::clamp(first_row_ - static_cast<int>(steps), 0,
                                std::max(0, static_cast<int>(session_->rows().size()) - 1));
    } else {
        axis_->zoom(std::pow(1.25, steps), event->position().x() - kLabelWidth);
        emit axisChanged();
    }
    update();
    event->accept();
}

void TimelineWidget::mousePressEvent(QMouseEvent* event) {
    syncWidth();
    press_ = last_ = event->pos();
    dragging_ = false;
    ranging_ = (event->modifiers() & Qt::ShiftModifier) && event->pos().x() >= kLabelWidth;
    setFocus();
}

void TimelineWidget::mouseMoveEvent(QMouseEvent* event) {
    if (!(event->buttons() & Qt::LeftButton)) return;
    if (!dragging_ && (event->pos() - press_).manhattanLength() > 4) {
        dragging_ = true;
        pushHistory();
    }
    if (dragging_ && ranging_) {  // Shift+drag: choose a range instead of panning
        const double a = axis_->trace_ns_at(press_.x() - kLabelWidth),
                     b = axis_->trace_ns_at(event->pos().x() - kLabelWidth);
        range_ = std::make_pair(std::min(a, b), std::max(a, b));
        update();
        return;
    }
    if (dragging_) {
        axis_->pan(last_.x() - event->pos().x());
        last_ = event->pos();
        emit axisChanged();
        update();
    }
}

void TimelineWidget::mouseReleaseEvent(QMouseEvent* event) {
    if (dragging_ && ranging_ && range_) {
        emit rangeSelected(range_->first, range_->second);
    } else if (!dragging_) {
        range_.reset();
        select(TimelinePainter::hit(*session_, *axis_, event->pos(), first_row_));
    }
    dragging_ = false;
    ranging_ = false;
}

void TimelineWidget::step(int direction) {
    if (!selection_.valid()) return;
    const TimelineRow& row = *session_->rows()[static_cast<size_t>(selection_.row)];
    const size_t next = direction > 0 ? selection_.item + 1 : selection_.item - 1;
    if (next >= row.items.size()) return;
    Selection s{selection_.row, next};
    const double x = axis_->x_of(static_cast<double>(row.items.start(next)));
    if (x < 0 || x > axis_->width()) axis_->pan(x - axis_->width() / 2.0);
    emit axisChanged();
    select(s);
}

void TimelineWidget::keyPressEvent(QKeyEvent* event) {
    syncWidth();
    switch (event->key()) {
        case Qt::Key_W:
            pushHistory();
            axis_->zoom(1.5, centreX());
            break;
        case Qt::Key_S:
            pushHistory();
            axis_->zoom(1 / 1.5, centreX());
            break;
        case Qt::Key_A:
            axis_->pan(-axis_->width() * 0.15);
            break;
        case Qt::Key_D:
            axis_->pan(axis_->width() * 0.15);
            break;
        case Qt::Key_F:
            pushHistory();
            if (selection_.valid()) {
                const TimelineRow& row = *session_->rows()[static_cast<size_t>(selection_.row)];
                axis_->fit(static_cast<double>(row.items.start(selection_.item)),
                           static_cast<double>(row.items.end(selection_.item)));
            } else {
                axis_->fit_run();
            }
            break;
        case Qt::Key_Period:
            step(1);
            return;
        case Qt::Key_Comma:
            step(-1);
            return;
        case Qt::Key_Backspace:
            back();
            return;
        case Qt::Key_R:
            reset();
            return;
        default:
            QWidget::keyPressEvent(event);
            return;
    }
    emit axisChanged();
    update();
}

}  // namespace tbdprof::viewer
