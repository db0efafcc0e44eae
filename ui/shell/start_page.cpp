#include "shell/start_page.h"

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QEvent>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPainter>
#include <QPushButton>
#include <QVBoxLayout>

#include "graph/graph_analysis.h"
#include "ops/op_registry.h"
#include "project/project.h"
#include "shell/dialogs.h"
#include "shell/example_data_box.h"
#include "util/theme_colors.h"

namespace netsmith::ui {

namespace {

constexpr QSize kPicture(150, 44);
/// An entry's task, beside its path (Qt::UserRole).
constexpr int kTaskRole = Qt::UserRole + 1;

/// A picture of a network: one block per layer in order, tinted by its op's group (convolution
/// blue, normalisation green, activation orange, ...), wrapped into rows.
QPixmap networkPicture(const graph::ModelGraph& model, const ops::OpRegistry& registry) {
  QPixmap out(kPicture);
  out.fill(Qt::transparent);
  QPainter p(&out);
  p.setRenderHint(QPainter::Antialiasing);
  const int n = std::max<int>(1, int(model.nodes.size()));
  const int rows = n <= 24 ? 1 : n <= 60 ? 2 : 3;
  const int perRow = (n + rows - 1) / rows;
  const double w = double(kPicture.width()) / perRow;
  const double h = double(kPicture.height()) / rows;
  const QColor base = QApplication::palette().color(QPalette::Base);
  const QColor border = QApplication::palette().color(QPalette::Mid);
  for (int i = 0; i < int(model.nodes.size()); ++i) {
    const auto* def = registry.find(model.nodes[std::size_t(i)].op);
    const QColor fill = opGroupTint(def ? QString::fromStdString(def->group) : QString(), base);
    const QRectF r((i % perRow) * w + 0.5, (i / perRow) * h + 2, std::max(1.0, w - 1.5), h - 4);
    p.setPen(w > 4 ? QPen(border, 0.6) : Qt::NoPen);
    p.setBrush(fill.darker(110));
    p.drawRoundedRect(r, 1.5, 1.5);
  }
  return out;
}

/// "ResNet-18 in torchvision's layout" from its description, else the file's name.
QString titleOf(const QString& description, const QString& fallback) {
  QString t = description.section(QLatin1String(" ("), 0, 0).section(QLatin1Char(':'), 0, 0);
  t = t.section(QLatin1String(". "), 0, 0).trimmed();
  if (t.endsWith(QLatin1Char('.'))) t.chop(1);
  return t.isEmpty() || t.size() > 90 ? fallback : t;
}

}  // namespace

StartPage::StartPage(const ops::OpRegistry& registry, const QString& templatesDir, QWidget* parent)
    : QWidget(parent),
      m_registry(registry),
      m_recent(new QListWidget(this)),
      m_examples(new QListWidget(this)),
      m_taskFilter(new QComboBox(this)),
      m_exampleData(new ExampleDataBox(this)) {
  setObjectName(QStringLiteral("startPage"));
  auto* title = new QLabel(tr("<h2>Netsmith</h2>Build a convolutional network, point it at "
                              "images, train it, export it."),
                           this);
  title->setWordWrap(true);
  auto* buttons = new QHBoxLayout;
  const auto button = [&](const QString& text, const char* name, const QString& tip,
                          void (StartPage::*signal)()) {
    auto* b = new QPushButton(text, this);
    b->setObjectName(QLatin1String(name));
    b->setToolTip(tip);
    connect(b, &QPushButton::clicked, this, signal);
    buttons->addWidget(b);
  };
  button(tr("New project..."), "startNew",
         tr("A blank model for the task you choose, with its template's data and settings"),
         &StartPage::newBlankRequested);
  button(tr("New from a data folder..."), "startFromData",
         tr("Your images: class folders, a CSV manifest, images with masks, or a YOLO, COCO or VOC "
            "set"),
         &StartPage::newFromDataRequested);
  button(tr("Open..."), "startOpen", tr("Open a *.netsmith.json project (Ctrl+O)"),
         &StartPage::openDialogRequested);
  button(tr("Import ONNX..."), "startImport", tr("Import a network to fine-tune it"),
         &StartPage::importRequested);
  buttons->addStretch(1);

  m_recent->setObjectName(QStringLiteral("startRecent"));
  m_examples->setObjectName(QStringLiteral("startExamples"));
  m_examples->setIconSize(kPicture);
  m_examples->setSpacing(2);
  m_examples->setWordWrap(true);
  connect(m_recent, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) {
    Q_EMIT openRequested(item->data(Qt::UserRole).toString());
  });
  connect(m_examples, &QListWidget::itemActivated, this, [this](QListWidgetItem* item) {
    Q_EMIT templateChosen(item->data(Qt::UserRole).toString());
  });
  m_taskFilter->setObjectName(QStringLiteral("startTaskFilter"));
  m_taskFilter->setToolTip(tr("Show the examples and templates of one task"));
  m_taskFilter->addItem(tr("All tasks"), QString());
  for (const auto& task : NewProjectTaskDialog::choices())
    m_taskFilter->addItem(task.title, task.name);
  connect(m_taskFilter, qOverload<int>(&QComboBox::currentIndexChanged), this,
          &StartPage::applyTaskFilter);

