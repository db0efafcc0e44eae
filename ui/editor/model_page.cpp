#include "editor/model_page.h"

#include <unistd.h>
#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QRegularExpression>
#include <QSaveFile>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTableWidget>
#include <QToolBar>
#include <QToolButton>
#include <QVBoxLayout>

#include "data/csv_table.h"
#include "editor/graph_canvas.h"
#include "editor/model_editor.h"
#include "editor/node_inspector.h"
#include "editor/op_palette.h"
#include "env/env_report.h"
#include "graph/graph_analysis.h"
#include "graph/model_summary.h"
#include "session/project_document.h"
#include "util/number_item.h"

namespace netsmith::ui {

namespace {

QString bytes(double b) {
  return QLocale().formattedDataSize(qint64(b), 1);
}

/// The default memory budget: the first CUDA device's memory where CUDA is present, else RAM.
double defaultBudget(QString* what) {
  const auto env = env::collectEnvReport(false);
  if (env.cudaAvailable && !env.cudaDevices.empty()) {
    // "NVIDIA H200 (139.8 GiB)"
    static const QRegularExpression gib(QStringLiteral("\\(([0-9.]+) GiB\\)"));
    const auto m = gib.match(QString::fromStdString(env.cudaDevices[0]));
    if (m.hasMatch()) {
      *what = QObject::tr("GPU memory of %1").arg(QString::fromStdString(env.cudaDevices[0]));
      return m.captured(1).toDouble() * double(1 << 30);
    }
  }
  *what = QObject::tr("this machine's RAM");
  const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && size > 0 ? double(pages) * double(size) : 8.0 * (1 << 30);
}

}  // namespace

ModelPage::ModelPage(ProjectDocument* document, QWidget* parent)
    : QWidget(parent),
      m_document(document),
      m_editor(new ModelEditor(document, this)),
      m_palette(new OpPalette(document->registry(), this)),
      m_canvas(new GraphCanvas(m_editor, this)),
      m_inspector(new NodeInspector(m_editor, this)) {
  setObjectName(QStringLiteral("modelPage"));
  m_title = new QLabel(this);
  m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_tabs = new QTabWidget(this);
  m_tabs->setObjectName(QStringLiteral("modelTabs"));
  m_tabs->addTab(buildGraphTab(), tr("Graph"));
  m_tabs->addTab(buildTableTab(), tr("Table"));

  m_problems = new QListWidget(this);
  m_problems->setObjectName(QStringLiteral("problemList"));
  m_problems->setToolTip(tr("Click a problem to select its node; double-click to apply its fix"));
  connect(m_problems, &QListWidget::itemClicked, this, [this](QListWidgetItem* item) {
    const QString id = item->data(Qt::UserRole).toString();
    if (!id.isEmpty()) {
      m_tabs->setCurrentIndex(0);
      m_canvas->selectNodes({id}, true);
    }
  });
  connect(m_problems, &QListWidget::itemDoubleClicked, this, [this](QListWidgetItem* item) {
    const QString id = item->data(Qt::UserRole).toString();
    if (!id.isEmpty()) m_editor->applyFix(id);
  });

  // Totals bar: parameters, MACs, training memory at a batch size, largest batch for a budget.
  m_totals = new QLabel(this);
  m_totals->setObjectName(QStringLiteral("modelTotals"));
  m_totals->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_totals->setWordWrap(true);  // wraps on a narrow window instead of widening it
  // Two lines' height whatever the text: the canvas above does not jump as figures change.
  m_totals->setFixedHeight(2 * m_totals->fontMetrics().lineSpacing() + 4);
  m_totals->setAlignment(Qt::AlignLeft | Qt::AlignVCenter);
  m_batch = new QSpinBox(this);
  m_batch->setObjectName(QStringLiteral("memoryBatch"));
  m_batch->setRange(1, 1 << 20);
  m_batch->setPrefix(tr("batch "));
  m_batch->setToolTip(tr("Batch size for the training memory estimate"));
  m_budget = new QDoubleSpinBox(this);
  m_budget->setObjectName(QStringLiteral("memoryBudget"));
  m_budget->setRange(0.1, 4096);
  m_budget->setDecimals(1);
  m_budget->setSuffix(tr(" GiB"));
  m_budget->setPrefix(tr("budget "));
  QString budgetSource;
  m_budget->setValue(defaultBudget(&budgetSource) / double(1 << 30));
  m_budget->setToolTip(tr("Memory budget for the largest batch (default: %1)").arg(budgetSource));
  connect(m_batch, qOverload<int>(&QSpinBox::valueChanged), this, &ModelPage::refreshTotals);
  connect(m_budget, qOverload<double>(&QDoubleSpinBox::valueChanged), this,
          &ModelPage::refreshTotals);
  auto* totalsRow = new QHBoxLayout;
  totalsRow->addWidget(m_totals, 1);
  totalsRow->addWidget(m_batch);
  totalsRow->addWidget(m_budget);

  auto* centre = new QSplitter(Qt::Vertical, this);
  centre->addWidget(m_tabs);
  centre->addWidget(m_problems);
  centre->setStretchFactor(0, 5);
  centre->setStretchFactor(1, 1);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(m_palette);
  split->addWidget(centre);
  split->addWidget(m_inspector);
  split->setStretchFactor(0, 0);
  split->setStretchFactor(1, 1);
  split->setStretchFactor(2, 0);
  split->setSizes({160, 760, 330});

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_title);
  layout->addWidget(split, 1);
  layout->addLayout(totalsRow);

