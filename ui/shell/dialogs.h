#pragma once

// The studio's dialogs: Environment (the `netsmith-cli env` report), Preferences, the export
// report, the LR finder's result and File > New's task; and the theme.
#include <QDialog>
#include <QList>
#include <QString>

class QComboBox;
class QDoubleSpinBox;
class QListWidget;
class QPlainTextEdit;
class QSpinBox;

namespace netsmith::train {
struct LrFindResult;
}

namespace netsmith::exporting {
struct ExportJobResult;
}

namespace netsmith::ui {

/// "system" (the platform's palette), "light" or "dark".
void applyTheme(const QString& theme);

/// Preferences kept with QSettings.
struct Preferences {
  QString theme = QStringLiteral("system");
  int threads = 0;         ///< LibTorch intra-op threads (0: one per core)
  double smoothing = 0.6;  ///< default loss smoothing of the dashboard
  static Preferences load();
  void save() const;
};

class EnvironmentDialog : public QDialog {
  Q_OBJECT
 public:
  explicit EnvironmentDialog(QWidget* parent = nullptr);
  QString reportText() const;

 private:
  QPlainTextEdit* m_text;
};

class PreferencesDialog : public QDialog {
  Q_OBJECT
 public:
  explicit PreferencesDialog(const Preferences& current, QWidget* parent = nullptr);
  Preferences preferences() const;

 private:
  QComboBox* m_theme;
  QSpinBox* m_threads;
  QDoubleSpinBox* m_smoothing;
};

/// The outcome of an export: each file, its verification and the ONNX parity figures.
class ExportReportDialog : public QDialog {
  Q_OBJECT
 public:
  ExportReportDialog(const QString& checkpoint, const exporting::ExportJobResult& result,
                     QWidget* parent = nullptr);
  ExportReportDialog(const QString& checkpoint, const QString& error, QWidget* parent = nullptr);
  QString reportText() const;
  bool passed() const { return m_passed; }
  /// The folder the files were written to ("" when none was), opened by "Open folder".
  QString folder() const { return m_folder; }

 private:
  void build(const QString& title, const QString& html);
  QPlainTextEdit* m_text = nullptr;
  QString m_folder;
  bool m_passed = false;
};

/// The LR range test's curve (loss against a log learning rate) with the suggestion marked.
class LrFinderDialog : public QDialog {
  Q_OBJECT
 public:
  LrFinderDialog(const train::LrFindResult& result, QWidget* parent = nullptr);
  QString summary() const { return m_summary; }
  double suggestedLr() const { return m_suggested; }

 Q_SIGNALS:
  /// "Use this learning rate": the suggestion (rounded to 2 significant digits).
  void useLearningRate(double lr);

 private:
  QString m_summary;
  double m_suggested = 0;
};

/// A task as the studio offers it: File > New's choices, the start page's filter and lines.
struct TaskChoice {
  QString name;          ///< the project's "task" key ("multilabel")
  QString title;         ///< "Multi-label"
  QString noun;          ///< "multi-label", as a line of the start page names it
  QString data;          ///< what its data looks like, in one line
  QString templateFile;  ///< the template a new project takes its data and settings from
};

/// File > New's first question: the task, one line each on what its data looks like.
/// Classification is chosen at first; Enter (or a double click) accepts, Esc cancels.
class NewProjectTaskDialog : public QDialog {
  Q_OBJECT
 public:
  explicit NewProjectTaskDialog(QWidget* parent = nullptr);
  /// The chosen task's name ("classification", "multilabel", ...).
  QString task() const;
  QListWidget* list() const { return m_list; }

  /// The tasks the studio offers, in the order it lists them (classification first).
  static QList<TaskChoice> choices();
  /// The choice named `task`; a task the studio does not offer gets its name as its title and
  /// no template.
  static TaskChoice choice(const QString& task);

 private:
  QListWidget* m_list;
};

}  // namespace netsmith::ui
