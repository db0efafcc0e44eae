#include "util/schema_form.h"

#include <cmath>

#include <QMenu>

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
#include <cmath>
#include <optional>

#include "util/theme_colors.h"
#include "util/widget_retire.h"

namespace netsmith::ui {

namespace {

constexpr int kIntLimit = 1 << 30;

int intMin(const schema::ParamSpec& s) {
  return s.min ? int(std::max<double>(*s.min + (s.minExclusive ? 1 : 0), -kIntLimit)) : -kIntLimit;
}
int intMax(const schema::ParamSpec& s) {
  return s.max ? int(std::min<double>(*s.max, kIntLimit)) : kIntLimit;
}

/// A real-number spin box that shows "1e-08" and "0.001" rather than fixed decimals.
class RealSpinBox : public QDoubleSpinBox {
 public:
  using QDoubleSpinBox::QDoubleSpinBox;
  /// One arrow press or wheel notch: `step` (ParamSpec::suggestedStep), or with 0 a tenth of
  /// the value's order of magnitude (0.001 moves to 0.0011 and 0.0009; 0 moves by 0.01).
  void setStep(double step) {
    m_step = step;
    setSingleStep(step > 0 ? step : 0.01);
  }
  void stepBy(int steps) override {
    double step = m_step;
    if (step <= 0) {
      const double magnitude = std::abs(value());
      step = magnitude > 0 ? std::pow(10.0, std::floor(std::log10(magnitude)) - 1) : 0.01;
    }
    setValue(value() + steps * step);  // held to the range by setValue
  }
  QString textFromValue(double value) const override { return QString::number(value, 'g', 6); }
  double valueFromText(const QString& text) const override {
    return text.trimmed().remove(suffix()).toDouble();
  }
  QValidator::State validate(QString& text, int&) const override {
    bool ok = false;
    QString t = text.trimmed();
    t.remove(suffix());
    t.toDouble(&ok);
    if (ok) return QValidator::Acceptable;
    return t.isEmpty() || t == QLatin1String("-") || t.endsWith('e') || t.endsWith('.') ||
                   t.endsWith(QLatin1String("e-"))
               ? QValidator::Intermediate
               : QValidator::Invalid;
  }

