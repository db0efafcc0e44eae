#include "shell/project_pages.h"

#include <QHBoxLayout>
#include <QListWidget>
#include <QStackedWidget>

#include "editor/model_page.h"
#include "evaluation/evaluation_page.h"
#include "evaluation/predict_page.h"
#include "forms/augment_page.h"
#include "forms/data_page.h"
#include "forms/training_page.h"
#include "monitor/dashboard.h"
#include "monitor/experiments_page.h"
#include "monitor/runs_page.h"
#include "session/project_document.h"

namespace netsmith::ui {

ProjectPages::ProjectPages(ProjectDocument* document, TaskViewsPtr views, QWidget* parent)
    : QWidget(parent),
      m_document(document),
      m_navigator(new QListWidget(this)),
      m_stack(new QStackedWidget(this)),
      m_dashboard(new Dashboard(this)),
      m_dataPage(new ::netsmith::ui::DataPage(document, this)) {
  m_navigator->setObjectName(QStringLiteral("navigator"));
  m_navigator->addItems({tr("Model"), tr("Data"), tr("Augment"), tr("Training"), tr("Dashboard"),
                         tr("Runs"), tr("Evaluation"), tr("Experiments"), tr("Predict")});
  m_navigator->setFixedWidth(m_navigator->sizeHintForColumn(0) + 36);
  m_navigator->setToolTip(tr("The project's pages (Ctrl+1 .. Ctrl+9)"));
  m_stack->setObjectName(QStringLiteral("pages"));
  m_modelPage = new ::netsmith::ui::ModelPage(m_document, this);
  m_stack->addWidget(m_modelPage);

  m_stack->addWidget(m_dataPage);
  connect(m_dataPage, &::netsmith::ui::DataPage::scanned, this, &ProjectPages::dataSummaryReady);
  m_augmentPage = new ::netsmith::ui::AugmentPage(m_document, this);
  m_stack->addWidget(m_augmentPage);
  m_trainingPage = new ::netsmith::ui::TrainingPage(m_document, this);
  m_stack->addWidget(m_trainingPage);
  m_stack->addWidget(m_dashboard);
  m_runsPage = new ::netsmith::ui::RunsPage(m_document, m_dashboard, this);
  connect(m_runsPage, &::netsmith::ui::RunsPage::checkpointChosen, this,
          &ProjectPages::checkpointChosen);
  m_stack->addWidget(m_runsPage);
  m_evaluationPage =
      new ::netsmith::ui::EvaluationPage(m_document->registries(), std::move(views), this);
  m_stack->addWidget(m_evaluationPage);
  m_experimentsPage = new ::netsmith::ui::ExperimentsPage(m_document, m_dashboard, this);
  m_stack->addWidget(m_experimentsPage);
  m_predictPage = new ::netsmith::ui::PredictPage(m_document->registries(), this);
  m_stack->addWidget(m_predictPage);

  auto* layout = new QHBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_navigator);
  layout->addWidget(m_stack, 1);
  connect(m_navigator, &QListWidget::currentRowChanged, this, [this](int row) {
    m_stack->setCurrentIndex(row);
    if (row == DataPage && !m_dataPage->result().ok && !m_dataPage->isScanning() &&
        !m_document->filePath().isEmpty())
      loadDataSummary();
    if (row == RunsPage) refreshRuns();
  });
  m_navigator->setCurrentRow(ModelPage);
}

void ProjectPages::showPage(Page page) {
  m_navigator->setCurrentRow(int(page));
}

ProjectPages::Page ProjectPages::currentPage() const {
  return Page(m_stack->currentIndex());
}

void ProjectPages::refresh() {
  m_modelPage->modelChanged();
  if (currentPage() == RunsPage) refreshRuns();
}

void ProjectPages::loadDataSummary() {
  m_dataPage->scan();
}

void ProjectPages::refreshRuns() {
  m_runsPage->refresh();
}

const QVector<RunHistory>& ProjectPages::runs() const {
  return m_runsPage->runs();
}

void ProjectPages::selectRun(int row) {
  m_runsPage->selectRun(row);
}

void ProjectPages::overlaySelectedRun() {
  m_runsPage->overlaySelectedRun();
}

}  // namespace netsmith::ui
