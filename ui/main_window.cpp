#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QFileDialog>
#include <QFileInfo>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QMenuBar>
#include <QMessageBox>
#include <QSplitter>
#include <QStatusBar>
#include <QTableWidget>
#include <QVBoxLayout>

#include <qcustomplot.h>
#include <QCloseEvent>
#include <QDockWidget>
#include <QPlainTextEdit>
#include <QProgressBar>

#include "data/project_data.h"
#include "graph/model_summary.h"
#include "netsmith/version.h"
#include "project_document.h"
#include "trainer_session.h"

namespace netsmith::ui {

MainWindow::MainWindow(const ops::OpRegistry& registry, QWidget* parent)
    : QMainWindow(parent),
      m_document(new ProjectDocument(registry, this)),
      m_title(new QLabel(this)),
      m_table(new QTableWidget(0, 5, this)),
      m_problems(new QListWidget(this)),
      m_totals(new QLabel(this)),
      m_session(new TrainerSession(this)) {
  setWindowTitle(tr("Netsmith"));
  resize(1000, 700);

  m_table->setHorizontalHeaderLabels(
      {tr("Node"), tr("Op"), tr("Output shape"), tr("Params"), tr("MACs")});
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->verticalHeader()->hide();
  m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_totals->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* central = new QWidget(this);
  auto* layout = new QVBoxLayout(central);
  layout->addWidget(m_title);
  auto* splitter = new QSplitter(Qt::Vertical, central);
  splitter->addWidget(m_table);
  splitter->addWidget(m_problems);
  splitter->setStretchFactor(0, 4);
  splitter->setStretchFactor(1, 1);
  layout->addWidget(splitter);
  layout->addWidget(m_totals);
  setCentralWidget(central);

  buildTrainingDock();
  buildMenus();
  connect(m_document, &ProjectDocument::projectChanged, this, &MainWindow::refresh);
  refresh();
}

void MainWindow::setSampleLimits(std::int64_t train, std::int64_t validation) {
  m_limitTrain = train;
  m_limitValidation = validation;
}

void MainWindow::buildTrainingDock() {
  auto* dock = new QDockWidget(tr("Training"), this);
  dock->setObjectName(QStringLiteral("trainingDock"));
  auto* panel = new QWidget(dock);
  auto* layout = new QVBoxLayout(panel);
  m_lossChart = new QCustomPlot(panel);
  m_lossChart->setObjectName(QStringLiteral("lossChart"));
  m_lossChart->setMinimumHeight(220);
  m_lossChart->addGraph();  // 0: training loss per step
  m_lossChart->graph(0)->setName(tr("train loss (step)"));
  m_lossChart->graph(0)->setAdaptiveSampling(true);
  m_lossChart->addGraph();  // 1: validation loss per epoch
  m_lossChart->graph(1)->setName(tr("validation loss (epoch)"));
  m_lossChart->graph(1)->setPen(QPen(Qt::red));
  m_lossChart->graph(1)->setLineStyle(QCPGraph::lsNone);
  m_lossChart->graph(1)->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssDisc, 7));
  m_lossChart->xAxis->setLabel(tr("step"));
  m_lossChart->yAxis->setLabel(tr("loss"));
  m_lossChart->legend->setVisible(true);
  m_lossChart->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  m_log = new QPlainTextEdit(panel);
  m_log->setObjectName(QStringLiteral("trainingLog"));
  m_log->setReadOnly(true);
  m_log->setMaximumBlockCount(5000);
  layout->addWidget(m_lossChart, 3);
  layout->addWidget(m_log, 1);
  dock->setWidget(panel);
  addDockWidget(Qt::RightDockWidgetArea, dock);
  resizeDocks({dock}, {480}, Qt::Horizontal);
  m_log->setLineWrapMode(QPlainTextEdit::NoWrap);

  m_runState = new QLabel(tr("Idle"), this);
  m_progress = new QProgressBar(this);
  m_progress->setMaximumWidth(220);
  m_progress->setFormat(QStringLiteral("%p%"));
  m_progress->setValue(0);
  statusBar()->addPermanentWidget(m_runState);
  statusBar()->addPermanentWidget(m_progress);

  auto logLine = [this](const QString& text) { m_log->appendPlainText(text); };
  connect(m_session, &TrainerSession::started, this,
          [this, logLine](const QString& runDir, const QString& description) {
            m_lossChart->graph(0)->data()->clear();
            m_lossChart->graph(1)->data()->clear();
            m_lastStep = 0;
            logLine(description);
            logLine(tr("run folder: %1").arg(runDir));
            m_runState->setText(tr("Training"));
          });
  connect(m_session, &TrainerSession::batches, this,
          [this](const QVector<train::BatchMetrics>& list) {
            for (const auto& b : list)
              m_lossChart->graph(0)->addData(double(b.step), b.loss);
            const auto& b = list.back();
            m_lastStep = b.step;
            m_progress->setMaximum(int(std::max<std::int64_t>(1, b.totalSteps)));
            m_progress->setValue(int(b.step));
            m_runState->setText(tr("Training: epoch %1, batch %2/%3, %4 images/s")
                                    .arg(b.epoch + 1)
                                    .arg(b.batch + 1)
                                    .arg(b.batchesPerEpoch)
                                    .arg(b.imagesPerSecond, 0, 'f', 0));
            rescaleLossChart();
          });
  connect(m_session, &TrainerSession::epochEnded, this,
          [this, logLine](const train::EpochMetrics& e) {
            if (e.hasValidation)
              m_lossChart->graph(1)->addData(double(m_lastStep), e.validation.loss);
            logLine(QString::fromStdString(train::describeEpoch(e)));
            rescaleLossChart();
          });
  connect(m_session, &TrainerSession::message, this,
          [logLine](const QString& level, const QString& text) {
            logLine(level == QLatin1String("info") ? text : level + QStringLiteral(": ") + text);
          });
  connect(m_session, &TrainerSession::finished, this,
          [this, logLine](train::FinishState state, const QString& reason) {
            const auto& r = m_session->lastResult();
            QString text = QString::fromStdString(train::finishStateName(state)) + ": " + reason;
            if (r.hasTest)
              text += tr("; test accuracy %1%").arg(100.0 * r.test.accuracy, 0, 'f', 2);
            logLine(text);
            m_runState->setText(text);
            if (state == train::FinishState::Failed) {
              auto* box = new QMessageBox(QMessageBox::Warning, tr("Training failed"), reason,
                                          QMessageBox::Ok, this);
              box->setAttribute(Qt::WA_DeleteOnClose);
              box->open();
            }
            updateTrainActions();
          });
}