 private:
  double m_step = 0.01;
};

/// The editor (and a second one: a pair's) with its keyword drop-down ("value", "auto", ...) on
/// its left, in one row; the editor alone when it takes no keyword and has no second.
QWidget* besideKeywords(QWidget* parent, QComboBox* keywordBox, QWidget* editor,
                        QWidget* second = nullptr) {
  if (!keywordBox && !second) return editor;
  auto* host = new QWidget(parent);
  auto* row = new QHBoxLayout(host);
  row->setContentsMargins(0, 0, 0, 0);
  if (keywordBox) row->addWidget(keywordBox);
  row->addWidget(editor, 1);
  if (second) row->addWidget(second, 1);
  return host;
}

/// Shows `given` in the keyword drop-down (its keyword, or "value" for anything else) with the
/// box's signals blocked; true when a keyword is in force.
bool showKeyword(QComboBox* keywordBox, const Json& given) {
  const bool keyword = keywordBox && given.is_string();
  if (keywordBox) {
    const QSignalBlocker block(keywordBox);
    const int i =
        keyword ? keywordBox->findText(QString::fromStdString(given.get<std::string>())) : 0;
    keywordBox->setCurrentIndex(std::max(0, i));
  }
  return keyword;
}

/// The old rows of `form` and the other child widgets of `owner` are retired, not deleted: a
/// rebuild may run inside a signal of one of them.
void retireSchemaFormRows(QFormLayout* form, QWidget* owner) {
  while (form->rowCount() > 0) {
    const QFormLayout::TakeRowResult taken = form->takeRow(0);
    for (QLayoutItem* item : {taken.labelItem, taken.fieldItem}) {
      if (item) retireWidget(item->widget());
      delete item;
    }
  }
  retireChildWidgets(owner);
}

/// Sends a field's new value (a null value: back to the default).
using SchemaSetFn = std::function<void(const Json&)>;

/// What a field's editor set-up gives back: the widget for the row, the main editor, and how to
/// show a value in it.
struct SchemaFieldEditor {
  QWidget* editor = nullptr;
  QWidget* widget = nullptr;
  std::function<void(const Json& value, const Json& inferred)> show;
};

/// The keyword drop-down ("value", then the spec's keywords); null when the spec has none.
QComboBox* makeSchemaKeywordBox(QWidget* owner, const schema::ParamSpec& spec,
                                const QString& help) {
  if (spec.keywords.empty()) return nullptr;
  auto* keywordBox = new QComboBox(owner);
  keywordBox->addItem(SchemaForm::tr("value"));
  for (const auto& k : spec.keywords)
    keywordBox->addItem(QString::fromStdString(k));
  keywordBox->setToolTip(help);
  return keywordBox;
}

/// An Int field (one spin box) or an IntPair field (two), with its keywords.
SchemaFieldEditor buildSchemaIntEditor(QWidget* owner, const schema::ParamSpec& spec,
                                       QComboBox* keywordBox, const SchemaSetFn& set,
                                       const QString& help, const QString& unit) {
  const bool pair = spec.type == schema::ParamType::IntPair;
  auto* a = new QSpinBox(owner);
  auto* b = pair ? new QSpinBox(owner) : nullptr;
  // A required field without a value shows empty: one below the range stands for "not
  // set", shown as a blank, and is never sent.
  const bool required = spec.required();
  for (auto* s : {a, b}) {
    if (!s) continue;
    s->setRange(intMin(spec) - (required ? 1 : 0), intMax(spec));
    if (required) s->setSpecialValueText(QStringLiteral(" "));
    s->setSuffix(unit);
    s->setToolTip(help);
    s->setKeyboardTracking(false);
  }
  QWidget* host = besideKeywords(owner, keywordBox, a, b);
  auto emitValue = [a, b, keywordBox, set, required] {
    if (keywordBox && keywordBox->currentIndex() > 0) {
      set(Json(keywordBox->currentText().toStdString()));
      return;
    }
    if (required && (a->value() == a->minimum() || (b && b->value() == b->minimum()))) return;
    if (b && a->value() != b->value())
      set(Json::array({a->value(), b->value()}));
    else
      set(Json(a->value()));
  };
  QObject::connect(a, qOverload<int>(&QSpinBox::valueChanged), owner, emitValue);
  if (b) QObject::connect(b, qOverload<int>(&QSpinBox::valueChanged), owner, emitValue);
  if (keywordBox)
    QObject::connect(keywordBox, qOverload<int>(&QComboBox::currentIndexChanged), owner, emitValue);
  SchemaFieldEditor built;
  built.show = [a, b, keywordBox](const Json& given, const Json& inferred) {
    const QSignalBlocker ba(a);
    std::optional<QSignalBlocker> bb;
    if (b) bb.emplace(b);
    const bool keyword = showKeyword(keywordBox, given) || given.is_string();
    // A keyword field shows the value the keyword stands for, so that switching to
    // "value" starts from it.
    const Json& v = keyword && (inferred.is_number() || inferred.is_array()) ? inferred : given;
    a->setEnabled(!keyword);
    if (b) b->setEnabled(!keyword);
    if (v.is_array() && v.size() == 2) {
      a->setValue(v[0].get<int>());
      if (b) b->setValue(v[1].get<int>());
    } else if (v.is_number()) {
      a->setValue(v.get<int>());
      if (b) b->setValue(v.get<int>());
    } else if (v.is_null()) {  // a required field not set yet
      a->setValue(a->minimum());
      if (b) b->setValue(b->minimum());
    }
  };
  built.editor = host;
  built.widget = a;
  return built;
}

/// A Float field: a real-number spin box, with its keywords.
SchemaFieldEditor buildSchemaFloatEditor(QWidget* owner, const schema::ParamSpec& spec,
                                         QComboBox* keywordBox, const SchemaSetFn& set,
                                         const QString& help, const QString& unit) {
  auto* s = new RealSpinBox(owner);
  s->setDecimals(12);  // shown with 6 significant digits, kept exact (eps = 1e-8)
  s->setRange(spec.min ? *spec.min : -1e9, spec.max ? *spec.max : 1e9);
  s->setStep(spec.suggestedStep());
  s->setSuffix(unit);
  s->setToolTip(help);
  s->setKeyboardTracking(false);
  QWidget* host = besideKeywords(owner, keywordBox, s);  // one_cycle's max_lr: "auto"
  QObject::connect(s, qOverload<double>(&QDoubleSpinBox::valueChanged), owner,
                   [set](double v) { set(Json(v)); });
  if (keywordBox)
    QObject::connect(
        keywordBox, qOverload<int>(&QComboBox::currentIndexChanged), owner,
        [s, keywordBox, set](int index) {
          s->setEnabled(index == 0);
          set(index > 0 ? Json(keywordBox->currentText().toStdString()) : Json(s->value()));
        });
  SchemaFieldEditor built;
  built.show = [s, keywordBox](const Json& given, const Json& inferred) {
    const QSignalBlocker block(s);
    const bool keyword = showKeyword(keywordBox, given);
    s->setEnabled(!keyword);
    // A keyword shows the value it stands for when known, so "value" starts from it.
    const Json& v = keyword && inferred.is_number() ? inferred : given;
    if (v.is_number()) s->setValue(v.get<double>());
  };
  built.editor = host;
  built.widget = s;
  return built;
}

/// A Bool field: a check box.
SchemaFieldEditor buildSchemaBoolEditor(QWidget* owner, const SchemaSetFn& set,
                                        const QString& help) {
  auto* c = new QCheckBox(owner);
  c->setToolTip(help);
  QObject::connect(c, &QCheckBox::toggled, owner, [set](bool v) { set(Json(v)); });
  SchemaFieldEditor built;
  built.show = [c](const Json& v, const Json&) {
    const QSignalBlocker block(c);
    c->setChecked(v.is_boolean() && v.get<bool>());
  };
  built.editor = c;
  built.widget = c;
  return built;
}

/// An Enum field: a combo box of the choices, editable when the choices are open.
SchemaFieldEditor buildSchemaEnumEditor(QWidget* owner, const schema::ParamSpec& spec,
                                        const SchemaSetFn& set, const QString& help) {
  auto* c = new QComboBox(owner);
  for (const auto& choice : spec.choices)
    c->addItem(QString::fromStdString(choice));
  c->setToolTip(help);
  if (!spec.openChoices) {
    QObject::connect(c, &QComboBox::textActivated, owner,
                     [set](const QString& v) { set(Json(v.toStdString())); });
  } else {
    // The choices are suggestions and another name may be typed (a task's figure,
    // val_mae); the check that follows names a wrong one. A choice from the list is sent
    // at once; typed text when Enter is pressed or the field is left, and only when the
    // user typed (an editable combo also reports "activated" when it merely loses focus,
    // as when its window closes).
    c->setEditable(true);
    c->setInsertPolicy(QComboBox::NoInsert);
    QObject::connect(c, &QComboBox::currentIndexChanged, owner, [c, set](int index) {
      if (index >= 0 && !c->signalsBlocked()) set(Json(c->itemText(index).toStdString()));
    });
    QObject::connect(c->lineEdit(), &QLineEdit::editingFinished, owner, [c, set] {
      QLineEdit* edit = c->lineEdit();
      if (!edit->isModified() || !c->isVisible()) return;
      edit->setModified(false);
      set(Json(edit->text().trimmed().toStdString()));
    });
  }
  SchemaFieldEditor built;
  built.show = [c](const Json& v, const Json&) {
    const QSignalBlocker block(c);
    if (!v.is_string()) return;
    const QString text = QString::fromStdString(v.get<std::string>());
    if (c->isEditable()) {
      // The list's current row follows the value (none for a typed name), so that any
      // other row picked is a change.
      c->setCurrentIndex(c->findText(text));
      c->setEditText(text);
    } else {
      c->setCurrentText(text);
    }
  };
  built.editor = c;
  built.widget = c;
  return built;
}

/// A FloatPair or FloatList field: JSON text, with its keywords.
SchemaFieldEditor buildSchemaJsonEditor(QWidget* owner, QComboBox* keywordBox,
                                        const SchemaSetFn& set, const QString& help) {
  auto* e = new QLineEdit(owner);
  e->setToolTip(help + SchemaForm::tr(" (a number or a JSON list)"));
  QWidget* host = besideKeywords(owner, keywordBox, e);  // Normalize's mean: "auto"
  if (keywordBox) {
    QObject::connect(keywordBox, qOverload<int>(&QComboBox::currentIndexChanged), owner,
                     [e, keywordBox, set](int index) {
                       e->setEnabled(index == 0);
                       if (index > 0) {
                         set(Json(keywordBox->currentText().toStdString()));
                         return;
                       }
                       try {  // back to "value": the list shown, when there is one
                         const Json v = Json::parse(e->text().toStdString());
                         if (!v.is_string()) set(v);
                       } catch (const std::exception&) {
                       }
                     });
  }
  QObject::connect(e, &QLineEdit::editingFinished, owner, [e, set] {
    try {
      set(Json::parse(e->text().toStdString()));
      e->setStyleSheet({});
    } catch (const std::exception&) {
      e->setStyleSheet(errorFieldStyle());
    }
  });
  SchemaFieldEditor built;
  built.show = [e, keywordBox](const Json& given, const Json& inferred) {
    const QSignalBlocker block(e);
    const bool keyword = showKeyword(keywordBox, given);
    e->setEnabled(!keyword);
    const Json& v = keyword ? inferred : given;
    e->setText(v.is_null() ? QString() : QString::fromStdString(v.dump()));
  };
  built.editor = host;
  built.widget = e;
  return built;
}

/// The editor for `spec`'s type; `keywordBox` is put beside it where the type takes keywords.
SchemaFieldEditor buildSchemaEditor(QWidget* owner, const schema::ParamSpec& spec,
                                    QComboBox* keywordBox, const SchemaSetFn& set,
                                    const QString& help, const QString& unit) {
  using schema::ParamType;
  switch (spec.type) {
    case ParamType::Int:
    case ParamType::IntPair:
      return buildSchemaIntEditor(owner, spec, keywordBox, set, help, unit);
    case ParamType::Float:
      return buildSchemaFloatEditor(owner, spec, keywordBox, set, help, unit);
    case ParamType::Bool:
      return buildSchemaBoolEditor(owner, set, help);
    case ParamType::Enum:
      return buildSchemaEnumEditor(owner, spec, set, help);
    default:  // FloatPair, FloatList: JSON text
      return buildSchemaJsonEditor(owner, keywordBox, set, help);
  }
}

}  // namespace

SchemaForm::SchemaForm(QWidget* parent) : QWidget(parent), m_form(new QFormLayout(this)) {
  m_form->setContentsMargins(0, 0, 0, 0);
}

void SchemaForm::changed(const QString& key, const Json& value) {
  if (m_onChange) m_onChange(key, value);
}

void SchemaForm::setSchema(const schema::ParamSchema& schema, const Json& values) {
  retireSchemaFormRows(m_form, this);
  m_fields.clear();
  m_order.clear();
  for (const auto& spec : schema) {
    const QString key = QString::fromStdString(spec.name);
    const QString help = QString::fromStdString(spec.help);
    const QString unit = spec.unit.empty() ? QString() : " " + QString::fromStdString(spec.unit);
    auto set = [this, key](const Json& v) { changed(key, v); };
    QComboBox* keywordBox = makeSchemaKeywordBox(this, spec, help);
    const SchemaFieldEditor built = buildSchemaEditor(this, spec, keywordBox, set, help, unit);
    if (keywordBox && keywordBox->parentWidget() == this) {
      // A field type that offers no keyword choice: no stray box over the label.
      delete keywordBox;
      keywordBox = nullptr;
    }
    auto* reset = new QToolButton(this);
    reset->setText(QStringLiteral("\u21BA"));
    reset->setToolTip(tr("Reset %1 to its default (%2)")
                          .arg(key, QString::fromStdString(spec.defaultValue.dump())));
    QObject::connect(reset, &QToolButton::clicked, this, [set] { set(Json()); });
    auto* row = new QWidget(this);
    auto* rowLayout = new QHBoxLayout(row);
    rowLayout->setContentsMargins(0, 0, 0, 0);
    rowLayout->addWidget(built.editor, 1);
    rowLayout->addWidget(reset);
    auto* label = new QLabel(key + (spec.required() ? QStringLiteral(" *") : QString()), this);
    label->setToolTip(help);
    m_form->addRow(label, row);
    // "Sweep this setting" on the field's label (right-click), where the page allows it.
    label->setContextMenuPolicy(Qt::CustomContextMenu);
    QObject::connect(label, &QWidget::customContextMenuRequested, this,
                     [this, label, spec, key](const QPoint& at) {
                       if (!m_sweep) return;
                       QMenu menu(label);
                       QAction* sweep = menu.addAction(tr("Sweep this setting"));
                       sweep->setEnabled(spec.type != schema::ParamType::IntPair &&
                                         spec.type != schema::ParamType::FloatPair &&
                                         spec.type != schema::ParamType::FloatList);
                       if (menu.exec(label->mapToGlobal(at)) == sweep) requestSweep(key);
                     });
    Field field;
    field.show = built.show;
    field.widget = built.widget;
    field.spec = spec;
    field.widget->setObjectName(QStringLiteral("param_") + key);
    field.row = row;
    field.help = help;
    field.defaultValue = spec.defaultValue;
    m_fields.insert(key, field);
    m_order << key;
  }
  setValues(values);
}

void SchemaForm::requestSweep(const QString& key) {
  const auto it = m_fields.find(key);
  if (!m_sweep || it == m_fields.end()) return;
  const std::string k = key.toStdString();
  m_sweep(key, it->spec,
          m_values.is_object() && m_values.contains(k) ? m_values[k] : it->defaultValue);
}

void SchemaForm::setValues(const Json& values, const Json& autoValues) {
  m_values = values;
  for (auto it = m_fields.begin(); it != m_fields.end(); ++it) {
    const std::string key = it.key().toStdString();
    const bool inferred = autoValues.is_object() && autoValues.contains(key);
    it->show(values.is_object() && values.contains(key) ? values[key] : it->defaultValue,
             inferred ? autoValues[key] : Json());
  }
}

void SchemaForm::setProblem(const QString& key, const QString& reason) {
  auto it = m_fields.find(key);
  if (it == m_fields.end()) return;
  it->problem = reason;
  it->widget->setStyleSheet(reason.isEmpty() ? QString() : errorFieldStyle());
  it->widget->setToolTip(reason.isEmpty() ? it->help : reason);
}

void SchemaForm::clearProblems() {
  for (auto it = m_fields.begin(); it != m_fields.end(); ++it)
    if (!it->problem.isEmpty()) setProblem(it.key(), {});
}

}  // namespace netsmith::ui
