#include "evaluation/evaluation_page.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QStackedWidget>
#include <QVBoxLayout>

#include <algorithm>

#include "data/named_paths.h"
#include "eval/evaluator.h"
#include "evaluation/sample_dialog.h"
#include "evaluation/task_view.h"
#include "registries/registries.h"
#include "util/background_job.h"

namespace netsmith::ui {

EvaluationPage::EvaluationPage(RegistriesPtr registries, TaskViewsPtr views, QWidget* parent)
    : QWidget(parent),
      m_checkpointLabel(new QLabel(this)),
      m_split(new QComboBox(this)),
      m_tta(new QComboBox(this)),
      m_run(new QPushButton(tr("Evaluate"), this)),
      m_cancelButton(new QPushButton(tr("Cancel"), this)),
      m_progress(new QProgressBar(this)),
      m_summary(new QLabel(this)),
      m_views(new QStackedWidget(this)),
      m_placeholder(new QLabel(this)),
      m_result(std::make_unique<eval::Evaluation>()),
      m_job(new BackgroundJob(this)) {
  m_registries = std::move(registries);
  m_taskViews = std::move(views);
  setObjectName(QStringLiteral("evaluationPage"));
  m_split->addItems(
      {QStringLiteral("test"), QStringLiteral("validation"), QStringLiteral("train")});
  m_split->setObjectName(QStringLiteral("evaluationSplit"));
  m_tta->setObjectName(QStringLiteral("evaluationTta"));
  m_tta->addItem(tr("No TTA"), QString());
  m_tta->addItem(tr("TTA: flip"), QStringLiteral("flip"));
  m_tta->addItem(tr("TTA: flip + crops"), QStringLiteral("crops"));
  m_tta->setToolTip(
      tr("Test-time augmentation: average the class probabilities of each "
         "picture and its mirror image (and four shifted copies); the summary "
         "gives the accuracy gained over the picture alone."));
  m_run->setObjectName(QStringLiteral("evaluate"));
  m_cancelButton->setEnabled(false);
  m_progress->setMaximumWidth(260);
  m_summary->setObjectName(QStringLiteral("evaluationSummary"));
  m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
  // Wrapped: a task with many figures (detection's seven) must not widen the window.
  m_summary->setWordWrap(true);
  m_checkpointLabel->setWordWrap(true);
  auto* choose = new QPushButton(tr("Choose checkpoint..."), this);
  connect(choose, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getOpenFileName(this, tr("Choose a checkpoint"),
                                                      QFileInfo(m_checkpoint).absolutePath(),
                                                      tr("Checkpoints (*.safetensors)"));
    if (!path.isEmpty()) setCheckpoint(path);
  });
  connect(m_run, &QPushButton::clicked, this, &EvaluationPage::evaluate);
  connect(m_cancelButton, &QPushButton::clicked, this, &EvaluationPage::cancel);
  connect(m_job, &BackgroundJob::progress, this, [this](qint64 done, qint64 total) {
    m_progress->setMaximum(int(std::max<qint64>(1, total)));
    m_progress->setValue(int(done));
  });

  auto* top = new QHBoxLayout;
  top->addWidget(m_checkpointLabel, 1);
  top->addWidget(choose);
  top->addWidget(m_split);
  top->addWidget(m_tta);
  top->addWidget(m_run);
  top->addWidget(m_cancelButton);
  top->addWidget(m_progress);
  // Before a result, and for a task without a view of its own: a line in the view's place.
  m_placeholder->setObjectName(QStringLiteral("evaluationPlaceholder"));
  m_placeholder->setAlignment(Qt::AlignCenter);
  m_placeholder->setWordWrap(true);
  m_placeholder->setEnabled(false);
  m_views->setObjectName(QStringLiteral("evaluationViews"));
  m_views->addWidget(m_placeholder);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(top);
  layout->addWidget(m_summary);
  layout->addWidget(m_views, 1);
  setCheckpoint({});
}

