#pragma once

// The Training page: the optimizer, its LR and the schedule from forms (generated from the core
// schemas) with a live chart of the LR at every step of the planned run; every trainer option
// in groups; the device; the LR finder. Invalid values are marked at their field with the
// reason (the same validation as the CLI).
#include <QPair>
#include <QString>
#include <QVector>
#include <QWidget>
#include <cstdint>
#include <optional>

#include "common/json.h"
#include "train/run_plan.h"

class QCheckBox;
class QComboBox;
class QCustomPlot;
class QLabel;
class QPushButton;
class QSpinBox;
class QVBoxLayout;

namespace netsmith::ui {

class BackgroundJob;
class ProjectDocument;
class SchemaForm;

class TrainingPage : public QWidget {
  Q_OBJECT

 public:
  explicit TrainingPage(ProjectDocument* document, QWidget* parent = nullptr);

  /// A file was loaded: rebuild the forms, read the training split's size (in the background).
  void projectLoaded();
  /// The project changed: values, problems and the chart again (the forms keep focus).
  void refresh();

  /// "basics" (epochs, batch size, seed), "optimizer", "schedule", "early_stopping", "plateau",
  /// or the name of a trainer option (the group holding it).
  SchemaForm* form(const QString& name) const;
  /// Every form on the page with where its fields live in the project ("train.",
  /// "train.optimizer.", "train.plateau.", ...), in the page's order.
  QVector<QPair<QString, SchemaForm*>> forms() const;
  /// The switch of an optional section ("early_stopping", "plateau").
  QCheckBox* sectionSwitch(const QString& key) const;
  QComboBox* optimizerType() const { return m_optimizerType; }
  QComboBox* scheduleType() const { return m_scheduleType; }
  QCustomPlot* lrChart() const { return m_chart; }
  /// The planned run (RunPlan, as the trainer makes it); empty until the data has been read
  /// or while the train section has problems.
  std::optional<train::RunPlan> plan() const;
  /// Optimizer steps per epoch of the planned run (0 until the data has been read).
  std::int64_t stepsPerEpoch() const;
  /// --limit-train of the runs the studio starts (0: all), so the plan counts what they train.
  void setTrainLimit(std::int64_t limit);
  /// A quick run on a subset: the "Quick run" fields (0: all samples), which the studio's runs
  /// and sweeps use as netsmith-cli's --limit-train and --limit-val. Not saved in the project.
  void setSampleLimits(std::int64_t train, std::int64_t validation);
  QSpinBox* trainLimitField() const { return m_trainLimit; }
  QSpinBox* validationLimitField() const { return m_validationLimit; }
  /// The LR of every planned step, as plotted.
  QVector<double> plottedLr() const;
  QString blockedReason() const;

 Q_SIGNALS:
  void lrFinderRequested();
  /// The training split's size is known (the chart shows the whole run).
  void planReady();
  /// The user changed the quick-run limits (0: all).
  void sampleLimitsChanged(qint64 train, qint64 validation);

 private:
  /// The optimizer types, the schedules and the devices in their drop-downs.
  void fillChoices();
  /// The forms in their groups (left), in a scroll area.
  QWidget* buildFormsPanel();
  /// The quick-run limits' fields, on `formsPanel`.
  QWidget* buildQuickRun(QWidget* formsPanel);
  /// The optional sections' groups (early stopping, plateau), each with its switch.
  void buildSectionForms(QWidget* formsPanel, QVBoxLayout* formsLayout);
  /// The planned LR chart with the plan, the LR finder and the blocked reason (right).
  QWidget* buildChartPanel();
  /// The forms' edits and "Sweep this setting" write the train section.
  void connectForms();
  /// The optimizer, schedule and device drop-downs and the LR finder button.
  void connectChoices();
  /// The project's loads and changes refresh the page.
  void connectDocument();
  void rebuildForms();
  void setTrainKey(const std::string& key, const Json& value, const QString& mergeKey);
  void editSub(const char* section, const QComboBox* type, const QString& key, const Json& value);
  void readTrainSize();
  void updateChart();
  void showProblems();

  ProjectDocument* m_document;
  SchemaForm* m_basics;
  SchemaForm* m_optimizer;
  SchemaForm* m_schedule;
  QVector<SchemaForm*> m_groups;  ///< the trainer options, by group
  struct SectionForm {
    std::string key;  ///< "early_stopping", "plateau"
    QCheckBox* enabled = nullptr;
    SchemaForm* form = nullptr;
  };
  QVector<SectionForm> m_sections;
  QComboBox* m_optimizerType;
  QComboBox* m_scheduleType;
  QComboBox* m_device;
  QCustomPlot* m_chart;
  QLabel* m_planLabel;
  QLabel* m_blocked;
  QPushButton* m_lrFind;
  QSpinBox* m_trainLimit;
  QSpinBox* m_validationLimit;
  std::int64_t m_trainSize = -1;  ///< -1: not read yet
  std::int64_t m_limitTrain = 0;
  BackgroundJob* m_sizeJob;  ///< reads the training split's size
};

}  // namespace netsmith::ui