void MainWindow::rescaleLossChart() {
  // Fit every point, with a margin so the newest ones are not drawn on the frame.
  m_lossChart->rescaleAxes();
  m_lossChart->xAxis->setRange(0, std::max(1.0, m_lossChart->xAxis->range().upper * 1.03));
  m_lossChart->yAxis->scaleRange(1.15, m_lossChart->yAxis->range().center());
  m_lossChart->replot(QCustomPlot::rpQueuedReplot);
}

void MainWindow::startTraining() {
  if (m_session->isRunning()) return;
  const auto& doc = *m_document;
  if (doc.filePath().isEmpty() || !doc.problems().empty()) {
    statusBar()->showMessage(doc.filePath().isEmpty()
                                 ? tr("Open a project first")
                                 : tr("The project has problems: fix them before training"),
                             5000);
    return;
  }
  train::TrainerConfig config;
  config.project = doc.project();
  config.baseDir = doc.baseDir().toStdString();
  config.runsRoot = (doc.baseDir() + QStringLiteral("/runs")).toStdString();
  config.cacheDir = data::userCacheDir();
  config.limitTrain = m_limitTrain;
  config.limitVal = m_limitValidation;
  QString error;
  if (!m_session->start(std::move(config), &error)) {
    statusBar()->showMessage(error, 5000);
    return;
  }
  m_runState->setText(tr("Preparing"));
  m_progress->setValue(0);
  updateTrainActions();
}

void MainWindow::togglePause() {
  if (!m_session->isRunning()) return;
  if (m_pause->isChecked()) {
    m_session->pause();
    m_runState->setText(tr("Paused"));
  } else {
    m_session->resume();
    m_runState->setText(tr("Training"));
  }
}

void MainWindow::updateTrainActions() {
  const bool running = m_session->isRunning();
  m_start->setEnabled(!running);
  m_pause->setEnabled(running);
  if (!running) m_pause->setChecked(false);
  m_stop->setEnabled(running);
  m_stopAfterEpoch->setEnabled(running);
}

