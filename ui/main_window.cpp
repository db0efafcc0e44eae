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

#include "graph/model_summary.h"
#include "netsmith/version.h"
#include "project_document.h"

namespace netsmith::ui {

MainWindow::MainWindow(const ops::OpRegistry& registry, QWidget* parent)
    : QMainWindow(parent),
      m_document(new ProjectDocument(registry, this)),
      m_title(new QLabel(this)),
      m_table(new QTableWidget(0, 5, this)),
      m_problems(new QListWidget(this)),
      m_totals(new QLabel(this)) {
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

  buildMenus();
  connect(m_document, &ProjectDocument::projectChanged, this, &MainWindow::refresh);
  refresh();
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(tr("&Open..."), this, &MainWindow::openWithDialog);
  open->setShortcut(QKeySequence::Open);
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);
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