  auto* left = new QVBoxLayout;
  left->addWidget(new QLabel(tr("<b>Recent projects</b> (double-click to open)"), this));
  left->addWidget(m_recent, 1);
  left->addSpacing(8);
  left->addWidget(m_exampleData);
  connect(m_exampleData, &ExampleDataBox::made, this, &StartPage::exampleDataMade);
  auto* right = new QVBoxLayout;
  auto* examplesHeading = new QHBoxLayout;
  auto* examplesTitle = new QLabel(
      tr("<b>Examples and templates</b> (double-click to start a project from one)"), this);
  examplesTitle->setWordWrap(true);
  examplesHeading->addWidget(examplesTitle, 1);
  examplesHeading->addWidget(m_taskFilter);
  right->addLayout(examplesHeading);
  right->addWidget(m_examples, 1);
  auto* lists = new QHBoxLayout;
  lists->addLayout(left, 2);
  lists->addLayout(right, 3);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(24, 16, 24, 16);
  layout->addWidget(title);
  layout->addLayout(buttons);
  layout->addSpacing(8);
  layout->addLayout(lists, 1);

  m_templatesDir = templatesDir;
  setRecent({});
}

void StartPage::showEvent(QShowEvent* event) {
  // Read the example files the first time the page is seen, not at every start: a studio
  // opened on a project never shows it.
  if (!m_loaded) {
    m_loaded = true;
    if (!m_templatesDir.isEmpty()) {
      addProjects(QFileInfo(m_templatesDir).dir().filePath(QStringLiteral("examples")),
                  tr("example"));
      addProjects(m_templatesDir, tr("template"));
    }
    fillExamples();
  }
  QWidget::showEvent(event);
}

void StartPage::fillExamples() {
  m_examples->clear();
  for (const auto& e : m_entries) {
    auto* item = new QListWidgetItem(QIcon(networkPicture(e.model, m_registry)),
                                     e.title + QLatin1Char('\n') + e.line, m_examples);
    item->setToolTip(e.tooltip);
    item->setData(Qt::UserRole, e.path);
    item->setData(kTaskRole, e.task);
  }
  applyTaskFilter();
}

void StartPage::applyTaskFilter() {
  const QString task = m_taskFilter->currentData().toString();
  for (int i = 0; i < m_examples->count(); ++i) {
    QListWidgetItem* item = m_examples->item(i);
    item->setHidden(!task.isEmpty() && item->data(kTaskRole).toString() != task);
  }
}

void StartPage::changeEvent(QEvent* event) {
  // The pictures are drawn in the theme's colours: again after a theme change (from the
  // files read once).
  if (event->type() == QEvent::PaletteChange && m_loaded) fillExamples();
  QWidget::changeEvent(event);
}

void StartPage::addProjects(const QString& dir, const QString& kind) {
  for (const QFileInfo& info :
       QDir(dir).entryInfoList({QStringLiteral("*.netsmith.json")}, QDir::Files, QDir::Name)) {
    try {
      const auto loaded = project::loadProject(info.absoluteFilePath().toStdString());
      const auto& p = loaded.project;
      const QString description = QString::fromStdString(p.description);
      const auto analysis = graph::analyseGraph(p.model, m_registry);
      const auto& in = p.model.input;
      const QString task = QString::fromStdString(p.task);
      m_entries.push_back(
          {info.absoluteFilePath(), titleOf(description, QString::fromStdString(p.name)),
           tr("%1 · %2: %3x%4x%5 input, %L6 parameters")
               .arg(kind)
               .arg(NewProjectTaskDialog::choice(task).noun)
               .arg(in.channels)
               .arg(in.height)
               .arg(in.width)
               .arg(analysis.totalParams),
           description + QLatin1Char('\n') + info.absoluteFilePath(), task, p.model});
    } catch (const std::exception&) {
      // A damaged file in the templates folder is left out of the list.
    }
  }
}

void StartPage::setRecent(const QStringList& paths) {
  m_recent->clear();
  for (const auto& path : paths) {
    const QFileInfo info(path);
    if (!info.isFile()) continue;
    QString name = info.fileName();
    name.chop(int(qstrlen(".netsmith.json")));
    auto* item = new QListWidgetItem(
        name + QLatin1Char('\n') + QDir::toNativeSeparators(info.absolutePath()), m_recent);
    item->setToolTip(QDir::toNativeSeparators(path));
    item->setData(Qt::UserRole, path);
  }
  if (m_recent->count() == 0) {
    auto* none = new QListWidgetItem(tr("(none yet)"), m_recent);
    none->setFlags(Qt::NoItemFlags);
  }
}

}  // namespace netsmith::ui
