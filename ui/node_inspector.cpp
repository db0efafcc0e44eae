#include "node_inspector.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QToolButton>
#include <QVBoxLayout>
#include <cmath>
#include <limits>

#include "model_editor.h"
#include "ops/op_registry.h"
#include "project_document.h"

namespace netsmith::ui {

namespace {

constexpr int kIntLimit = 1 << 30;

int intMin(const schema::ParamSpec& s) {
  return s.min ? int(std::max<double>(*s.min + (s.minExclusive ? 1 : 0), -kIntLimit)) : -kIntLimit;
}
int intMax(const schema::ParamSpec& s) {
  return s.max ? int(std::min<double>(*s.max, kIntLimit)) : kIntLimit;
}

}  // namespace

NodeInspector::NodeInspector(ModelEditor* editor, QWidget* parent)
    : QWidget(parent),
      m_editor(editor),
      m_heading(new QLabel(this)),
      m_formHost(new QWidget(this)) {
  setObjectName(QStringLiteral("nodeInspector"));
  m_heading->setWordWrap(true);
  m_heading->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_heading);
  layout->addWidget(m_formHost);
  layout->addStretch(1);
  setMinimumWidth(250);
  rebuild();
}

void NodeInspector::setNode(const QString& id) {
  m_id = id;
  rebuild();
}

Json NodeInspector::currentValue(const QString& key) const {
  const auto* n = m_editor->model().find(m_id.toStdString());
  if (!n) return {};
  if (n->params.contains(key.toStdString())) return n->params[key.toStdString()];
  const auto* def = m_editor->document()->registry().find(n->op);
  for (const auto& spec : def ? def->schema : schema::ParamSchema{})
    if (spec.name == key.toStdString()) return spec.defaultValue;
  return {};
}

