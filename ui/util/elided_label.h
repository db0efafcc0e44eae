#pragma once

// A one-line label that never pushes its neighbours: text too long for its width ends in "..."
// and the whole text is its tooltip (the status bar's run state beside the progress bar).
#include <QFontMetrics>
#include <QLabel>
#include <QResizeEvent>

namespace netsmith::ui {

class ElidedLabel : public QLabel {
 public:
  explicit ElidedLabel(const QString& text = {}, QWidget* parent = nullptr) : QLabel(parent) {
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    setMinimumWidth(120);
    setFullText(text);
  }
  /// The whole text; what shows is elided to the label's width.
  void setFullText(const QString& text) {
    m_full = text;
    setToolTip(text);
    elide();
  }
  QString fullText() const { return m_full; }
  QSize sizeHint() const override {
    return {std::min(fontMetrics().horizontalAdvance(m_full) + 8, 520),
            QLabel::sizeHint().height()};
  }

 protected:
  void resizeEvent(QResizeEvent* event) override {
    QLabel::resizeEvent(event);
    elide();
  }

 private:
  void elide() { QLabel::setText(fontMetrics().elidedText(m_full, Qt::ElideRight, width())); }
  QString m_full;
};

}  // namespace netsmith::ui
