#include "monitor/sweep_form.h"

#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>
#include <algorithm>

#include "experiment/sweep_spec.h"
#include "session/project_document.h"
#include "util/theme_colors.h"

namespace netsmith::ui {

namespace {

/// A swept setting's values as the section writes them: "log_uniform 0.001 .. 0.1",
/// "choice [8,16,32]".
QString rangeText(const Json& p) {
  for (const char* k : {"log_uniform", "uniform", "int_uniform"})
    if (p.contains(k) && p[k].is_array() && p[k].size() == 2)
      return QStringLiteral("%1 %2 .. %3")
          .arg(QString::fromLatin1(k), QString::fromStdString(p[k][0].dump()),
               QString::fromStdString(p[k][1].dump()));
  if (p.contains("choice"))
    return QStringLiteral("choice ") + QString::fromStdString(p["choice"].dump());
  return QStringLiteral("?");
}

}  // namespace

SweepForm::SweepForm(ProjectDocument* document, QWidget* parent)
    : QWidget(parent),
      m_document(document),
      m_method(new QComboBox(this)),
      m_trials(new QSpinBox(this)),
      m_parallelTrials(new QSpinBox(this)),
      m_objective(new QComboBox(this)),
      m_asha(new QCheckBox(tr("stop poor trials early (ASHA)"), this)),
      m_minEpochs(new QSpinBox(this)),
      m_reduction(new QSpinBox(this)),
      m_params(new QTableWidget(0, 2, this)),
      m_removeParam(new QPushButton(tr("Remove"), this)),
      m_problems(new QLabel(this)) {
  setupWidgets();
  layOut();
  connectFields();
  connect(m_document, &ProjectDocument::sectionChanged, this, [this](const QString& section) {
    if (section == QLatin1String("sweep")) refresh();
  });
  connect(m_document, &ProjectDocument::projectChanged, this, [this] { refresh(); });
  refresh();
}

void SweepForm::setupWidgets() {
  m_method->setObjectName(QStringLiteral("sweepMethod"));
  m_method->addItems({QStringLiteral("random"), QStringLiteral("grid"), QStringLiteral("tpe")});
  m_method->setToolTip(
      tr("random: seeded draws; grid: every combination; tpe: model-based "
         "(learns from the trials so far)"));
  m_trials->setObjectName(QStringLiteral("sweepTrials"));
  m_trials->setRange(1, 100000);
  m_parallelTrials->setObjectName(QStringLiteral("sweepParallel"));
  m_parallelTrials->setRange(1, 64);
  m_parallelTrials->setToolTip(tr("Trials at once; each gets the cores divided by this"));
  m_objective->setObjectName(QStringLiteral("sweepObjective"));
  m_asha->setObjectName(QStringLiteral("sweepAsha"));
  m_minEpochs->setRange(1, 1000);
  m_minEpochs->setPrefix(tr("first rung at epoch "));
  m_reduction->setRange(2, 1000);
  m_reduction->setPrefix(tr("keep 1/"));
  m_params->setObjectName(QStringLiteral("sweepParams"));
  m_params->setHorizontalHeaderLabels({tr("Setting"), tr("Values")});
  m_params->horizontalHeader()->setStretchLastSection(true);
  m_params->verticalHeader()->hide();
  m_params->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_params->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_params->setMaximumHeight(140);
  m_problems->setObjectName(QStringLiteral("sweepProblems"));
  m_problems->setWordWrap(true);
}

void SweepForm::layOut() {
  auto* form = new QFormLayout;
  form->addRow(tr("method"), m_method);
  form->addRow(tr("trials"), m_trials);
  form->addRow(tr("at once"), m_parallelTrials);
  form->addRow(tr("objective"), m_objective);
  form->addRow(m_asha);
  auto* ashaRow = new QHBoxLayout;
  ashaRow->addWidget(m_minEpochs);
  ashaRow->addWidget(m_reduction);
  form->addRow(ashaRow);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addLayout(form);
  auto* hint = new QLabel(tr("Settings swept (right-click a setting's name on the Training, "
                             "Augment or Model page: Sweep this setting):"),
                          this);
  hint->setWordWrap(true);
  layout->addWidget(hint);
  layout->addWidget(m_params);
  layout->addWidget(m_removeParam, 0, Qt::AlignLeft);
  layout->addWidget(m_problems);
}

void SweepForm::connectFields() {
  connect(m_method, &QComboBox::textActivated, this,
          [this](const QString& m) { editSweep("method", m.toStdString(), tr("Sweep method")); });
  connect(m_trials, &QSpinBox::editingFinished, this,
          [this] { editSweep("trials", std::int64_t(m_trials->value()), tr("Sweep trials")); });
  connect(m_parallelTrials, &QSpinBox::editingFinished, this, [this] {
    editSweep("parallel", std::int64_t(m_parallelTrials->value()), tr("Sweep trials at once"));
  });
  connect(m_objective, &QComboBox::textActivated, this, [this](const QString& o) {
    editSweep("objective", o.toStdString(), tr("Sweep objective"));
  });
  const auto ashaValue = [this] {
    return m_asha->isChecked()
               ? Json{{"min_epochs", m_minEpochs->value()}, {"reduction", m_reduction->value()}}
               : Json();
  };
  connect(m_asha, &QCheckBox::toggled, this,
          [this, ashaValue] { editSweep("asha", ashaValue(), tr("Sweep early stopping")); });
  for (auto* s : {m_minEpochs, m_reduction})
    connect(s, &QSpinBox::editingFinished, this,
            [this, ashaValue] { editSweep("asha", ashaValue(), tr("Sweep early stopping")); });
  connect(m_removeParam, &QPushButton::clicked, this, [this] {
    const int row = m_params->currentRow();
    const Json& project = m_document->project().extra;
    if (row < 0 || !project.contains("sweep")) return;
    Json params = project["sweep"].value("params", Json::array());
    if (row >= int(params.size())) return;
    params.erase(params.begin() + row);
    editSweep("params", params, tr("Remove a swept setting"));
  });
}

void SweepForm::refresh() {
  m_refreshing = true;
  const auto& project = m_document->project();
  const Json sweep = project.extra.contains("sweep") ? project.extra["sweep"] : Json::object();
  const auto text = [&](const char* key, const char* fallback) {
    return QString::fromStdString(sweep.is_object() && sweep.contains(key) && sweep[key].is_string()
                                      ? sweep[key].get<std::string>()
                                      : fallback);
  };
  const auto number = [&](const char* key, int fallback) {
    return sweep.is_object() && sweep.contains(key) && sweep[key].is_number_integer()
               ? sweep[key].get<int>()
               : fallback;
  };
  m_method->setCurrentText(text("method", "random"));
  m_trials->setValue(number("trials", 10));
  m_parallelTrials->setValue(number("parallel", 1));
  // The project's task's figures (its headline first), as the sweep's check knows them.
  const auto* def = m_document->tasks().find(project.task);
  QStringList objectives;
  for (const auto& o : experiment::objectiveChoices(def))
    objectives << QString::fromStdString(o);
  const QString objective =
      text("objective", def ? task::defaultObjective(*def).c_str() : "val_loss");
  if (!objectives.contains(objective)) objectives << objective;  // the check says what is wrong
  m_objective->clear();
  m_objective->addItems(objectives);
  m_objective->setCurrentText(objective);
  const Json asha = sweep.is_object() ? sweep.value("asha", Json()) : Json();
  m_asha->setChecked(asha.is_object());
  const auto ashaNumber = [&](const char* key, int fallback) {
    return asha.is_object() && asha.contains(key) && asha[key].is_number_integer()
               ? int(std::clamp<std::int64_t>(asha[key].get<std::int64_t>(), 1, 1000))
               : fallback;
  };
  m_minEpochs->setValue(ashaNumber("min_epochs", 1));
  m_reduction->setValue(ashaNumber("reduction", 3));
  m_minEpochs->setEnabled(asha.is_object());
  m_reduction->setEnabled(asha.is_object());
  const Json params = sweep.is_object() ? sweep.value("params", Json::array()) : Json::array();
  m_params->setRowCount(0);
  for (const auto& p : params) {
    const int row = m_params->rowCount();
    m_params->insertRow(row);
    const bool named = p.is_object() && p.contains("path") && p["path"].is_string();
    m_params->setItem(
        row, 0,
        new QTableWidgetItem(named ? QString::fromStdString(p["path"].get<std::string>())
                                   : QStringLiteral("?")));
    m_params->setItem(row, 1, new QTableWidgetItem(rangeText(p)));
  }
  m_params->resizeColumnToContents(0);
  // The section's problems as the document read it (an empty section is not checked here).
  const Problems problems =
      sweep.is_object() && !sweep.empty() ? m_document->resolved().sweepProblems : Problems{};
  m_problems->setText(problems.empty() ? QString()
                                       : QString::fromStdString(formatProblems(problems)));
  m_problems->setStyleSheet(problems.empty() ? QString() : errorFieldStyle());
  m_hasProblems = !problems.empty();
  m_removeParam->setEnabled(!params.empty());
  m_refreshing = false;
  emit refreshed();
}

void SweepForm::editSweep(const char* key, const Json& value, const QString& text) {
  if (m_refreshing) return;
  const auto& extra = m_document->project().extra;
  Json sweep =
      extra.contains("sweep") && extra["sweep"].is_object()
          ? extra["sweep"]
          : Json{{"name", m_document->project().name + "-sweep"}, {"params", Json::array()}};
  if (value.is_null())
    sweep.erase(key);
  else
    sweep[key] = value;
  m_document->editSection(QStringLiteral("sweep"), sweep, text);
}

}  // namespace netsmith::ui