  connect(m_palette, &OpPalette::opActivated, this, &ModelPage::appendOp);
  connect(m_canvas, &GraphCanvas::selectionChangedIds, this, [this](const QStringList& ids) {
    m_inspector->setNode(ids.size() == 1 ? ids[0] : QString());
  });
  connect(m_document, &ProjectDocument::modelChanged, this, &ModelPage::modelChanged);
  connect(m_document, &ProjectDocument::loaded, this, &ModelPage::projectLoaded);
  connect(m_document, &ProjectDocument::problemsChanged, this, &ModelPage::refreshProblems);
  connect(m_document, &ProjectDocument::sectionChanged, this, [this] {
    refreshProblems();  // the list holds every section's problems
    refreshTotals();    // the batch size and optimizer feed the memory estimate
  });

  // Editing commands, active while the page has focus.
  auto add = [this](const QString& text, const QKeySequence& key, auto slot, const char* name) {
    auto* a = new QAction(text, this);
    a->setShortcut(key);
    a->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    a->setObjectName(QLatin1String(name));
    connect(a, &QAction::triggered, this, slot);
    addAction(a);
    return a;
  };
  // Cut, Copy, Paste, Delete and Select All are in the window's Edit menu.
  add(
      tr("Duplicate"), QKeySequence(Qt::CTRL | Qt::Key_D),
      [this] { m_canvas->selectNodes(m_editor->duplicate(m_canvas->selectedIds())); },
      "actionModelDuplicate");
  add(
      tr("Auto layout"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_L),
      [this] { m_editor->autoLayout(); }, "actionModelLayout");
  add(
      tr("Fit to view"), QKeySequence(Qt::CTRL | Qt::Key_0), [this] { m_canvas->fitToView(); },
      "actionModelFit");
  add(
      tr("Zoom to selection"), QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_F),
      [this] { m_canvas->zoomToSelection(); }, "actionModelZoomSelection");
  add(
      tr("Zoom in"), QKeySequence(Qt::CTRL | Qt::Key_Equal), [this] { m_canvas->zoomBy(1.25); },
      "actionModelZoomIn");
  add(
      tr("Zoom out"), QKeySequence(Qt::CTRL | Qt::Key_Minus), [this] { m_canvas->zoomBy(0.8); },
      "actionModelZoomOut");
}

