#pragma once

#include <QFrame>

class QLabel;

namespace netsmith::ui {

/// The banner over the project's pages: an error (red) or a notice to read (neutral, e.g. what
/// an import changed), selectable, with a button that dismisses it.
class Banner : public QFrame {
  Q_OBJECT

 public:
  explicit Banner(QWidget* parent = nullptr);
  void showText(const QString& text, bool error = true);
  void dismiss();
  /// What it says ("" while hidden).
  QString text() const;
  /// Its colours again, for the theme now in use.
  void restyle();

 private:
  QLabel* m_text;
  bool m_error = true;
};

}  // namespace netsmith::ui