void EvaluationPage::setCheckpoint(const QString& path) {
  if (path != m_checkpoint || path.isEmpty()) {
    // Another checkpoint (or none: a new project): the old figures no longer apply.
    m_job->cancel();
    clearResult();
  }
  if (path != m_checkpoint) m_dataFromCheckpoint = false;  // asked again for another file
  m_checkpoint = path;
  m_checkpointLabel->setText(path.isEmpty()
                                 ? tr("No checkpoint: train, or load one from the Runs page.")
                                 : tr("Checkpoint: %1").arg(path));
  m_run->setEnabled(!path.isEmpty() && !m_job->isRunning());
}

void EvaluationPage::setTask(const std::string& task) {
  const bool scales = m_registries->evaluators.forTask(task)->scalesClassScores();
  if (!scales) m_tta->setCurrentIndex(0);  // none: the only choice such a task has
  m_tta->setVisible(scales);
}

void EvaluationPage::evaluateAfterRun(const QString& path, const QString& split) {
  setCheckpoint(path);
  m_dataFromCheckpoint = true;  // a run of the open project: its data is the project's own
  m_split->setCurrentText(split);
  evaluate();
}

void EvaluationPage::clearResult() {
  *m_result = eval::Evaluation{};
  m_error.clear();
  m_summary->clear();
  // The previous checkpoint's task view goes too: the next result makes its own.
  showPlaceholder(
      tr("Evaluate a checkpoint to see its figures here: a classifier's confusion "
         "matrix, per-class precision and recall, calibration and embedding; the "
         "other tasks' own views."));
  delete m_taskView;
  m_taskView = nullptr;
  m_taskViewTask.clear();
  m_progress->setValue(0);
  m_cancelButton->setEnabled(false);
}

QString EvaluationPage::summaryText() const {
  const auto& e = *m_result;
  if (e.metrics.samples == 0) return {};
  // The checkpoint's tag: best, last or epoch-N, from its file name.
  const QString tag = QFileInfo(QString::fromStdString(e.checkpoint)).completeBaseName();
  // The task's figures as the run's log line words them (train::describeTestFigure).
  return tr("%1%2 on %3 images (checkpoint %4)")
      .arg(QString::fromStdString(e.split), QString::fromStdString(run::figuresText(e.metrics)))
      .arg(e.metrics.samples)
      .arg(tag);
}

void EvaluationPage::cancel() {
  m_job->requestStop();  // the evaluation ends early and shows what it has
}

bool EvaluationPage::isRunning() const {
  return m_job->isRunning();
}

void EvaluationPage::evaluate() {
  startEvaluation(false);
}

void EvaluationPage::fitTemperature() {
  startEvaluation(true);
}

void EvaluationPage::startEvaluation(bool fitTemperature) {
  if (m_checkpoint.isEmpty() || m_job->isRunning()) return;
  m_error.clear();
  m_run->setEnabled(false);
  if (m_taskView) m_taskView->setBusy(true);
  m_cancelButton->setEnabled(true);
  m_progress->setValue(0);
  m_summary->setText(fitTemperature ? tr("Fitting the temperature on the validation split...")
                                    : tr("Evaluating..."));
  eval::EvaluationOptions o;
  o.registries = m_registries;
  o.checkpoint = m_checkpoint.toStdString();
  o.split = m_split->currentText().toStdString();
  o.keepSamples = true;
  o.dataFromCheckpoint = m_dataFromCheckpoint;
  o.fitTemperature = fitTemperature;
  o.features = true;  // the Embedding tab lays them out
  o.tta = m_tta->currentData().toString().toStdString();
  // Data the user did not name (a checkpoint from elsewhere) comes back as a question.
  struct Outcome {
    eval::Evaluation evaluation;
    std::vector<std::string> unnamedData;
  };
  m_job->start(
      [o](const JobContext& job) mutable {
        o.progress = [&job](std::int64_t done, std::int64_t total) {
          job.progress(done, total);
          return !job.cancelled();
        };
        Outcome out;
        try {
          out.evaluation = eval::evaluateCheckpoint(o);
        } catch (const data::UnnamedDataError& e) {
          out.unnamedData = e.paths();
        }
        // What eval --fit-temperature records (at eval::calibrationFileFor), for eval and
        // export --temperature.
        if (out.evaluation.temperatureFitted && !out.evaluation.cancelled)
          eval::writeCalibrationFile(o.checkpoint, out.evaluation.temperatureFit);
        return out;
      },
      [this](Outcome result) {
        if (result.unnamedData.empty())
          evaluationDone(std::move(result.evaluation), {});
        else
          askToReadData(result.unnamedData);
      },
      [this](const QString& error) { evaluationDone({}, error); });
}