QWidget* ModelPage::buildGraphTab() {
  auto* tab = new QWidget(this);
  auto* bar = new QToolBar(tab);
  bar->setToolButtonStyle(Qt::ToolButtonTextOnly);
  bar->addAction(tr("Fit"), m_canvas, &GraphCanvas::fitToView)
      ->setToolTip(tr("Fit to view (Ctrl+0)"));
  bar->addAction(tr("Zoom in"), m_canvas, [this] { m_canvas->zoomBy(1.25); })
      ->setToolTip(tr("Zoom in (Ctrl+=, Ctrl+wheel)"));
  bar->addAction(tr("Zoom out"), m_canvas, [this] { m_canvas->zoomBy(0.8); })
      ->setToolTip(tr("Zoom out (Ctrl+-, Ctrl+wheel)"));
  bar->addAction(tr("Selection"), m_canvas, [this] { m_canvas->zoomToSelection(); })
      ->setToolTip(tr("Zoom to the selected nodes (Ctrl+Shift+F)"));
  // Groups: the scopes an imported network names its layers by ("layer1"), one block each.
  auto* collapse = bar->addAction(tr("Collapse groups"));
  collapse->setObjectName(QStringLiteral("actionCollapseGroups"));
  collapse->setCheckable(true);
  collapse->setToolTip(
      tr("Draw each group of layers (an imported stage such as layer1) as one block with its "
         "totals; double-click a block to expand it"));
  connect(collapse, &QAction::toggled, this, [this](bool on) {
    m_canvas->setAllGroupsCollapsed(on);
    m_canvas->fitToView();
  });
  bar->addAction(tr("Auto layout"), this, [this] { m_editor->autoLayout(); })
      ->setToolTip(tr("Layered, top to bottom (Ctrl+Shift+L)"));
  bar->addSeparator();
  auto* blocks = new QToolButton(bar);
  blocks->setText(tr("Insert block"));
  blocks->setPopupMode(QToolButton::InstantPopup);
  auto* menu = new QMenu(blocks);
  auto insert = [this](const QString& kind) {
    const QStringList sel = m_canvas->selectedIds();
    m_canvas->selectNodes(m_editor->insertBlock(kind, sel.size() == 1 ? sel[0] : QString()));
  };
  menu->addAction(tr("Conv-BN-ReLU"), this, [insert] { insert(QStringLiteral("conv_bn_relu")); });
  menu->addAction(tr("Residual block"), this, [insert] { insert(QStringLiteral("residual")); });
  blocks->setMenu(menu);
  bar->addWidget(blocks);
  bar->addSeparator();
  bar->addAction(tr("Export PNG..."), this, [this] {
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export graph"), "model.png", tr("PNG (*.png)"));
    if (!path.isEmpty()) m_canvas->exportPng(path);
  });
  bar->addAction(tr("Export SVG..."), this, [this] {
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export graph"), "model.svg", tr("SVG (*.svg)"));
    if (!path.isEmpty()) m_canvas->exportSvg(path);
  });
  auto* layout = new QVBoxLayout(tab);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(bar);
  layout->addWidget(m_canvas, 1);
  return tab;
}

QWidget* ModelPage::buildTableTab() {
  auto* tab = new QWidget(this);
  m_table = new QTableWidget(0, 6, tab);
  m_table->setObjectName(QStringLiteral("modelTable"));
  m_table->setHorizontalHeaderLabels(
      {tr("Node"), tr("Op"), tr("Output shape"), tr("Params"), tr("MACs"), tr("Activations")});
  m_table->horizontalHeader()->setStretchLastSection(true);
  m_table->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
  m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->verticalHeader()->hide();
  connect(m_table, &QTableWidget::cellDoubleClicked, this, [this](int row, int) {
    m_tabs->setCurrentIndex(0);
    m_canvas->selectNodes({m_table->item(row, 0)->text()}, true);
  });
  auto* exportCsv = new QToolButton(tab);
  exportCsv->setText(tr("Export CSV..."));
  connect(exportCsv, &QToolButton::clicked, this, [this] {
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Export summary"), "model.csv", tr("CSV (*.csv)"));
    if (!path.isEmpty()) exportTableCsv(path);
  });
  auto* layout = new QVBoxLayout(tab);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(exportCsv, 0, Qt::AlignLeft);
  layout->addWidget(m_table, 1);
  return tab;
}