void MainWindow::closeEvent(QCloseEvent* event) {
  if (m_session->isRunning()) {
    m_runState->setText(tr("Stopping: writing a checkpoint"));
    m_session->stopAndWait(2000);
  }
  event->accept();
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(tr("&Open..."), this, &MainWindow::openWithDialog);
  open->setShortcut(QKeySequence::Open);
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);
  QMenu* trainMenu = menuBar()->addMenu(tr("&Train"));
  m_start = trainMenu->addAction(tr("&Start"), this, &MainWindow::startTraining);
  m_start->setObjectName(QStringLiteral("actionTrainStart"));
  m_start->setShortcut(Qt::Key_F5);
  m_pause = trainMenu->addAction(tr("&Pause"), this, &MainWindow::togglePause);
  m_pause->setObjectName(QStringLiteral("actionTrainPause"));
  m_pause->setCheckable(true);
  m_pause->setShortcut(Qt::Key_F6);
  m_stop = trainMenu->addAction(tr("S&top"), this, [this] { m_session->stop(); });
  m_stop->setObjectName(QStringLiteral("actionTrainStop"));
  m_stop->setShortcut(QKeySequence(Qt::SHIFT | Qt::Key_F5));
  m_stopAfterEpoch = trainMenu->addAction(tr("Stop after this &epoch"), this,
                                          [this] { m_session->stopAfterEpoch(); });
  m_stopAfterEpoch->setObjectName(QStringLiteral("actionTrainStopAfterEpoch"));
  updateTrainActions();
  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("&About Netsmith"), this, &MainWindow::showAbout);
}

bool MainWindow::openProject(const QString& path, bool quiet) {
  if (m_document->load(path)) {
    statusBar()->showMessage(tr("Opened %1").arg(path), 5000);
    return true;
  }
  if (!quiet) QMessageBox::warning(this, tr("Cannot open project"), m_document->errorString());
  statusBar()->showMessage(m_document->errorString());
  return false;
}

void MainWindow::openWithDialog() {
  const QString path =
      QFileDialog::getOpenFileName(this, tr("Open project"), QString(),
                                   tr("Netsmith projects (*.netsmith.json);;JSON (*.json)"));
  if (!path.isEmpty()) openProject(path);
}

void MainWindow::showAbout() {
  QMessageBox::about(this, tr("About Netsmith"),
                     tr("<b>Netsmith %1</b><p>A desktop studio for convolutional networks.</p>")
                         .arg(QStringLiteral(NETSMITH_VERSION)));
}

void MainWindow::refresh() {
  const auto& doc = *m_document;
  if (doc.filePath().isEmpty()) {
    m_title->setText(tr("No project open. File > Open (Ctrl+O) loads a *.netsmith.json file."));
  } else {
    m_title->setText(tr("<b>%1</b> &mdash; %2")
                         .arg(QString::fromStdString(doc.project().name).toHtmlEscaped(),
                              QFileInfo(doc.filePath()).absoluteFilePath().toHtmlEscaped()));
    setWindowTitle(tr("%1 - Netsmith").arg(QString::fromStdString(doc.project().name)));
  }
  const auto& a = doc.analysis();
  m_table->setRowCount(static_cast<int>(a.nodes.size()));
  for (int row = 0; row < static_cast<int>(a.nodes.size()); ++row) {
    const auto& n = a.nodes[static_cast<std::size_t>(row)];
    const QStringList cells = {QString::fromStdString(n.id), QString::fromStdString(n.op),
                               QString::fromStdString(formatShape(n.outputShape)),
                               QString::fromStdString(graph::formatCount(n.paramCount)),
                               QString::fromStdString(graph::formatCount(n.macs))};
    for (int col = 0; col < cells.size(); ++col) {
      auto* item = new QTableWidgetItem(cells[col]);
      if (col >= 3) item->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
      m_table->setItem(row, col, item);
    }
  }
  m_problems->clear();
  for (const auto& p : doc.problems())
    m_problems->addItem(QString::fromStdString(p.toString()));
  m_problems->setVisible(!doc.problems().empty());
  if (doc.filePath().isEmpty()) {
    m_totals->clear();
  } else {
    m_totals->setText(tr("Parameters: %1 (trainable %2)   MACs per sample: %3   Output: %4")
                          .arg(QString::fromStdString(graph::formatCount(a.totalParams)),
                               QString::fromStdString(graph::formatCount(a.trainableParams)),
                               QString::fromStdString(graph::formatCount(a.totalMacs)),
                               QString::fromStdString(formatShape(a.outputShape))));
  }
}

}  // namespace netsmith::ui
