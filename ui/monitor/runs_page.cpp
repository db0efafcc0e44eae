#include "monitor/runs_page.h"

#include <QDesktopServices>
#include <QDir>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPainter>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTreeWidget>
#include <QUrl>
#include <QVBoxLayout>
#include <cmath>

#include "monitor/cost_plot.h"
#include "monitor/dashboard.h"
#include "run/run_layout.h"
#include "session/project_document.h"
#include "util/background_job.h"

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

/// A small square of a run's colour, as its overlay lines are drawn.
QIcon swatch(const QColor& color) {
  QPixmap p(12, 12);
  p.fill(color);
  return QIcon(p);
}

QString duration(double seconds) {
  if (seconds < 0) return QStringLiteral("-");
  const qint64 s = qint64(std::llround(seconds));
  return s >= 3600 ? QStringLiteral("%1 h %2 min").arg(s / 3600).arg((s % 3600) / 60)
         : s >= 60 ? QStringLiteral("%1 min %2 s").arg(s / 60).arg(s % 60)
                   : QStringLiteral("%1 s").arg(s);
}

}  // namespace

task::FigureSpec RunsPage::headlineSpec(const RunHistory& run) const {
  const Json task = run.settings.is_object() ? run.settings.value("task", Json()) : Json();
  const std::string headline = run.headline.toStdString();
  if (headline.empty()) return {};
  return m_document->tasks().figureSpec(task.is_string() ? task.get<std::string>() : "", headline);
}

QString RunsPage::figureText(const task::FigureSpec& spec, double value) {
  const QString number = spec.percent ? QString::number(100 * value, 'f', 2) + QStringLiteral("%")
                                      : QString::number(value, 'g', 4);
  return QStringLiteral("%1 %2").arg(QString::fromStdString(spec.name), number);
}

RunsPage::RunsPage(ProjectDocument* document, Dashboard* dashboard, QWidget* parent)
    : QWidget(parent),
      m_document(document),
      m_dashboard(dashboard),
      m_info(new QLabel(this)),
      m_listJob(new BackgroundJob(this)),
      m_runsTable(makeTree(QStringLiteral("runsTable"),
                           {tr("Run"), tr("Started"), tr("Duration"), tr("Device"), tr("Epochs"),
                            tr("Best validation"), tr("Test"), tr("Last val loss"), tr("Latency"),
                            tr("Size"), tr("Checkpoints")},
                           this)),
      m_checkpoints(
          makeTree(QStringLiteral("runCheckpoints"), {tr("Checkpoint"), tr("Size")}, this)),
      m_differences(new QPlainTextEdit(this)),
      m_costPlot(new CostPlot(this)) {
  m_runsTable->setSelectionMode(QAbstractItemView::ExtendedSelection);
  m_runsTable->setToolTip(tr("Select two runs (Ctrl+click) to see the settings they differ in"));
  m_differences->setObjectName(QStringLiteral("runDifferences"));
  m_differences->setReadOnly(true);
  m_differences->setPlaceholderText(
      tr("Select two runs (Ctrl+click) to see the settings they differ in."));
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
  connect(m_runsTable, &QTreeWidget::itemSelectionChanged, this, [this] {
    const auto selected = m_runsTable->selectedItems();
    if (selected.size() != 2) {
      m_differences->clear();
      return;
    }
    // Oldest to newest, whichever was selected first.
    const RunHistory* a = &m_runs[m_runsTable->indexOfTopLevelItem(selected[0])];
    const RunHistory* b = &m_runs[m_runsTable->indexOfTopLevelItem(selected[1])];
    if (a->started.isValid() && b->started.isValid() && b->started < a->started) std::swap(a, b);
    const QStringList diff = settingDifferences(a->settings, b->settings);
    m_differences->setPlainText(
        tr("%1 -> %2\n").arg(a->name, b->name) +
        (diff.isEmpty() ? tr("Same settings.") : diff.join(QLatin1Char('\n'))));
  });
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
  auto* lower = new QSplitter(Qt::Horizontal, this);
  lower->addWidget(m_checkpoints);
  lower->addWidget(m_differences);
  lower->addWidget(m_costPlot);
  lower->setStretchFactor(2, 2);
  splitter->addWidget(lower);
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
    m_listJob->cancel();
    m_info->setText(tr("No project open."));
    return;
  }
  const QString root = QString::fromStdString(run_layout::runsRoot(dir.toStdString()));
  const QString project = QString::fromStdString(m_document->project().name);
  m_info->setText(tr("Reading the runs in %1...").arg(root));
  struct Listed {
    QVector<RunHistory> runs;
    QStringList errors;
  };
  m_listJob->start(
      [root, project](const JobContext&) {
        Listed l;
        l.runs = listRuns(root, project, &l.errors);
        return l;
      },
      [this, root](Listed l) { showRuns(std::move(l.runs), root, l.errors); },
      [this, root](const QString& error) { showRuns({}, root, {error}); });
}

