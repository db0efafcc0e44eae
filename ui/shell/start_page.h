#pragma once

// What the studio shows while no project is open: New / Open / Import, the recent projects,
// and the example projects and templates by name, each with a picture of its network and a
// line saying what it is and for which task, filtered by task; and the example data sets for
// the other tasks, written into a folder in the background (shell/example_data_box.h).
#include <QString>
#include <QStringList>
#include <QWidget>
#include <vector>

#include "graph/model_graph.h"

class QComboBox;
class QListWidget;

namespace netsmith::ops {
class OpRegistry;
}

namespace netsmith::ui {

class ExampleDataBox;

class StartPage : public QWidget {
  Q_OBJECT

 public:
  /// `templatesDir` holds the templates; the example projects are in its sibling `examples`.
  StartPage(const ops::OpRegistry& registry, const QString& templatesDir,
            QWidget* parent = nullptr);

  /// The recent projects, newest first (missing files are left out).
  void setRecent(const QStringList& paths);
  QListWidget* recentList() const { return m_recent; }
  QListWidget* examplesList() const { return m_examples; }
  /// Shows the examples and templates of one task (item 0: all tasks; the item's data is the
  /// task's name, "" for all).
  QComboBox* taskFilter() const { return m_taskFilter; }
  ExampleDataBox* exampleData() const { return m_exampleData; }

 Q_SIGNALS:
  void openRequested(const QString& path);   ///< a recent project
  void templateChosen(const QString& path);  ///< an example or template, to copy and open
  void newBlankRequested();
  void newFromDataRequested();
  void openDialogRequested();
  void importRequested();
  /// An example data set was written to `folder`: New from data goes on from it.
  void exampleDataMade(const QString& folder);

 protected:
  void showEvent(QShowEvent* event) override;
  void changeEvent(QEvent* event) override;

 private:
  /// An example or template as listed: read once, its picture drawn again per theme.
  struct Entry {
    QString path, title, line, tooltip;
    QString task;  ///< the project's task ("classification" without a "task" key)
    graph::ModelGraph model;
  };
  void fillExamples();
  /// Hides the entries of other tasks than the filter's.
  void applyTaskFilter();
  void addProjects(const QString& dir, const QString& kind);

  const ops::OpRegistry& m_registry;
  QListWidget* m_recent;
  QListWidget* m_examples;
  QComboBox* m_taskFilter;
  ExampleDataBox* m_exampleData;
  QString m_templatesDir;
  std::vector<Entry> m_entries;
  bool m_loaded = false;
};

}  // namespace netsmith::ui