void ModelPage::projectLoaded() {
  const auto& train = m_document->project().train;
  {
    const QSignalBlocker block(m_batch);
    m_batch->setValue(train.is_object() && train.contains("batch_size") &&
                              train["batch_size"].is_number_integer()
                          ? train["batch_size"].get<int>()
                          : 64);
  }
  if (m_editor->needsLayout()) {
    // A hand-written model without positions: lay it out, without an undo step or a change mark.
    m_editor->autoLayout();
    m_document->undoStack()->clear();
  }
  m_inspector->setNode({});
  modelChanged();
  m_canvas->fitReadably();
}

void ModelPage::modelChanged() {
  const auto& doc = *m_document;
  if (doc.filePath().isEmpty()) {
    m_title->setText(
        tr("No project open. File > Open (Ctrl+O) loads a *.netsmith.json file; "
           "File > New from template starts one."));
  } else {
    m_title->setText(tr("<b>%1</b> &mdash; %2")
                         .arg(QString::fromStdString(doc.project().name).toHtmlEscaped(),
                              doc.filePath().toHtmlEscaped()));
  }
  m_canvas->rebuild();
  if (auto* collapse = findChild<QAction*>(QStringLiteral("actionCollapseGroups")))
    collapse->setEnabled(!m_canvas->groups().isEmpty());
  m_inspector->refreshValues();
  refreshTable();
  refreshTotals();
  refreshProblems();
}

void ModelPage::appendOp(const QString& op) {
  const QStringList sel = m_canvas->selectedIds();
  QString why;
  QString id;
  if (sel.size() == 1) {
    id = m_editor->addNode(op, {}, sel[0], &why);
  } else {
    // Below everything, unconnected.
    double bottom = -80;
    for (const auto& n : m_editor->model().nodes)
      bottom = std::max(bottom, n.y);
    id = m_editor->addNode(op, QPointF(0, bottom + 80), {}, &why);
  }
  if (id.isEmpty())
    Q_EMIT m_canvas->message(why);
  else
    m_canvas->selectNodes({id}, true);
}

void ModelPage::cutSelection() {
  const QStringList sel = m_canvas->selectedIds();
  if (sel.isEmpty()) return;
  QApplication::clipboard()->setText(m_editor->copy(sel));
  m_editor->removeNodes(sel);
}

void ModelPage::deleteSelection() {
  m_editor->removeNodes(m_canvas->selectedIds());
}

void ModelPage::selectAllNodes() {
  QStringList all;
  for (const auto& n : m_editor->model().nodes)
    all << QString::fromStdString(n.id);
  m_canvas->selectNodes(all);
}

void ModelPage::copySelection() {
  const QStringList sel = m_canvas->selectedIds();
  if (!sel.isEmpty()) QApplication::clipboard()->setText(m_editor->copy(sel));
}

void ModelPage::pasteClipboard() {
  QString why;
  const QStringList ids = m_editor->paste(QApplication::clipboard()->text(), {40, 40}, &why);
  if (ids.isEmpty())
    Q_EMIT m_canvas->message(why);
  else
    m_canvas->selectNodes(ids);
}

void ModelPage::refreshTable() {
  const auto& a = m_document->analysis();
  m_table->setSortingEnabled(false);
  m_table->setRowCount(static_cast<int>(a.nodes.size()));
  for (int row = 0; row < static_cast<int>(a.nodes.size()); ++row) {
    const auto& n = a.nodes[static_cast<std::size_t>(row)];
    m_table->setItem(row, 0, new QTableWidgetItem(QString::fromStdString(n.id)));
    m_table->setItem(row, 1, new QTableWidgetItem(QString::fromStdString(n.op)));
    m_table->setItem(row, 2,
                     new QTableWidgetItem(QString::fromStdString(formatShape(n.outputShape))));
    m_table->setItem(row, 3,
                     new NumberItem(QString::fromStdString(graph::formatCount(n.paramCount)),
                                    double(n.paramCount)));
    m_table->setItem(
        row, 4, new NumberItem(QString::fromStdString(graph::formatCount(n.macs)), double(n.macs)));
    m_table->setItem(row, 5,
                     new NumberItem(bytes(double(n.activationBytes)), double(n.activationBytes)));
  }
  m_table->setSortingEnabled(true);
}

