#pragma once

#include <QMainWindow>

#include "ops/op_registry.h"

class QLabel;
class QListWidget;
class QTableWidget;

namespace netsmith::ui {

class ProjectDocument;

/// The studio's main window. For now a shell: it opens a project and shows its model summary
/// and problems; the editors, training charts and export menu arrive in later versions.
class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  explicit MainWindow(const ops::OpRegistry& registry, QWidget* parent = nullptr);

  /// Opens `path`; shows the error in a message box (unless `quiet`) and returns false on failure.
  bool openProject(const QString& path, bool quiet = false);
  ProjectDocument* document() const { return m_document; }

 private:
  void buildMenus();
  void refresh();
  void openWithDialog();
  void showAbout();

  ProjectDocument* m_document;
  QLabel* m_title;
  QTableWidget* m_table;
  QListWidget* m_problems;
  QLabel* m_totals;
};

}  // namespace netsmith::ui
