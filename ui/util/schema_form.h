#pragma once

// A form generated from a core ParamSchema: spin boxes with ranges and units, combo boxes,
// check boxes, keyword choices ("auto", "same") and JSON fields for lists, the help text as
// tooltips, a reset button per field. The node inspector, the Augment and the Training pages
// use it, so a new op, transform, optimizer or schedule needs no UI code.
#include <QHash>
#include <QString>
#include <QStringList>
#include <QWidget>
#include <functional>

#include "common/json.h"
#include "schema/param_schema.h"

class QFormLayout;

namespace netsmith::ui {

class SchemaForm : public QWidget {
  Q_OBJECT

 public:
  /// Called with (key, value) when the user changes a field; a null value means "reset to the
  /// default" (the key is removed).
  using ChangeFn = std::function<void(const QString& key, const Json& value)>;

  explicit SchemaForm(QWidget* parent = nullptr);

  /// Rebuilds the fields for `schema` and shows `values` (missing keys show their default).
  void setSchema(const schema::ParamSchema& schema, const Json& values);
  /// Shows `values` again without rebuilding (after undo / redo); the widgets keep focus.
  /// A field set to a keyword ("auto") shows its value from `autoValues` when there is one.
  void setValues(const Json& values, const Json& autoValues = Json());
  void setOnChange(ChangeFn fn) { m_onChange = std::move(fn); }
  /// Called by a field's "Sweep this setting" (right-click on its label) with the field's key,
  /// spec and shown value; without one the action is not offered.
  using SweepFn =
      std::function<void(const QString& key, const schema::ParamSpec& spec, const Json& value)>;
  void setOnSweep(SweepFn fn) { m_sweep = std::move(fn); }
  /// What the action does, for tests and keyboard use.
  void requestSweep(const QString& key);
  /// Marks a field invalid (red, the reason as tooltip); an empty reason clears it.
  void setProblem(const QString& key, const QString& reason);
  void clearProblems();
  QWidget* field(const QString& key) const { return m_fields.value(key).widget; }
  QString problem(const QString& key) const { return m_fields.value(key).problem; }
  bool isEmpty() const { return m_fields.isEmpty(); }
  /// The fields' keys in the schema's order, and one field's description.
  QStringList keys() const { return m_order; }
  schema::ParamSpec spec(const QString& key) const { return m_fields.value(key).spec; }
  QFormLayout* formLayout() const { return m_form; }

 private:
  struct Field {
    QWidget* widget = nullptr;  ///< the main editor (spin box, combo, check box, line edit)
    QWidget* row = nullptr;
    QString help;
    QString problem;
    Json defaultValue;
    schema::ParamSpec spec;
    /// Puts a value in the widgets (signals blocked); the second is what a keyword stands for.
    std::function<void(const Json& value, const Json& inferred)> show;
  };
  void changed(const QString& key, const Json& value);

  QFormLayout* m_form;
  QHash<QString, Field> m_fields;
  QStringList m_order;
  ChangeFn m_onChange;
  SweepFn m_sweep;
  Json m_values;
};

}  // namespace netsmith::ui
