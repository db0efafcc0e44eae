#include "shell/recent_files.h"

#include <QFileInfo>
#include <QMenu>
#include <QSettings>

namespace netsmith::ui {

namespace {
constexpr int kMaxRecent = 8;
const QString kKey = QStringLiteral("recentFiles");
}  // namespace

RecentFiles::RecentFiles(QMenu* menu) : QObject(menu), m_menu(menu) {
  connect(m_menu, &QMenu::aboutToShow, this, &RecentFiles::fill);
}

QStringList RecentFiles::list() {
  return QSettings().value(kKey).toStringList();
}

void RecentFiles::add(const QString& path) {
  QStringList paths = list();
  paths.removeAll(path);
  paths.prepend(path);
  while (paths.size() > kMaxRecent)
    paths.removeLast();
  QSettings().setValue(kKey, paths);
}

void RecentFiles::fill() {
  m_menu->clear();
  const QStringList paths = list();
  for (int i = 0; i < paths.size(); ++i) {
    const QString path = paths[i];
    QAction* a = m_menu->addAction(QStringLiteral("&%1 %2").arg(i + 1).arg(path), this,
                                   [this, path] { Q_EMIT openRequested(path); });
    a->setEnabled(QFileInfo::exists(path));
  }
  if (paths.isEmpty()) {
    m_menu->addAction(tr("(none)"))->setEnabled(false);
  } else {
    m_menu->addSeparator();
    m_menu->addAction(tr("Clear the list"), this, [] { QSettings().remove(kKey); });
  }
}

}  // namespace netsmith::ui
