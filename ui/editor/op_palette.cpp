#include "editor/op_palette.h"

#include <QHeaderView>
#include <QLineEdit>
#include <QMimeData>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <map>

#include "editor/graph_canvas.h"
#include "ops/op_registry.h"

namespace netsmith::ui {

namespace {

/// Drags carry the op name under GraphCanvas::kOpMime.
class OpTree : public QTreeWidget {
 public:
  using QTreeWidget::QTreeWidget;

 protected:
  QMimeData* mimeData(const QList<QTreeWidgetItem*>& items) const override {
    if (items.isEmpty() || items[0]->data(0, Qt::UserRole).toString().isEmpty()) return nullptr;
    auto* mime = new QMimeData;
    mime->setData(QLatin1String(GraphCanvas::kOpMime),
                  items[0]->data(0, Qt::UserRole).toString().toUtf8());
    return mime;
  }
};

// The palette's group order.
int groupRank(const std::string& g) {
  static const std::vector<std::string> order = {
      "Input",  "Convolution", "Normalisation", "Activation", "Pooling",
      "Resize", "Linear",      "Merge",         "Reshape",    "Regularisation"};
  const auto it = std::find(order.begin(), order.end(), g);
  return it == order.end() ? int(order.size()) : int(it - order.begin());
}

}  // namespace

OpPalette::OpPalette(const ops::OpRegistry& registry, QWidget* parent)
    : QWidget(parent), m_search(new QLineEdit(this)), m_tree(new OpTree(this)) {
  setObjectName(QStringLiteral("opPalette"));
  m_search->setObjectName(QStringLiteral("opSearch"));
  m_search->setPlaceholderText(tr("Search layers"));
  m_search->setClearButtonEnabled(true);
  m_tree->setObjectName(QStringLiteral("opTree"));
  m_tree->setHeaderHidden(true);
  m_tree->setDragEnabled(true);
  m_tree->setDragDropMode(QAbstractItemView::DragOnly);
  std::map<std::pair<int, std::string>, QTreeWidgetItem*> groups;
  for (const auto& name : registry.names()) {
    const auto* def = registry.find(name);
    auto& group = groups[{groupRank(def->group), def->group}];
    if (!group) {
      group = new QTreeWidgetItem(QStringList{QString::fromStdString(def->group)});
      group->setFlags(Qt::ItemIsEnabled);
      QFont f = group->font(0);
      f.setBold(true);
      group->setFont(0, f);
    }
    auto* item = new QTreeWidgetItem(group, QStringList{QString::fromStdString(name)});
    item->setData(0, Qt::UserRole, QString::fromStdString(name));
    item->setToolTip(0, QString::fromStdString(def->help));
    item->setFlags(Qt::ItemIsEnabled | Qt::ItemIsSelectable | Qt::ItemIsDragEnabled);
  }
  for (auto& [key, group] : groups)
    m_tree->addTopLevelItem(group);
  m_tree->expandAll();
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(m_search);
  layout->addWidget(m_tree, 1);
  connect(m_search, &QLineEdit::textChanged, this, &OpPalette::setFilter);
  connect(m_tree, &QTreeWidget::itemDoubleClicked, this, [this](QTreeWidgetItem* item) {
    const QString op = item->data(0, Qt::UserRole).toString();
    if (!op.isEmpty()) Q_EMIT opActivated(op);
  });
}

void OpPalette::setFilter(const QString& text) {
  if (m_search->text() != text) m_search->setText(text);
  for (int g = 0; g < m_tree->topLevelItemCount(); ++g) {
    auto* group = m_tree->topLevelItem(g);
    int shown = 0;
    for (int i = 0; i < group->childCount(); ++i) {
      auto* item = group->child(i);
      const bool match = text.isEmpty() || item->text(0).contains(text, Qt::CaseInsensitive) ||
                         item->toolTip(0).contains(text, Qt::CaseInsensitive) ||
                         group->text(0).contains(text, Qt::CaseInsensitive);
      item->setHidden(!match);
      shown += match;
    }
    group->setHidden(shown == 0);
  }
}

QTreeWidgetItem* OpPalette::itemFor(const QString& op) const {
  for (int g = 0; g < m_tree->topLevelItemCount(); ++g)
    for (int i = 0; i < m_tree->topLevelItem(g)->childCount(); ++i) {
      auto* item = m_tree->topLevelItem(g)->child(i);
      if (item->data(0, Qt::UserRole).toString() == op && !item->isHidden()) return item;
    }
  return nullptr;
}

}  // namespace netsmith::ui
