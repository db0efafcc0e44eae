#pragma once

#include <QString>
#include <QWidget>

class QTextBrowser;
class QToolButton;

namespace netsmith::ui {

/// The user guide (docs/guide/, Markdown) in a window of its own: one page at a time, its links
/// followed inside (other pages, their sections and pictures), web links in the browser,
/// back / forward / contents. Help > Guide for this page (F1) opens it at the page the studio
/// shows.
class GuideWindow : public QWidget {
  Q_OBJECT

 public:
  /// `guideDir`: the folder of README.md and the topic pages ("" when the guide is missing: the
  /// window says where it looked).
  explicit GuideWindow(const QString& guideDir, QWidget* parent = nullptr);

  /// Shows `page` ("training.md", or "training.md#resume" for a section).
  void showPage(const QString& page);
  /// The page shown ("training.md"), "" for none.
  QString currentPage() const;
  QTextBrowser* browser() const { return m_browser; }

 private:
  void updateTitle();

  QString m_dir;
  QTextBrowser* m_browser = nullptr;
  QToolButton* m_back = nullptr;
  QToolButton* m_forward = nullptr;
};

}  // namespace netsmith::ui
