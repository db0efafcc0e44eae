#include "project_pages.h"

#include <QApplication>
#include <QDesktopServices>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QPointer>
#include <QPushButton>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableWidget>
#include <QTreeWidget>
#include <QUrl>
#include <QVBoxLayout>
#include <cmath>
#include <thread>

#include "augment_page.h"
#include "dashboard.h"
#include "data/project_data.h"
#include "data_page.h"
#include "evaluation_page.h"
#include "graph/model_summary.h"
#include "model_page.h"
#include "project_document.h"
#include "train/train_options.h"
#include "training_page.h"

namespace netsmith::ui {

namespace {

QTreeWidget* makeTree(const QString& name, const QStringList& headers, QWidget* parent) {
  auto* tree = new QTreeWidget(parent);
  tree->setObjectName(name);
  tree->setRootIsDecorated(false);
  tree->setAlternatingRowColors(true);
  tree->setHeaderLabels(headers);
  tree->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  tree->header()->setStretchLastSection(true);
  return tree;
}

}  // namespace

ProjectPages::ProjectPages(ProjectDocument* document, QWidget* parent)
    : QWidget(parent),
      m_document(document),
      m_navigator(new QListWidget(this)),
      m_stack(new QStackedWidget(this)),
      m_dashboard(new Dashboard(this)),
      m_dataPage(new ::netsmith::ui::DataPage(document, this)) {
  m_navigator->setObjectName(QStringLiteral("navigator"));
  m_navigator->addItems({tr("Model"), tr("Data"), tr("Augment"), tr("Training"), tr("Dashboard"),
                         tr("Runs"), tr("Evaluation")});
  m_navigator->setFixedWidth(m_navigator->sizeHintForColumn(0) + 36);
  m_navigator->setToolTip(tr("The project's pages (Ctrl+1 .. Ctrl+7)"));
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
  m_stack->addWidget(buildRunsPage());
  m_evaluationPage = new ::netsmith::ui::EvaluationPage(this);
  m_stack->addWidget(m_evaluationPage);

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

QWidget* ProjectPages::buildRunsPage() {
  auto* page = new QWidget(this);
  m_runsInfo = new QLabel(page);
  m_runsInfo->setWordWrap(true);
  m_runsTable = makeTree(
      QStringLiteral("runsTable"),
      {tr("Run"), tr("Epochs"), tr("Best val acc"), tr("Last val loss"), tr("Checkpoints")}, page);
  m_checkpoints = makeTree(QStringLiteral("runCheckpoints"), {tr("Checkpoint"), tr("Size")}, page);
  auto* refresh = new QPushButton(tr("Refresh"), page);
  auto* overlay = new QPushButton(tr("Overlay on charts"), page);
  overlay->setObjectName(QStringLiteral("runOverlay"));
  auto* clear = new QPushButton(tr("Clear overlays"), page);
  auto* loadBest = new QPushButton(tr("Load best checkpoint"), page);
  loadBest->setObjectName(QStringLiteral("runLoadBest"));
  loadBest->setToolTip(tr("Use this run's best checkpoint for export and resume"));
  auto* openFolder = new QPushButton(tr("Open folder"), page);
  connect(refresh, &QPushButton::clicked, this, &ProjectPages::refreshRuns);
  connect(overlay, &QPushButton::clicked, this, &ProjectPages::overlaySelectedRun);
  connect(clear, &QPushButton::clicked, m_dashboard, &Dashboard::clearOverlays);
  connect(loadBest, &QPushButton::clicked, this, [this] {
    const int row = m_runsTable->indexOfTopLevelItem(m_runsTable->currentItem());
    if (row < 0) return;
    const QString path = m_runs[row].bestCheckpoint();
    if (!path.isEmpty()) Q_EMIT checkpointChosen(path);
  });
  connect(openFolder, &QPushButton::clicked, this, [this] {
    const int row = m_runsTable->indexOfTopLevelItem(m_runsTable->currentItem());
    if (row >= 0) QDesktopServices::openUrl(QUrl::fromLocalFile(m_runs[row].dir));
  });
  connect(m_runsTable, &QTreeWidget::currentItemChanged, this, &ProjectPages::showRunDetails);
  connect(m_checkpoints, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
    Q_EMIT checkpointChosen(item->data(0, Qt::UserRole).toString());
  });
  auto* buttons = new QHBoxLayout;
  for (auto* b : {refresh, overlay, clear, loadBest, openFolder})
    buttons->addWidget(b);
  buttons->addStretch(1);
  auto* layout = new QVBoxLayout(page);
  layout->addWidget(m_runsInfo);
  layout->addLayout(buttons);
  auto* splitter = new QSplitter(Qt::Vertical, page);
  splitter->addWidget(m_runsTable);
  splitter->addWidget(m_checkpoints);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 1);
  layout->addWidget(splitter, 1);
  return page;
}

void ProjectPages::refresh() {
  m_modelPage->modelChanged();
  if (currentPage() == RunsPage) refreshRuns();
}

void ProjectPages::loadDataSummary() {
  m_dataPage->scan();
}

void ProjectPages::refreshRuns() {
  const QString dir = m_document->baseDir();
  m_runsTable->clear();
  m_checkpoints->clear();
  m_runs.clear();
  if (m_document->filePath().isEmpty()) {
    m_runsInfo->setText(tr("No project open."));
    return;
  }
  const QString root = QDir(dir).filePath(QStringLiteral("runs"));
  QStringList errors;
  m_runs = listRuns(root, QString::fromStdString(m_document->project().name), &errors);
  m_runsInfo->setText(tr("%n run(s) of this project in %1", nullptr, m_runs.size()).arg(root) +
                      (errors.isEmpty()
                           ? QString()
                           : QStringLiteral("<br>") + errors.join(QStringLiteral("<br>"))));
  for (const auto& run : m_runs) {
    auto* item = new QTreeWidgetItem(m_runsTable);
    item->setText(0, run.name);
    item->setText(1, QString::number(run.epochs()));
    const double best = run.bestValAccuracy();
    item->setText(2, std::isfinite(best) ? QString::number(100 * best, 'f', 2) + "%" : "-");
    item->setText(3, run.epochValLoss.isEmpty() || !std::isfinite(run.epochValLoss.back())
                         ? QStringLiteral("-")
                         : QString::number(run.epochValLoss.back(), 'f', 4));
    item->setText(4, run.checkpoints.join(QStringLiteral(", ")));
  }
  if (!m_runs.isEmpty()) m_runsTable->setCurrentItem(m_runsTable->topLevelItem(0));
}

void ProjectPages::selectRun(int row) {
  if (row >= 0 && row < m_runsTable->topLevelItemCount())
    m_runsTable->setCurrentItem(m_runsTable->topLevelItem(row));
}

void ProjectPages::showRunDetails() {
  m_checkpoints->clear();
  const int row = m_runsTable->indexOfTopLevelItem(m_runsTable->currentItem());
  if (row < 0) return;
  for (const auto& name : m_runs[row].checkpoints) {
    auto* item = new QTreeWidgetItem(m_checkpoints);
    const QString path = m_runs[row].checkpointPath(name);
    item->setText(0, name);
    item->setText(1, QLocale().formattedDataSize(QFileInfo(path).size()));
    item->setData(0, Qt::UserRole, path);
    item->setToolTip(0, tr("Double-click: use this checkpoint for export and resume"));
  }
}

void ProjectPages::overlaySelectedRun() {
  const int row = m_runsTable->indexOfTopLevelItem(m_runsTable->currentItem());
  if (row < 0) return;
  m_dashboard->addOverlay(m_runs[row]);
}

}  // namespace netsmith::ui
