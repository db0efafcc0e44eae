#include "monitor/runs_page.h"

#include <QDesktopServices>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSplitter>
#include <QTreeWidget>
#include <QUrl>
#include <QVBoxLayout>
#include <cmath>

#include "monitor/dashboard.h"
#include "session/project_document.h"

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

RunsPage::RunsPage(ProjectDocument* document, Dashboard* dashboard, QWidget* parent)
    : QWidget(parent),
      m_document(document),
      m_dashboard(dashboard),
      m_info(new QLabel(this)),
      m_runsTable(makeTree(
          QStringLiteral("runsTable"),
          {tr("Run"), tr("Epochs"), tr("Best val acc"), tr("Last val loss"), tr("Checkpoints")},
          this)),
      m_checkpoints(
          makeTree(QStringLiteral("runCheckpoints"), {tr("Checkpoint"), tr("Size")}, this)) {
  m_info->setWordWrap(true);
  auto* refreshButton = new QPushButton(tr("Refresh"), this);
  auto* overlay = new QPushButton(tr("Overlay on charts"), this);
  overlay->setObjectName(QStringLiteral("runOverlay"));
  auto* clear = new QPushButton(tr("Clear overlays"), this);
  auto* loadBest = new QPushButton(tr("Load best checkpoint"), this);
  loadBest->setObjectName(QStringLiteral("runLoadBest"));
  loadBest->setToolTip(tr("Use this run's best checkpoint for export and resume"));
  auto* openFolder = new QPushButton(tr("Open folder"), this);
  connect(refreshButton, &QPushButton::clicked, this, &RunsPage::refresh);
  connect(overlay, &QPushButton::clicked, this, &RunsPage::overlaySelectedRun);
  connect(clear, &QPushButton::clicked, m_dashboard, &Dashboard::clearOverlays);
  connect(loadBest, &QPushButton::clicked, this, [this] {
    const int row = selectedRow();
    if (row < 0) return;
    const QString path = m_runs[row].bestCheckpoint();
    if (!path.isEmpty()) Q_EMIT checkpointChosen(path);
  });
  connect(openFolder, &QPushButton::clicked, this, [this] {
    const int row = selectedRow();
    if (row >= 0) QDesktopServices::openUrl(QUrl::fromLocalFile(m_runs[row].dir));
  });
  connect(m_runsTable, &QTreeWidget::currentItemChanged, this, &RunsPage::showRunDetails);
  connect(m_checkpoints, &QTreeWidget::itemActivated, this, [this](QTreeWidgetItem* item) {
    Q_EMIT checkpointChosen(item->data(0, Qt::UserRole).toString());
  });
  auto* buttons = new QHBoxLayout;
  for (auto* b : {refreshButton, overlay, clear, loadBest, openFolder})
    buttons->addWidget(b);
  buttons->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_info);
  layout->addLayout(buttons);
  auto* splitter = new QSplitter(Qt::Vertical, this);
  splitter->addWidget(m_runsTable);
  splitter->addWidget(m_checkpoints);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 1);
  layout->addWidget(splitter, 1);
}

void RunsPage::refresh() {
  const QString dir = m_document->baseDir();
  m_runsTable->clear();
  m_checkpoints->clear();
  m_runs.clear();
  if (m_document->filePath().isEmpty()) {
    m_info->setText(tr("No project open."));
    return;
  }
  const QString root = QDir(dir).filePath(QStringLiteral("runs"));
  QStringList errors;
  m_runs = listRuns(root, QString::fromStdString(m_document->project().name), &errors);
  m_info->setText(tr("%n run(s) of this project in %1", nullptr, m_runs.size()).arg(root) +
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

void RunsPage::selectRun(int row) {
  if (row >= 0 && row < m_runsTable->topLevelItemCount())
    m_runsTable->setCurrentItem(m_runsTable->topLevelItem(row));
}

void RunsPage::showRunDetails() {
  m_checkpoints->clear();
  const int row = selectedRow();
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

void RunsPage::overlaySelectedRun() {
  const int row = selectedRow();
  if (row < 0) return;
  m_dashboard->addOverlay(m_runs[row]);
}

int RunsPage::selectedRow() const {
  return m_runsTable->indexOfTopLevelItem(m_runsTable->currentItem());
}

}  // namespace netsmith::ui