qint64 ModelPage::trainingMemory(qint64 batch) const {
  const auto& train = m_document->project().train;
  std::string opt = "adam";
  double momentum = 0;
  if (train.is_object() && train.contains("optimizer") && train["optimizer"].is_object()) {
    const auto& o = train["optimizer"];
    if (o.contains("type") && o["type"].is_string()) opt = o["type"].get<std::string>();
    if (o.contains("momentum") && o["momentum"].is_number()) momentum = o["momentum"].get<double>();
  }
  return graph::estimateTrainingMemory(m_document->analysis(), batch,
                                       graph::optimizerStateSlots(opt, momentum))
      .total();
}

qint64 ModelPage::largestBatch(qint64 budgetBytes) const {
  const qint64 fixed = trainingMemory(0);
  const qint64 perSample = trainingMemory(1) - fixed;
  if (perSample <= 0 || budgetBytes <= fixed) return 0;
  return (budgetBytes - fixed) / perSample;
}

void ModelPage::refreshTotals() {
  const auto& a = m_document->analysis();
  if (m_document->filePath().isEmpty()) {
    m_totals->clear();
    return;
  }
  const qint64 budget = qint64(m_budget->value() * double(1 << 30));
  const QString largest = a.ok() ? QString::number(largestBatch(budget)) : QStringLiteral("?");
  m_totals->setText(
      tr("Parameters: %1 (trainable %2, frozen %3)   MACs/sample: %4   Output: %5   "
         "Training memory: %6   Largest batch: %7   Analysis: %8 ms")
          .arg(QString::fromStdString(graph::formatCount(a.totalParams)),
               QString::fromStdString(graph::formatCount(a.trainableParams)),
               QString::fromStdString(graph::formatCount(a.totalParams - a.trainableParams)),
               QString::fromStdString(graph::formatCount(a.totalMacs)),
               QString::fromStdString(formatShape(a.outputShape)),
               a.ok() ? bytes(double(trainingMemory(m_batch->value()))) : QStringLiteral("?"),
               largest)
          .arg(m_document->lastAnalysisMs(), 0, 'f', 2));
}

QString ModelPage::totalsText() const {
  return m_totals->text();
}

void ModelPage::refreshProblems() {
  m_problems->clear();
  for (const auto& p : m_document->problems()) {
    auto* item = new QListWidgetItem(QString::fromStdString(p.toString()), m_problems);
    item->setData(Qt::UserRole, QString::fromStdString(p.nodeId));
    const QString fix = m_editor->fixFor(QString::fromStdString(p.nodeId));
    if (!fix.isEmpty()) item->setToolTip(tr("Double-click: %1").arg(fix));
  }
  m_problems->setVisible(m_problems->count() > 0);
}

bool ModelPage::exportTableCsv(const QString& path, QString* error) {
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly | QIODevice::Text)) {
    if (error) *error = tr("%1: cannot write (%2)").arg(path, file.errorString());
    return false;
  }
  QByteArray out = "node,op,output_shape,params,macs,activation_bytes\n";
  for (const auto& n : m_document->analysis().nodes)
    out += QStringLiteral("%1,%2,%3,%4,%5,%6\n")
               .arg(QString::fromStdString(data::csvTextCell(n.id)),
                    QString::fromStdString(data::csvTextCell(n.op)),
                    QString::fromStdString(data::csvTextCell(formatShape(n.outputShape))))
               .arg(n.paramCount)
               .arg(n.macs)
               .arg(n.activationBytes)
               .toUtf8();
  file.write(out);
  if (!file.commit()) {
    if (error) *error = tr("%1: cannot write (%2)").arg(path, file.errorString());
    return false;
  }
  return true;
}

}  // namespace netsmith::ui
