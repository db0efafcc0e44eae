#pragma once

// The inspector: a form generated from the selected node's op schema (spin boxes with ranges
// and units, combo boxes, check boxes, keyword choices such as "auto"), the help text as
// tooltips, the init scheme and the frozen flag. Every change applies at once through the
// ModelEditor (undoable; consecutive edits of one field merge). An "auto" field shows the value
// it stands for; a red node's quick fix is a button.
#include <QHash>
#include <QString>
#include <QWidget>
#include <functional>

#include "common/json.h"

class QCheckBox;
class QComboBox;
class QFormLayout;
class QLabel;
class QPushButton;

namespace netsmith::ui {

class ModelEditor;
class SchemaForm;

class NodeInspector : public QWidget {
  Q_OBJECT

 public:
  explicit NodeInspector(ModelEditor* editor, QWidget* parent = nullptr);

  /// Shows `id` ("" or several: nothing to edit).
  void setNode(const QString& id);
  QString node() const { return m_id; }
  /// Reads the values again (after undo / redo), keeping the widgets.
  void refreshValues();
  /// The field widget of parameter `key` (for tests), or nullptr.
  QWidget* field(const QString& key) const;

 private:
  void rebuild();
  /// The model input's channels, height and width, as the Input node's fields show them.
  Json inputValues() const;

  ModelEditor* m_editor;
  QString m_id;
  QString m_op;
  QLabel* m_heading;
  QWidget* m_formHost;
  QFormLayout* m_form = nullptr;
  SchemaForm* m_params = nullptr;
  SchemaForm* m_input = nullptr;  ///< the Input node's model input fields
  QComboBox* m_init = nullptr;
  QCheckBox* m_frozen = nullptr;
  QPushButton* m_fix = nullptr;  ///< "Fix: set in_features to 2704", shown when there is one
};

}  // namespace netsmith::ui