void EvaluationPage::askToReadData(const std::vector<std::string>& paths) {
  m_cancelButton->setEnabled(false);
  m_run->setEnabled(true);
  if (m_taskView) m_taskView->setBusy(false);
  QString list;
  for (std::size_t i = 0; i < paths.size() && i < 6; ++i)
    list += QStringLiteral("\n  ") + QString::fromStdString(paths[i]);
  if (paths.size() > 6) list += tr("\n  and %1 more").arg(paths.size() - 6);
  m_summary->setText(tr("Not evaluated: the checkpoint's data lies outside its folder."));
  // Window-modal and asynchronous: nothing waits on the answer.
  auto* box = new QMessageBox(
      QMessageBox::Question, tr("Read the checkpoint's data?"),
      tr("This checkpoint's project reads its data from:%1\n\nThese paths are outside the "
         "checkpoint's folder (a checkpoint, or a project file beside it, may have come from "
         "someone else). Read them to evaluate?")
          .arg(list),
      QMessageBox::Yes | QMessageBox::No, this);
  box->setDefaultButton(QMessageBox::No);
  box->setAttribute(Qt::WA_DeleteOnClose);
  connect(box, &QMessageBox::finished, this, [this](int answer) {
    if (answer != QMessageBox::Yes) {
      m_summary->setText(
          tr("Not evaluated: the checkpoint's data lies outside its folder. Load the checkpoint "
             "from its project's Runs page, or evaluate it with netsmith-cli eval --data."));
      return;
    }
    m_dataFromCheckpoint = true;
    evaluate();
  });
  box->open();
  Q_EMIT evaluated();
}

void EvaluationPage::evaluationDone(eval::Evaluation result, const QString& error) {
  m_cancelButton->setEnabled(false);
  m_run->setEnabled(true);
  if (m_taskView) m_taskView->setBusy(false);
  m_error = error;
  if (error.isEmpty()) {
    if (m_taskView) m_taskView->clearResult();  // it may point into the result being replaced
    *m_result = std::move(result);
    showResult();
  } else {
    m_summary->setText(tr("<b>Evaluation failed:</b> %1").arg(error.toHtmlEscaped()));
  }
  Q_EMIT evaluated();
}

void EvaluationPage::showResult() {
  const auto& e = *m_result;
  setTask(e.task);
  if (!m_taskView || m_taskViewTask != e.task) {
    delete m_taskView;  // a view of another task
    m_taskView = m_taskViews->make(e.task, m_views);
    m_taskViewTask = e.task;
    if (m_taskView) {
      m_views->addWidget(m_taskView);
      connect(m_taskView, &TaskView::sampleRequested, this, &EvaluationPage::openSampleDialog);
      connect(m_taskView, &TaskView::temperatureFitRequested, this,
              &EvaluationPage::fitTemperature);
    }
  }
  if (!m_taskView) {
    // A task with no view of its own: its figures in the summary.
    m_summary->setText(TaskView::taskSummaryLine(e, summaryText()));
    showPlaceholder(tr("Task %1 has no view of its own: its figures are in the line above.")
                        .arg(QString::fromStdString(e.task)));
    return;
  }
  m_summary->setText(m_taskView->summaryLine(e, summaryText()));
  m_views->setCurrentWidget(m_taskView);
  m_taskView->showResult(e);
}

void EvaluationPage::showPlaceholder(const QString& text) {
  m_placeholder->setText(text);
  m_views->setCurrentWidget(m_placeholder);
}

SampleDialog* EvaluationPage::openSample(qint64 position) {
  return qobject_cast<SampleDialog*>(openSampleDialog(position));
}

QDialog* EvaluationPage::openSampleDialog(qint64 position) {
  for (const auto& s : m_result->samples) {
    if (s.position != position) continue;
    QDialog* dialog =
        m_taskView ? m_taskView->sampleDialog(m_checkpoint, m_registries, s, *m_result) : nullptr;
    if (!dialog) return nullptr;
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->show();
    return dialog;
  }
  return nullptr;
}

}  // namespace netsmith::ui
