#pragma once

// The studio's log: an spdlog sink feeds a panel with a level filter, a text filter and Copy.
// Lines from any thread are queued to the UI thread. Compact, it is one line (the newest shown
// line and a button that opens the full log): the window does that on a short screen.
#include <QPlainTextEdit>
#include <QString>
#include <QVector>
#include <QWidget>
#include <memory>

class QComboBox;
class QLabel;
class QLineEdit;
class QToolButton;

namespace spdlog::sinks {
class sink;
}

namespace netsmith::ui {

class LogPanel : public QWidget {
  Q_OBJECT

 public:
  explicit LogPanel(QWidget* parent = nullptr);
  ~LogPanel() override;  ///< detaches its sink from spdlog's default logger

  /// Levels as spdlog names them: trace, debug, info, warning, error, critical.
  void append(int level, const QString& text);
  /// Show lines at or above `level` containing `filter` (case-insensitive).
  void setMinimumLevel(int level);
  void setFilter(const QString& filter);
  /// The lines shown now, one per line.
  QString visibleText() const;
  /// Copies the shown lines (or the selection) to the clipboard.
  void copy();
  int lineCount() const { return m_lines.size(); }
  /// One line (the newest shown line) or the whole panel.
  void setCompact(bool compact);
  bool isCompact() const { return m_compact; }

 Q_SIGNALS:
  /// The user opened or folded the panel with its button.
  void compactToggled(bool compact);

 private:
  struct Line {
    int level;
    QString text;
  };
  bool shows(const Line& line) const;
  void rebuild();

  std::shared_ptr<spdlog::sinks::sink> m_sink;
  QVector<Line> m_lines;
  int m_minLevel = 2;  // info
  QString m_filter;
  QPlainTextEdit* m_view;
  QComboBox* m_levelBox;
  QLineEdit* m_filterEdit;
  QWidget* m_full;     ///< the filter bar and the text
  QWidget* m_oneLine;  ///< the newest line and the "Show log" button
  QLabel* m_lastLine;
  bool m_compact = false;
};

}  // namespace netsmith::ui
