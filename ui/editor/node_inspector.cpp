#include "editor/node_inspector.h"

#include "experiment/sweep_spec.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>
#include <cmath>
#include <limits>

#include "editor/model_editor.h"
#include "graph/graph_analysis.h"
#include "graph/model_graph.h"
#include "ops/op_registry.h"
#include "schema/param_schema.h"
#include "session/project_document.h"
#include "util/schema_form.h"
#include "util/widget_retire.h"

namespace netsmith::ui {

NodeInspector::NodeInspector(ModelEditor* editor, QWidget* parent)
    : QWidget(parent),
      m_editor(editor),
      m_heading(new QLabel(this)),
      m_formHost(new QWidget(this)),
      m_fix(new QPushButton(this)) {
  setObjectName(QStringLiteral("nodeInspector"));
  m_heading->setWordWrap(true);
  m_heading->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_fix->setObjectName(QStringLiteral("nodeFix"));
  m_fix->hide();
  connect(m_fix, &QPushButton::clicked, this, [this] { m_editor->applyFix(m_id); });
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_heading);
  layout->addWidget(m_fix, 0, Qt::AlignLeft);
  layout->addWidget(m_formHost);
  layout->addStretch(1);
  setMinimumWidth(250);
  rebuild();
}

QWidget* NodeInspector::field(const QString& key) const {
  QWidget* own = m_params ? m_params->field(key) : nullptr;
  return own || !m_input ? own : m_input->field(key);
}

Json NodeInspector::inputValues() const {
  const auto& in = m_editor->model().input;
  return Json{{"channels", in.channels}, {"height", in.height}, {"width", in.width}};
}

void NodeInspector::setNode(const QString& id) {
  m_id = id;
  rebuild();
}

void NodeInspector::rebuild() {
  // Retired, not deleted: an edit from one of these fields may be what asked for the rebuild.
  delete m_formHost->layout();
  retireChildWidgets(m_formHost);
  m_params = nullptr;
  m_input = nullptr;
  m_init = nullptr;
  m_frozen = nullptr;
  m_form = new QFormLayout(m_formHost);
  m_form->setContentsMargins(0, 0, 0, 0);
  const auto* n = m_editor->model().find(m_id.toStdString());
  const auto* def = n ? m_editor->document()->registry().find(n->op) : nullptr;
  if (!n || !def) {
    m_op.clear();
    m_fix->hide();
    m_heading->setText(tr("<i>Select one node to edit its parameters.</i>"));
    return;
  }
  m_op = QString::fromStdString(n->op);
  m_heading->setText(QStringLiteral("<b>%1</b> &mdash; %2<br><small>%3</small>")
                         .arg(m_id.toHtmlEscaped(), m_op.toHtmlEscaped(),
                              QString::fromStdString(def->help).toHtmlEscaped()));
  const QString id = m_id;
  m_params = new SchemaForm(m_formHost);
  m_params->setObjectName(QStringLiteral("nodeParams"));
  m_params->setOnChange(
      [this, id](const QString& key, const Json& v) { m_editor->setParam(id, key, v); });
  m_params->setOnSweep(
      [this, id](const QString& key, const schema::ParamSpec& spec, const Json& v) {
        m_editor->document()->addSweepParam(experiment::suggestSweepParam(
            "model.nodes[" + id.toStdString() + "]." + key.toStdString(), spec, v));
      });
  m_params->setSchema(def->schema, n->params);
  m_form->addRow(m_params);
  if (m_op == QLatin1String("Input")) {
    // The model input (model.input) belongs to the Input node: what each image becomes.
    m_input = new SchemaForm(m_formHost);
    m_input->setObjectName(QStringLiteral("nodeInputShape"));
    m_input->setOnChange([this](const QString& key, const Json& v) {
      if (v.is_number_integer()) m_editor->setInputDimension(key, v.get<std::int64_t>());
    });
    m_input->setSchema(graph::inputSchema(), inputValues());
    m_form->addRow(m_input);
  }
  if (!def->initSchemes.empty()) {
    m_init = new QComboBox(m_formHost);
    m_init->setObjectName(QStringLiteral("nodeInit"));
    m_init->addItem(QStringLiteral("default"));
    for (auto s : def->initSchemes)
      m_init->addItem(QString::fromStdString(ops::initSchemeName(s)));
    m_init->setToolTip(tr("Weight initialisation (default: PyTorch's own)"));
    QObject::connect(m_init, &QComboBox::textActivated, this,
                     [this, id](const QString& s) { m_editor->setInit(id, s); });
    m_form->addRow(tr("init"), m_init);
  }
  m_frozen = new QCheckBox(tr("frozen (not trained)"), m_formHost);
  m_frozen->setObjectName(QStringLiteral("nodeFrozen"));
  QObject::connect(m_frozen, &QCheckBox::toggled, this,
                   [this, id](bool on) { m_editor->setFrozen(id, on); });
  auto* freezeUp = new QPushButton(tr("Freeze up to here"), m_formHost);
  freezeUp->setObjectName(QStringLiteral("nodeFreezeUpTo"));
  freezeUp->setToolTip(tr("Freeze this node and every node before it (fine-tuning)"));
  QObject::connect(freezeUp, &QPushButton::clicked, this, [this, id] { m_editor->freezeUpTo(id); });
  auto* lrMult = new QDoubleSpinBox(m_formHost);
  lrMult->setObjectName(QStringLiteral("nodeLrMult"));
  lrMult->setRange(0.001, 1000);
  lrMult->setDecimals(3);
  lrMult->setSingleStep(0.1);
  lrMult->setPrefix(QStringLiteral("x"));
  lrMult->setToolTip(tr("This node's parameters train at this multiple of the learning rate"));
  if (const auto* n = m_editor->document()->project().model.find(id.toStdString()))
    lrMult->setValue(n->lrMult);
  QObject::connect(lrMult, &QDoubleSpinBox::editingFinished, this,
                   [this, id, lrMult] { m_editor->setLrMult(id, lrMult->value()); });
  m_form->addRow(tr("learning rate"), lrMult);
  // One row each: side by side, the check box's label was cut in a narrow inspector.
  m_form->addRow(QString(), m_frozen);
  m_form->addRow(QString(), freezeUp);
  refreshValues();
}

void NodeInspector::refreshValues() {
  const auto* n = m_editor->model().find(m_id.toStdString());
  if (!n || QString::fromStdString(n->op) != m_op) {
    if (!m_op.isEmpty() || n) rebuild();
    return;
  }
  const auto* info = m_editor->document()->analysis().find(n->id);
  m_params->setValues(n->params, info ? info->autoValues : Json());
  if (m_input) m_input->setValues(inputValues());
  const QString fix = m_editor->fixFor(m_id);
  m_fix->setText(tr("Fix: %1").arg(fix));
  m_fix->setToolTip(tr("Apply the quick fix of this node's problem (undoable)"));
  m_fix->setVisible(!fix.isEmpty());
  if (m_init) {
    const QSignalBlocker block(m_init);
    m_init->setCurrentText(n->init.empty() ? QStringLiteral("default")
                                           : QString::fromStdString(n->init));
  }
  const QSignalBlocker block(m_frozen);
  m_frozen->setChecked(n->frozen);
}

}  // namespace netsmith::ui