void RunsPage::showRuns(QVector<RunHistory> runs, const QString& root, const QStringList& errors) {
  m_runs = std::move(runs);
  QString text =
      tr("%n run(s) of this project in %1", nullptr, m_runs.size()).arg(root.toHtmlEscaped());
  for (const auto& e : errors)  // from folders someone else may have made: shown as text
    text += QStringLiteral("<br>") + e.toHtmlEscaped();
  m_info->setText(text);
  for (const auto& run : m_runs) {
    auto* item = new QTreeWidgetItem(m_runsTable);
    item->setIcon(0, swatch(runColor(run.name)));
    item->setText(0, run.name);
    item->setText(1, run.started.isValid() ? QLocale().toString(run.started, QLocale::ShortFormat)
                                           : QStringLiteral("-"));
    item->setText(2, duration(run.durationSeconds) +
                         (run.finishState.isEmpty() || run.finishState == QLatin1String("completed")
                              ? QString()
                              : QStringLiteral(" (%1)").arg(run.finishState)));
    item->setText(3, run.device.isEmpty() ? QStringLiteral("-") : run.device.section(',', 0, 0));
    item->setToolTip(3, run.device);
    item->setText(4, QString::number(run.epochs()));
    // The task's headline figure, as its task shows it (the best of it the way it is better).
    const task::FigureSpec spec = headlineSpec(run);
    const double best = run.bestValFigure(spec.higherIsBetter);
    item->setText(5, std::isfinite(best) ? figureText(spec, best) : QStringLiteral("-"));
    item->setText(6, run.testFigure >= 0
                         ? tr("%1 of %2").arg(figureText(spec, run.testFigure)).arg(run.testSamples)
                         : QStringLiteral("-"));
    item->setText(7, run.epochValLoss.isEmpty() || !std::isfinite(run.epochValLoss.back())
                         ? QStringLiteral("-")
                         : QString::number(run.epochValLoss.back(), 'f', 4));
    // What it costs deployed, once measured (train --deploy-bench, bench RUN_DIR).
    item->setText(8, run.deployLatencyMs >= 0 ? tr("%1 ms").arg(run.deployLatencyMs, 0, 'f', 3)
                                              : QStringLiteral("-"));
    item->setToolTip(8, run.deployLatencyMs >= 0
                            ? tr("batch-1 median latency in %1").arg(run.deployRuntime)
                            : tr("not measured: netsmith-cli bench %1").arg(run.dir));
    item->setText(9, run.deployBytes >= 0 ? QLocale().formattedDataSize(run.deployBytes)
                                          : QStringLiteral("-"));
    item->setText(10, run.checkpoints.join(QStringLiteral(", ")));
  }
  showCosts();
  if (!m_runs.isEmpty()) m_runsTable->setCurrentItem(m_runsTable->topLevelItem(0));
  Q_EMIT runsListed();
}

void RunsPage::showCosts() {
  QVector<CostPlotPoint> points;
  task::FigureSpec figure;
  for (const auto& run : m_runs) {
    const task::FigureSpec spec = headlineSpec(run);
    if (figure.name.empty() && !spec.name.empty()) figure = spec;
    CostPlotPoint p;
    p.name = run.name;
    p.latencyMs = run.deployLatencyMs;
    p.mebibytes = run.deployBytes >= 0 ? double(run.deployBytes) / (1024.0 * 1024.0) : -1;
    p.score = run.bestValFigure(spec.higherIsBetter);
    p.color = runColor(run.name);
    points.push_back(p);
  }
  if (!figure.name.empty()) figure.name = "best validation " + figure.name;
  m_costPlot->setPoints(std::move(points), figure);
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

void RunsPage::selectRuns(int first, int second) {
  m_runsTable->clearSelection();
  for (int row : {first, second})
    if (auto* item = m_runsTable->topLevelItem(row)) item->setSelected(true);
}

QString RunsPage::differencesText() const {
  return m_differences->toPlainText();
}

int RunsPage::selectedRow() const {
  return m_runsTable->indexOfTopLevelItem(m_runsTable->currentItem());
}

}  // namespace netsmith::ui
