#include "forms/class_editor.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QTableWidget>
#include <QToolButton>
#include <QVBoxLayout>

#include <filesystem>
#include <system_error>

#include "data/preview_grid.h"
#include "run/run_layout.h"
#include "run/run_records.h"
#include "session/project_document.h"
#include "util/theme_colors.h"

namespace netsmith::ui {

namespace {

constexpr int kNameColumn = 0;
constexpr int kColourColumn = 1;

QString hexOf(const cv::Vec3f& c) {
  return QColor(int(c[0]), int(c[1]), int(c[2])).name();
}

}  // namespace

ClassEditor::ClassEditor(ProjectDocument* document, QWidget* parent)
    : QGroupBox(tr("Classes"), parent),
      m_document(document),
      m_table(new QTableWidget(this)),
      m_up(new QToolButton(this)),
      m_down(new QToolButton(this)),
      m_note(new QLabel(this)),
      m_warning(new QLabel(this)) {
  setObjectName(QStringLiteral("classEditor"));
  m_table->setObjectName(QStringLiteral("classTable"));
  m_table->setColumnCount(2);
  m_table->setHorizontalHeaderLabels({tr("Name"), tr("Colour")});
  m_table->horizontalHeader()->setSectionResizeMode(kNameColumn, QHeaderView::Stretch);
  m_table->horizontalHeader()->setSectionResizeMode(kColourColumn, QHeaderView::ResizeToContents);
  m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_table->setSelectionMode(QAbstractItemView::SingleSelection);
  m_table->setEditTriggers(QAbstractItemView::DoubleClicked | QAbstractItemView::EditKeyPressed |
                           QAbstractItemView::AnyKeyPressed);
  m_table->setMinimumHeight(120);
  m_table->setToolTip(
      tr("The model's outputs in order: output 0 is the first row (the row numbers)"));
  m_up->setObjectName(QStringLiteral("classUp"));
  m_down->setObjectName(QStringLiteral("classDown"));
  m_up->setArrowType(Qt::UpArrow);
  m_down->setArrowType(Qt::DownArrow);
  m_up->setToolTip(tr("Move the class one output up (Alt+Up)"));
  m_down->setToolTip(tr("Move the class one output down (Alt+Down)"));
  m_table->installEventFilter(this);  // Alt+Up / Alt+Down on the list move the class
  m_note->setObjectName(QStringLiteral("classNote"));
  m_note->setWordWrap(true);
  m_warning->setObjectName(QStringLiteral("classWarning"));
  m_warning->setWordWrap(true);
  cautionLabel(m_warning);
  m_warning->hide();

  auto* buttons = new QVBoxLayout;
  buttons->addWidget(m_up);
  buttons->addWidget(m_down);
  buttons->addStretch(1);
  auto* row = new QHBoxLayout;
  row->addWidget(m_table, 1);
  row->addLayout(buttons);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(row);
  layout->addWidget(m_note);
  layout->addWidget(m_warning);

  connect(m_table, &QTableWidget::itemChanged, this, &ClassEditor::edited);
  connect(m_table, &QTableWidget::currentCellChanged, this, [this](int current) {
    const bool order = naming() == data::ClassNaming::Order;
    m_up->setEnabled(order && current > 0);
    m_down->setEnabled(order && current >= 0 && current + 1 < m_table->rowCount());
  });
  connect(m_up, &QToolButton::clicked, this, [this] { move(-1); });
  connect(m_down, &QToolButton::clicked, this, [this] { move(1); });
  refresh();
}

bool ClassEditor::eventFilter(QObject* watched, QEvent* event) {
  if (watched == m_table && event->type() == QEvent::KeyPress) {
    const auto* key = static_cast<QKeyEvent*>(event);
    if (key->modifiers() == Qt::AltModifier &&
        (key->key() == Qt::Key_Up || key->key() == Qt::Key_Down)) {
      move(key->key() == Qt::Key_Up ? -1 : 1);
      return true;
    }
  }
  return QGroupBox::eventFilter(watched, event);
}

data::ClassNaming ClassEditor::naming() const {
  return data::classNamingOf(m_document->project().data);
}

bool ClassEditor::segmentation() const {
  const auto* def = data::trainSourceFormat(m_document->project().data);
  return def && data::targetTraits(def->targets).colouredClasses;
}

QStringList ClassEditor::classes() const {
  const Json& d = m_document->project().data;
  QStringList out;
  if (d.is_object() && d.contains("classes") && d["classes"].is_array()) {
    for (const auto& c : d["classes"])
      out << (c.is_string() ? QString::fromStdString(c.get<std::string>()) : QString());
    return out;
  }
  // A scan of another source says nothing of this one's classes.
  const Json train = d.is_object() && d.contains("train") ? d["train"] : Json();
  return train == m_scannedSource ? m_scanned : QStringList();
}

QStringList ClassEditor::colours() const {
  const Json& d = m_document->project().data;
  std::vector<std::string> given;
  if (d.is_object() && d.contains("colors") && d["colors"].is_array())
    for (const auto& c : d["colors"])
      given.push_back(c.is_string() ? c.get<std::string>() : std::string());
  QStringList out;
  // The overlay's colours (its palette starts one on: class 0 is mostly background).
  for (int k = 0; k < classes().size(); ++k)
    out << hexOf(data::classColor(std::size_t(k), given, 1));
  return out;
}

void ClassEditor::setScanned(const QStringList& classes) {
  const QStringList before = this->classes();
  m_scanned = classes;
  const Json& d = m_document->project().data;
  m_scannedSource = d.is_object() && d.contains("train") ? d["train"] : Json();
  // A scan that leaves the list as it was changes nothing shown here, and what the last edit
  // said (its warning) stays.
  if (this->classes() == before && m_table->rowCount() == before.size()) return;
  refresh();
}

void ClassEditor::clear() {
  m_scanned.clear();
  m_warning->hide();
  refresh();
}

void ClassEditor::refresh() {
  // What the last edit here said stays until the project changes some other way (an undo).
  if (!m_keepWarning) m_warning->hide();
  m_keepWarning = false;
  const auto kind = naming();
  setVisible(kind != data::ClassNaming::None);
  const QStringList names = classes();
  const bool colour = segmentation();
  const QStringList shades = colour ? colours() : QStringList();
  {
    m_filling = true;
    const QSignalBlocker block(m_table);
    const int current = m_table->currentRow();
    m_table->setRowCount(int(names.size()));
    m_table->setColumnHidden(kColourColumn, !colour);
    QStringList rows;
    for (int k = 0; k < names.size(); ++k) {
      rows << QString::number(k);
      auto* name = new QTableWidgetItem(names[k]);
      Qt::ItemFlags flags = Qt::ItemIsSelectable | Qt::ItemIsEnabled;
      if (kind == data::ClassNaming::Names) flags |= Qt::ItemIsEditable;
      name->setFlags(flags);
      m_table->setItem(k, kNameColumn, name);
      if (colour) {
        auto* shade = new QTableWidgetItem(shades[k]);
        shade->setFlags(Qt::ItemIsSelectable | Qt::ItemIsEnabled | Qt::ItemIsEditable);
        shade->setData(Qt::DecorationRole, QColor(shades[k]));
        shade->setToolTip(tr("The class's colour over images: #rrggbb"));
        m_table->setItem(k, kColourColumn, shade);
      }
    }
    m_table->setVerticalHeaderLabels(rows);
    if (current >= 0 && current < m_table->rowCount()) m_table->setCurrentCell(current, 0);
    m_filling = false;
  }
  const int current = m_table->currentRow();
  const bool order = kind == data::ClassNaming::Order;
  m_up->setVisible(order);
  m_down->setVisible(order);
  m_up->setEnabled(order && current > 0);
  m_down->setEnabled(order && current >= 0 && current + 1 < m_table->rowCount());
  QString note;
  if (names.isEmpty()) {
    note = tr("Scan the data to list its classes.");
  } else {
    switch (kind) {
      case data::ClassNaming::Names:
        note =
            tr("Double-click a name to change it (the data holds class numbers; the project "
               "names them).");
        break;
      case data::ClassNaming::Order:
        note =
            tr("The data names its classes; select one and move it to change the model's "
               "output order.");
        break;
      case data::ClassNaming::Folders:
        note =
            tr("Named by the class folders, in sorted order: rename a folder to rename its "
               "class, then scan again.");
        break;
      case data::ClassNaming::Fixed:
        note =
            tr("Named and ordered by the data (the manifest's labels or columns): change "
               "them there.");
        break;
      case data::ClassNaming::None:
        break;
    }
    if (colour) note += QLatin1Char(' ') + tr("Type a colour as #rrggbb.");
  }
  m_note->setText(note);
}

void ClassEditor::edited(QTableWidgetItem* item) {
  if (m_filling || !item) return;
  // Applied once the view has finished committing the edit: writing the project fills the
  // table again, which must not happen under the item being set.
  QMetaObject::invokeMethod(
      this,
      [this, row = item->row(), column = item->column(), text = item->text()] {
        apply(row, column, text);
      },
      Qt::QueuedConnection);
}

void ClassEditor::apply(int row, int column, const QString& text) {
  QStringList names = classes();
  if (row < 0 || row >= names.size()) return refresh();
  const QString typed = text.trimmed();
  const auto refuse = [this](const QString& why) {
    m_warning->setText(why);
    m_warning->show();
    m_keepWarning = true;
    refresh();
  };
  if (column == kNameColumn) {
    if (typed == names[row]) return refresh();
    if (typed.isEmpty())
      return refuse(tr("A class needs a name: class %1 kept \"%2\".").arg(row).arg(names[row]));
    if (names.contains(typed))
      return refuse(tr("\"%1\" already names another class: class %2 kept \"%3\".")
                        .arg(typed)
                        .arg(row)
                        .arg(names[row]));
    const QString before = names[row];
    names[row] = typed;
    write(names, Json(), tr("Rename class %1 to \"%2\"").arg(before, typed), true);
    return;
  }
  static const QRegularExpression kHex(QStringLiteral("^#[0-9a-fA-F]{6}$"));
  if (!kHex.match(typed).hasMatch())
    return refuse(tr("\"%1\" is not a colour: type #rrggbb (#ff8800).").arg(typed));
  QStringList shades = colours();
  if (shades[row].compare(typed, Qt::CaseInsensitive) == 0) return refresh();
  shades[row] = typed.toLower();
  Json colors = Json::array();
  for (const auto& s : shades)
    colors.push_back(s.toStdString());
  write(names, colors, tr("Colour of class %1: %2").arg(names[row], typed), false);
}

void ClassEditor::move(int delta) {
  const int row = m_table->currentRow();
  QStringList names = classes();
  const int to = row + delta;
  if (naming() != data::ClassNaming::Order || row < 0 || to < 0 || to >= names.size()) return;
  Json colors;
  if (segmentation()) {
    QStringList shades = colours();
    shades.swapItemsAt(row, to);
    colors = Json::array();
    for (const auto& s : shades)
      colors.push_back(s.toStdString());
  }
  const QString name = names[row];
  names.swapItemsAt(row, to);
  write(names, colors, tr("Move class \"%1\" to output %2").arg(name).arg(to), true);
  m_table->setCurrentCell(to, kNameColumn);
}

void ClassEditor::write(const QStringList& names, const Json& colors, const QString& text,
                        bool changesCheckpoints) {
  Json data = m_document->project().data;
  Json list = Json::array();
  for (const auto& n : names)
    list.push_back(n.toStdString());
  data["classes"] = list;
  if (!colors.is_null()) data["colors"] = colors;
  m_warning->hide();
  if (changesCheckpoints) {
    if (const int runs = runsWithCheckpoints()) {
      m_warning->setText(
          (runs == 1 ? tr("1 run of this project has a checkpoint")
                     : tr("%1 runs of this project have checkpoints").arg(runs)) +
          tr(" trained with the classes as they were: their outputs keep the old names and "
             "order. Train again for a model of these classes."));
      m_warning->show();
      m_keepWarning = true;
    }
  }
  m_document->editSection(QStringLiteral("data"), data, text);
}

int ClassEditor::runsWithCheckpoints() const {
  namespace fs = std::filesystem;
  const QString base = m_document->baseDir();
  if (base.isEmpty()) return 0;
  const std::string prefix = run_layout::runNamePrefix(m_document->project().name);
  int runs = 0;
  for (const auto& dir : run::runFolders(run_layout::runsRoot(base.toStdString()))) {
    if (fs::path(dir).filename().string().rfind(prefix, 0) != 0) continue;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(run_layout::checkpointIn(dir), ec)) {
      if (entry.path().extension() == ".safetensors" && entry.is_regular_file(ec) &&
          !entry.is_symlink(ec)) {
        ++runs;
        break;
      }
    }
  }
  return runs;
}

}  // namespace netsmith::ui
