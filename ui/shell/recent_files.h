#pragma once

#include <QObject>
#include <QStringList>

class QMenu;

namespace netsmith::ui {

/// File > Open Recent: the projects opened last (newest first, in the user's settings), listed
/// in the menu each time it opens; a project no longer there is shown disabled.
class RecentFiles : public QObject {
  Q_OBJECT

 public:
  /// Fills `menu` as it is about to show.
  explicit RecentFiles(QMenu* menu);
  static QStringList list();
  /// Puts `path` first (once), keeping the newest eight.
  static void add(const QString& path);

 Q_SIGNALS:
  void openRequested(const QString& path);

 private:
  void fill();

  QMenu* m_menu;
};

}  // namespace netsmith::ui