void NodeInspector::rebuild() {
  delete m_formHost->layout();
  qDeleteAll(m_formHost->findChildren<QWidget*>(QString(), Qt::FindDirectChildrenOnly));
  m_fields.clear();
  m_init = nullptr;
  m_frozen = nullptr;
  m_form = new QFormLayout(m_formHost);
  m_form->setContentsMargins(0, 0, 0, 0);
  const auto* n = m_editor->model().find(m_id.toStdString());
  const auto* def = n ? m_editor->document()->registry().find(n->op) : nullptr;
  if (!n || !def) {
    m_op.clear();
    m_heading->setText(tr("<i>Select one node to edit its parameters.</i>"));
    return;
  }
  m_op = QString::fromStdString(n->op);
  m_heading->setText(QStringLiteral("<b>%1</b> &mdash; %2<br><small>%3</small>")
                         .arg(m_id.toHtmlEscaped(), m_op.toHtmlEscaped(),
                              QString::fromStdString(def->help).toHtmlEscaped()));
  const QString id = m_id;
  for (const auto& spec : def->schema) {
    const QString key = QString::fromStdString(spec.name);
    const QString help = QString::fromStdString(spec.help);
    const QString unit = spec.unit.empty() ? QString() : " " + QString::fromStdString(spec.unit);
    auto set = [this, id, key](const Json& v) { m_editor->setParam(id, key, v); };
    Field field;
    QWidget* editor = nullptr;
    QComboBox* keywordBox = nullptr;
    if (!spec.keywords.empty()) {
      keywordBox = new QComboBox(m_formHost);
      keywordBox->addItem(tr("value"));
      for (const auto& k : spec.keywords)
        keywordBox->addItem(QString::fromStdString(k));
      keywordBox->setToolTip(help);
    }
    using schema::ParamType;
    switch (spec.type) {
      case ParamType::Int:
      case ParamType::IntPair: {
        const bool pair = spec.type == ParamType::IntPair;
        auto* a = new QSpinBox(m_formHost);
        auto* b = pair ? new QSpinBox(m_formHost) : nullptr;
        for (auto* s : {a, b}) {
          if (!s) continue;
          s->setRange(intMin(spec), intMax(spec));
          s->setSuffix(unit);
          s->setToolTip(help);
          s->setKeyboardTracking(false);
        }
        auto* host = new QWidget(m_formHost);
        auto* row = new QHBoxLayout(host);
        row->setContentsMargins(0, 0, 0, 0);
        if (keywordBox) row->addWidget(keywordBox);
        row->addWidget(a, 1);
        if (b) row->addWidget(b, 1);
        auto emitValue = [a, b, keywordBox, set] {
          if (keywordBox && keywordBox->currentIndex() > 0) {
            set(Json(keywordBox->currentText().toStdString()));
            return;
          }
          if (b && a->value() != b->value())
            set(Json::array({a->value(), b->value()}));
          else
            set(Json(a->value()));
        };
        QObject::connect(a, qOverload<int>(&QSpinBox::valueChanged), this, emitValue);
        if (b) QObject::connect(b, qOverload<int>(&QSpinBox::valueChanged), this, emitValue);
        if (keywordBox)
          QObject::connect(keywordBox, qOverload<int>(&QComboBox::currentIndexChanged), this,
                           emitValue);
        field.show = [a, b, keywordBox](const Json& v) {
          const QSignalBlocker ba(a);
          std::optional<QSignalBlocker> bb;
          if (b) bb.emplace(b);
          std::optional<QSignalBlocker> bk;
          if (keywordBox) bk.emplace(keywordBox);
          const bool keyword = v.is_string();
          if (keywordBox) {
            const int i =
                keyword ? keywordBox->findText(QString::fromStdString(v.get<std::string>())) : 0;
            keywordBox->setCurrentIndex(std::max(0, i));
          }
          a->setEnabled(!keyword);
          if (b) b->setEnabled(!keyword);
          if (v.is_array() && v.size() == 2) {
            a->setValue(v[0].get<int>());
            if (b) b->setValue(v[1].get<int>());
          } else if (v.is_number()) {
            a->setValue(v.get<int>());
            if (b) b->setValue(v.get<int>());
          }
        };
        editor = host;
        field.widget = a;
        break;
      }
      case ParamType::Float: {
        auto* s = new QDoubleSpinBox(m_formHost);
        s->setDecimals(6);
        s->setRange(spec.min ? *spec.min : -1e9, spec.max ? *spec.max : 1e9);
        s->setSingleStep(0.01);
        s->setSuffix(unit);
        s->setToolTip(help);
        s->setKeyboardTracking(false);
        QObject::connect(s, qOverload<double>(&QDoubleSpinBox::valueChanged), this,
                         [set](double v) { set(Json(v)); });
        field.show = [s](const Json& v) {
          const QSignalBlocker block(s);
          if (v.is_number()) s->setValue(v.get<double>());
        };
        editor = s;
        field.widget = s;
        break;
      }
      case ParamType::Bool: {
        auto* c = new QCheckBox(m_formHost);
        c->setToolTip(help);
        QObject::connect(c, &QCheckBox::toggled, this, [set](bool v) { set(Json(v)); });
        field.show = [c](const Json& v) {
          const QSignalBlocker block(c);
          c->setChecked(v.is_boolean() && v.get<bool>());
        };
        editor = c;
        field.widget = c;
        break;
      }
      case ParamType::Enum: {
        auto* c = new QComboBox(m_formHost);
        for (const auto& choice : spec.choices)
          c->addItem(QString::fromStdString(choice));
        c->setToolTip(help);
        QObject::connect(c, &QComboBox::textActivated, this,
                         [set](const QString& v) { set(Json(v.toStdString())); });
        field.show = [c](const Json& v) {
          const QSignalBlocker block(c);
          if (v.is_string()) c->setCurrentText(QString::fromStdString(v.get<std::string>()));
        };
        editor = c;
        field.widget = c;
        break;
      }
      default: {  // FloatPair, FloatList: JSON text
        auto* e = new QLineEdit(m_formHost);
        e->setToolTip(help + tr(" (a number or a JSON list)"));
        QObject::connect(e, &QLineEdit::editingFinished, this, [e, set] {
          try {
            set(Json::parse(e->text().toStdString()));
            e->setStyleSheet({});
          } catch (const std::exception&) {
            e->setStyleSheet(QStringLiteral("QLineEdit { background: #fde2e2; }"));
          }
        });
        field.show = [e](const Json& v) {
          const QSignalBlocker block(e);
          e->setText(v.is_null() ? QString() : QString::fromStdString(v.dump()));
        };
        editor = e;
        field.widget = e;
        break;
      }
    }
    auto* reset = new QToolButton(m_formHost);
    reset->setText(QStringLiteral("\u21BA"));
    reset->setToolTip(tr("Reset %1 to its default (%2)")
                          .arg(key, QString::fromStdString(spec.defaultValue.dump())));
    QObject::connect(reset, &QToolButton::clicked, this, [set] { set(Json()); });
    auto* row = new QWidget(m_formHost);
    auto* rowLayout = new QHBoxLayout(row);
    rowLayout->setContentsMargins(0, 0, 0, 0);
    rowLayout->addWidget(editor, 1);
    rowLayout->addWidget(reset);
    auto* label =
        new QLabel(key + (spec.required() ? QStringLiteral(" *") : QString()), m_formHost);
    label->setToolTip(help);
    m_form->addRow(label, row);
    field.widget->setObjectName(QStringLiteral("param_") + key);
    m_fields.insert(key, field);
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
  m_form->addRow(QString(), m_frozen);
  refreshValues();
}

void NodeInspector::refreshValues() {
  const auto* n = m_editor->model().find(m_id.toStdString());
  if (!n || QString::fromStdString(n->op) != m_op) {
    if (!m_op.isEmpty() || n) rebuild();
    return;
  }
  for (auto it = m_fields.begin(); it != m_fields.end(); ++it)
    it->show(currentValue(it.key()));
  if (m_init) {
    const QSignalBlocker block(m_init);
    m_init->setCurrentText(n->init.empty() ? QStringLiteral("default")
                                           : QString::fromStdString(n->init));
  }
  const QSignalBlocker block(m_frozen);
  m_frozen->setChecked(n->frozen);
}

}  // namespace netsmith::ui
