#include "forms/training_page.h"

#include "experiment/sweep_spec.h"

#include <qcustomplot.h>
#include <QCheckBox>
#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QVBoxLayout>
#include <tuple>

#include <algorithm>
#include <map>

#include "env/env_report.h"
#include "session/project_document.h"
#include "train/lr_schedule.h"
#include "train/project_plan.h"
#include "train/train_options.h"
#include "util/background_job.h"
#include "util/chart_fit.h"
#include "util/schema_form.h"
#include "util/theme_colors.h"

namespace netsmith::ui {

namespace {

using schema::ParamSpec;

const schema::ParamSchema& basicsSchema() {
  static const schema::ParamSchema s = {
      ParamSpec::integer("epochs", 5, "passes over the training split").atLeast(1).atMost(100000),
      ParamSpec::integer("batch_size", 32, "samples per optimizer step").atLeast(1),
      ParamSpec::integer("seed", 0, "seeds the weights, the data order and augmentation")
          .atLeast(0)};
  return s;
}

/// The trainer options by group; keys not listed here land in "Other".
const std::vector<std::pair<QString, std::vector<std::string>>>& optionGroups() {
  static const std::vector<std::pair<QString, std::vector<std::string>>> g = {
      {QObject::tr("Steps"),
       {"grad_accumulation", "clip_grad_norm", "clip_grad_value", "drop_last"}},
      {QObject::tr("Loss"), {"label_smoothing"}},
      {QObject::tr("Device, precision and speed"),
       {"local_processes", "amp", "channels_last", "threads", "workers", "deterministic"}},
      {QObject::tr("Processes (torch.distributed)"),
       {"dist_backend", "dist_timeout", "dist_bucket_mb", "sync_batchnorm"}},
      {QObject::tr("Checkpoints and validation"),
       {"monitor", "monitor_mode", "checkpoint_every", "keep_checkpoints", "eval_test"}},
      {QObject::tr("Debugging"), {"fast_dev_run", "overfit_batches", "nan_policy"}}};
  return g;
}

Json without(Json j, const char* key) {
  if (j.is_object()) j.erase(key);
  return j.is_object() ? j : Json::object();
}

/// What the schedule's keywords stand for, shown in their disabled fields: one_cycle's
/// max_lr "auto" is the optimizer's lr.
Json scheduleKeywordValues(const Json& optimizer) {
  Json out = Json::object();
  if (optimizer.is_object() && optimizer.contains("lr") && optimizer["lr"].is_number())
    out["max_lr"] = optimizer["lr"];
  return out;
}

/// A group box titled `title` on the forms panel, holding `head` (when given) over `content`.
QGroupBox* addTrainingGroup(QWidget* forms, QVBoxLayout* formsLayout, const QString& title,
                            QWidget* content, QWidget* head = nullptr) {
  auto* box = new QGroupBox(title, forms);
  auto* l = new QVBoxLayout(box);
  if (head) l->addWidget(head);
  l->addWidget(content);
  formsLayout->addWidget(box);
  return box;
}

/// A group's head row: `field` with its `label`, on a widget of the forms panel.
QWidget* trainingGroupHead(QWidget* forms, const QString& label, QWidget* field) {
  auto* head = new QWidget(forms);
  auto* hl = new QFormLayout(head);
  hl->setContentsMargins(0, 0, 0, 0);
  hl->addRow(label, field);
  return head;
}

}  // namespace

TrainingPage::TrainingPage(ProjectDocument* document, QWidget* parent)
    : QWidget(parent),
      m_document(document),
      m_basics(new SchemaForm(this)),
      m_optimizer(new SchemaForm(this)),
      m_schedule(new SchemaForm(this)),
      m_optimizerType(new QComboBox(this)),
      m_scheduleType(new QComboBox(this)),
      m_device(new QComboBox(this)),
      m_chart(new QCustomPlot(this)),
      m_planLabel(new QLabel(this)),
      m_blocked(new QLabel(this)),
      m_lrFind(new QPushButton(tr("Run the LR finder"), this)),
      m_trainLimit(new QSpinBox(this)),
      m_validationLimit(new QSpinBox(this)),
      m_sizeJob(new BackgroundJob(this)) {
  setObjectName(QStringLiteral("trainingPage"));
  m_basics->setObjectName(QStringLiteral("trainBasics"));
  m_optimizer->setObjectName(QStringLiteral("optimizerForm"));
  m_schedule->setObjectName(QStringLiteral("scheduleForm"));
  m_optimizerType->setObjectName(QStringLiteral("optimizerType"));
  m_scheduleType->setObjectName(QStringLiteral("scheduleType"));
  m_device->setObjectName(QStringLiteral("trainDevice"));
  m_chart->setObjectName(QStringLiteral("lrChart"));
  m_blocked->setObjectName(QStringLiteral("trainBlocked"));
  m_lrFind->setObjectName(QStringLiteral("lrFindButton"));
  m_blocked->setWordWrap(true);
  m_blocked->setStyleSheet(QStringLiteral("QLabel { color: #b02a37; }"));

  fillChoices();

  // Left: forms in a scroll area. Right: the LR chart.
  QWidget* scroll = buildFormsPanel();
  QWidget* right = buildChartPanel();

  auto* layout = new QHBoxLayout(this);
  layout->addWidget(scroll, 1);
  layout->addWidget(right, 1);

  connectForms();
  connectChoices();
  connectDocument();
}

void TrainingPage::fillChoices() {
  for (const auto& t : train::optimizerTypes())
    m_optimizerType->addItem(QString::fromStdString(t));
  const auto& schedules = m_document->schedules();
  for (const auto& name : schedules.names()) {
    m_scheduleType->addItem(QString::fromStdString(name));
    m_scheduleType->setItemData(m_scheduleType->count() - 1,
                                QString::fromStdString(schedules.find(name)->help),
                                Qt::ToolTipRole);
  }
  m_device->addItem(QStringLiteral("cpu"));
  const auto env = env::collectEnvReport(false);
  for (std::size_t i = 0; env.cudaAvailable && i < env.cudaDevices.size(); ++i)
    m_device->addItem(QStringLiteral("cuda:%1").arg(i), QString::fromStdString(env.cudaDevices[i]));
}

QWidget* TrainingPage::buildFormsPanel() {
  auto* forms = new QWidget(this);
  auto* formsLayout = new QVBoxLayout(forms);
  auto group = [forms, formsLayout](const QString& title, QWidget* content,
                                    QWidget* head = nullptr) {
    return addTrainingGroup(forms, formsLayout, title, content, head);
  };
  group(tr("Run"), m_basics);
  group(tr("Quick run (a subset)"), buildQuickRun(forms));
  group(tr("Optimizer"), m_optimizer, trainingGroupHead(forms, tr("type"), m_optimizerType));
  group(tr("Learning-rate schedule"), m_schedule,
        trainingGroupHead(forms, tr("type"), m_scheduleType));
  auto* deviceHead = trainingGroupHead(forms, tr("device"), m_device);
  for (const auto& [title, keys] : optionGroups()) {
    auto* f = new SchemaForm(forms);
    f->setObjectName(QStringLiteral("trainOptions_") +
                     title.section(' ', 0, 0).remove(QLatin1Char(',')).toLower());
    m_groups << f;
    group(title, f, title == optionGroups()[2].first ? deviceHead : nullptr);
  }
  buildSectionForms(forms, formsLayout);
  auto* other = new SchemaForm(forms);
  other->setObjectName(QStringLiteral("trainOptions_other"));
  m_groups << other;
  group(tr("Other"), other);
  formsLayout->addStretch(1);
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(forms);
  scroll->setWidgetResizable(true);
  scroll->setMinimumWidth(440);
  return scroll;
}

QWidget* TrainingPage::buildQuickRun(QWidget* formsPanel) {
  // A quick check on a subset before the full run (netsmith-cli's --limit-train/--limit-val).
  auto* quick = new QWidget(formsPanel);
  auto* qf = new QFormLayout(quick);
  qf->setContentsMargins(0, 0, 0, 0);
  for (auto [field, name, what] :
       {std::tuple{m_trainLimit, "quickRunTrain", tr("training samples")},
        std::tuple{m_validationLimit, "quickRunValidation", tr("validation samples")}}) {
    field->setObjectName(QLatin1String(name));
    field->setRange(0, 1000000000);
    field->setSingleStep(500);
    field->setSpecialValueText(tr("all"));
    field->setKeyboardTracking(false);
    field->setToolTip(
        tr("Train and sweep on a seeded, stratified subset of this many %1 (all: 0); not "
           "saved in the project")
            .arg(what));
    qf->addRow(what, field);
    connect(field, qOverload<int>(&QSpinBox::valueChanged), this, [this] {
      m_limitTrain = m_trainLimit->value();
      updateChart();
      Q_EMIT sampleLimitsChanged(m_trainLimit->value(), m_validationLimit->value());
    });
  }
  return quick;
}

void TrainingPage::buildSectionForms(QWidget* formsPanel, QVBoxLayout* formsLayout) {
  // Sections that are off unless present: early stopping, ReduceLROnPlateau.
  for (const auto& [key, title] :
       {std::pair<std::string, QString>{"early_stopping", tr("Early stopping")},
        std::pair<std::string, QString>{"plateau", tr("Reduce LR on plateau")}}) {
    SectionForm section;
    section.key = key;
    section.enabled = new QCheckBox(tr("on"), formsPanel);
    section.enabled->setObjectName(QString::fromStdString(key) + QStringLiteral("_on"));
    section.form = new SchemaForm(formsPanel);
    section.form->setObjectName(QString::fromStdString(key) + QStringLiteral("_form"));
    addTrainingGroup(formsPanel, formsLayout, title, section.form, section.enabled);
    connect(section.enabled, &QCheckBox::toggled, this,
            [this, key](bool on) { setTrainKey(key, on ? Json::object() : Json(), {}); });
    section.form->setOnChange([this, key](const QString& field, const Json& v) {
      Json train = m_document->project().train;
      Json& sec = train[key];
      if (!sec.is_object()) sec = Json::object();
      if (v.is_null())
        sec.erase(field.toStdString());
      else
        sec[field.toStdString()] = v;
      m_document->editSection(QStringLiteral("train"), train,
                              tr("Set %1 %2").arg(QString::fromStdString(key), field),
                              QStringLiteral("%1:%2").arg(QString::fromStdString(key), field));
    });
    m_sections << section;
  }
}

QWidget* TrainingPage::buildChartPanel() {
  m_chart->addGraph();
  m_chart->graph(0)->setPen(QPen(QColor(44, 160, 44), 1.5));
  m_chart->graph(0)->setName(tr("learning rate"));
  m_chart->xAxis->setLabel(tr("step"));
  m_chart->yAxis->setLabel(tr("learning rate"));
  m_chart->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  m_chart->setMinimumSize(320, 200);
  followTheme(m_chart);
  fitTicksToSize(m_chart);
  auto* right = new QWidget(this);
  auto* rl = new QVBoxLayout(right);
  rl->addWidget(new QLabel(tr("<b>Planned learning rate</b>"), right));
  rl->addWidget(m_chart, 1);
  rl->addWidget(m_planLabel);
  rl->addWidget(m_lrFind, 0, Qt::AlignLeft);
  rl->addWidget(m_blocked);
  return right;
}

void TrainingPage::connectForms() {
  m_basics->setOnChange([this](const QString& key, const Json& v) {
    setTrainKey(key.toStdString(), v, QStringLiteral("train:") + key);
  });
  m_optimizer->setOnChange(
      [this](const QString& key, const Json& v) { editSub("optimizer", m_optimizerType, key, v); });
  m_schedule->setOnChange(
      [this](const QString& key, const Json& v) { editSub("schedule", m_scheduleType, key, v); });
  for (auto* f : m_groups)
    f->setOnChange([this](const QString& key, const Json& v) {
      setTrainKey(key.toStdString(), v, QStringLiteral("train:") + key);
    });
  // "Sweep this setting": the field's path in the project, with a range around its value.
  const auto sweepFrom = [this](SchemaForm* form, const std::string& prefix) {
    form->setOnSweep(
        [this, prefix](const QString& key, const schema::ParamSpec& spec, const Json& value) {
          m_document->addSweepParam(
              experiment::suggestSweepParam(prefix + key.toStdString(), spec, value));
        });
  };
  sweepFrom(m_basics, "train.");
  sweepFrom(m_optimizer, "train.optimizer.");
  sweepFrom(m_schedule, "train.schedule.");
  for (auto* f : m_groups)
    sweepFrom(f, "train.");
}

void TrainingPage::connectChoices() {
  connect(m_optimizerType, &QComboBox::textActivated, this, [this](const QString& type) {
    Json train = m_document->project().train;
    Json opt = train.contains("optimizer") && train["optimizer"].is_object() ? train["optimizer"]
                                                                             : Json::object();
    Json next{{"type", type.toStdString()}};
    if (opt.contains("lr")) next["lr"] = opt["lr"];  // the LR survives a change of optimizer
    train["optimizer"] = next;
    m_document->editSection(QStringLiteral("train"), train, tr("Optimizer %1").arg(type));
    rebuildForms();
  });
  connect(m_scheduleType, &QComboBox::textActivated, this, [this](const QString& type) {
    Json train = m_document->project().train;
    train["schedule"] = Json{{"type", type.toStdString()}};
    m_document->editSection(QStringLiteral("train"), train, tr("Schedule %1").arg(type));
    rebuildForms();
  });
  connect(m_device, &QComboBox::textActivated, this,
          [this](const QString& device) { setTrainKey("device", Json(device.toStdString()), {}); });
  connect(m_lrFind, &QPushButton::clicked, this, &TrainingPage::lrFinderRequested);
}

void TrainingPage::connectDocument() {
  connect(m_document, &ProjectDocument::loaded, this, &TrainingPage::projectLoaded);
  connect(m_document, &ProjectDocument::projectChanged, this, &TrainingPage::refresh);
  connect(m_document, &ProjectDocument::problemsChanged, this, &TrainingPage::showProblems);
  connect(m_document, &ProjectDocument::modelChanged, this, &TrainingPage::showProblems);
  connect(m_document, &ProjectDocument::sectionChanged, this, [this](const QString& section) {
    refresh();
    if (section == QLatin1String("data")) readTrainSize();  // a new training split size
  });
}

SchemaForm* TrainingPage::form(const QString& name) const {
  if (name == QLatin1String("basics")) return m_basics;
  if (name == QLatin1String("optimizer")) return m_optimizer;
  if (name == QLatin1String("schedule")) return m_schedule;
  for (const auto& sec : m_sections)
    if (name.toStdString() == sec.key) return sec.form;
  for (auto* f : m_groups)
    if (f->field(name)) return f;  // the group holding that option
  return nullptr;
}

QVector<QPair<QString, SchemaForm*>> TrainingPage::forms() const {
  QVector<QPair<QString, SchemaForm*>> out = {{QStringLiteral("train."), m_basics},
                                              {QStringLiteral("train.optimizer."), m_optimizer},
                                              {QStringLiteral("train.schedule."), m_schedule}};
  for (auto* f : m_groups)
    out.push_back({QStringLiteral("train."), f});
  for (const auto& sec : m_sections)
    out.push_back({QStringLiteral("train.%1.").arg(QString::fromStdString(sec.key)), sec.form});
  return out;
}

QCheckBox* TrainingPage::sectionSwitch(const QString& key) const {
  for (const auto& sec : m_sections)
    if (key.toStdString() == sec.key) return sec.enabled;
  return nullptr;
}

void TrainingPage::setTrainKey(const std::string& key, const Json& value, const QString& mergeKey) {
  Json train = m_document->project().train;
  if (!train.is_object()) train = Json::object();
  if (value.is_null())
    train.erase(key);
  else
    train[key] = value;
  m_document->editSection(QStringLiteral("train"), train,
                          tr("Set train.%1").arg(QString::fromStdString(key)), mergeKey);
}

void TrainingPage::editSub(const char* section, const QComboBox* type, const QString& key,
                           const Json& value) {
  // train.optimizer / train.schedule: {"type": ..., params}; a null value resets the param.
  Json train = m_document->project().train;
  Json& sub = train[section];
  if (!sub.is_object()) sub = Json{{"type", type->currentText().toStdString()}};
  if (value.is_null())
    sub.erase(key.toStdString());
  else
    sub[key.toStdString()] = value;
  m_document->editSection(QStringLiteral("train"), train,
                          tr("Set %1 %2").arg(QLatin1String(section), key),
                          QStringLiteral("%1:%2").arg(QLatin1String(section), key));
}

void TrainingPage::projectLoaded() {
  rebuildForms();
  readTrainSize();
}

void TrainingPage::rebuildForms() {
  const Json& train = m_document->project().train;
  const Json opt = train.is_object() && train.contains("optimizer") ? train["optimizer"] : Json();
  const std::string optType = opt.is_object() && opt.contains("type") && opt["type"].is_string()
                                  ? opt["type"].get<std::string>()
                                  : "adam";
  {
    const QSignalBlocker block(m_optimizerType);
    m_optimizerType->setCurrentText(QString::fromStdString(optType));
  }
  try {
    m_optimizer->setSchema(train::optimizerSchema(optType), without(opt, "type"));
  } catch (const std::exception&) {
    m_optimizer->setSchema({}, Json::object());
  }
  const Json sched = train.is_object() && train.contains("schedule") ? train["schedule"] : Json();
  const std::string schedType =
      sched.is_object() && sched.contains("type") && sched["type"].is_string()
          ? sched["type"].get<std::string>()
          : "constant";
  {
    const QSignalBlocker block(m_scheduleType);
    m_scheduleType->setCurrentText(QString::fromStdString(schedType));
  }
  const auto& schedules = m_document->schedules();
  schema::ParamSchema schedSchema;
  if (const auto* def = schedules.find(schedType)) schedSchema = def->schema;
  for (const auto& w : train::warmupSchema())
    schedSchema.push_back(w);
  m_schedule->setSchema(schedSchema, without(sched, "type"));
  m_schedule->setValues(without(sched, "type"), scheduleKeywordValues(opt));
  m_basics->setSchema(basicsSchema(), train);
  // The trainer options, by group.
  std::map<std::string, const ParamSpec*> specs;
  for (const auto& spec : train::trainSchema())
    specs[spec.name] = &spec;
  for (int g = 0; g < int(optionGroups().size()); ++g) {
    schema::ParamSchema s;
    for (const auto& key : optionGroups()[std::size_t(g)].second)
      if (auto it = specs.find(key); it != specs.end()) {
        s.push_back(*it->second);
        specs.erase(it);
      }
    m_groups[g]->setSchema(s, train);
  }
  schema::ParamSchema rest;
  for (const auto& [key, spec] : specs)
    rest.push_back(*spec);
  m_groups.back()->setSchema(rest, train);
  for (auto& sec : m_sections) {
    const auto& schema =
        sec.key == "plateau" ? train::plateauSchema() : train::earlyStoppingSchema();
    const Json value = train.is_object() && train.contains(sec.key) ? train[sec.key] : Json();
    sec.form->setSchema(schema, value.is_object() ? value : Json::object());
  }
  refresh();
}

void TrainingPage::refresh() {
  const Json& train = m_document->project().train;
  const Json opt = train.is_object() && train.contains("optimizer") ? train["optimizer"] : Json();
  const Json sched = train.is_object() && train.contains("schedule") ? train["schedule"] : Json();
  const QString optType = opt.is_object() && opt.contains("type") && opt["type"].is_string()
                              ? QString::fromStdString(opt["type"].get<std::string>())
                              : QStringLiteral("adam");
  const QString schedType = sched.is_object() && sched.contains("type") && sched["type"].is_string()
                                ? QString::fromStdString(sched["type"].get<std::string>())
                                : QStringLiteral("constant");
  if (optType != m_optimizerType->currentText() || schedType != m_scheduleType->currentText()) {
    rebuildForms();  // undo / redo changed a type: the fields differ
    return;
  }
  m_basics->setValues(train);
  m_optimizer->setValues(without(opt, "type"));
  m_schedule->setValues(without(sched, "type"), scheduleKeywordValues(opt));
  for (auto* f : m_groups)
    f->setValues(train);
  for (auto& sec : m_sections) {
    const Json value = train.is_object() && train.contains(sec.key) ? train[sec.key] : Json();
    const bool on = value.is_object();
    const QSignalBlocker block(sec.enabled);
    sec.enabled->setChecked(on);
    sec.form->setEnabled(on);
    sec.form->setValues(on ? value : Json::object());
  }
  {
    const QSignalBlocker block(m_device);
    const QString device =
        train.is_object() && train.contains("device") && train["device"].is_string()
            ? QString::fromStdString(train["device"].get<std::string>())
            : QStringLiteral("cpu");
    if (m_device->findText(device) < 0) m_device->addItem(device);
    m_device->setCurrentText(device);
  }
  showProblems();
  updateChart();
}

void TrainingPage::showProblems() {
  for (auto* f : {m_basics, m_optimizer, m_schedule})
    f->clearProblems();
  for (auto* f : m_groups)
    f->clearProblems();
  for (auto& sec : m_sections)
    sec.form->clearProblems();
  for (const auto& p : m_document->problems()) {
    const QString path = QString::fromStdString(p.path);
    const QString reason = QString::fromStdString(p.message + (p.fix.empty() ? "" : "; " + p.fix));
    if (path.startsWith(QLatin1String("train.optimizer."))) {
      m_optimizer->setProblem(path.mid(16), reason);
    } else if (path.startsWith(QLatin1String("train.schedule."))) {
      m_schedule->setProblem(path.mid(15), reason);
    } else if (path.startsWith(QLatin1String("train.early_stopping.")) ||
               path.startsWith(QLatin1String("train.plateau."))) {
      const QString section = path.mid(6).section('.', 0, 0), key = path.mid(6).section('.', 1, 1);
      if (auto* f = form(section)) f->setProblem(key, reason);
    } else if (path.startsWith(QLatin1String("train."))) {
      const QString key = path.mid(6).section('.', 0, 0);
      if (auto* f = form(key)) f->setProblem(key, reason);
      if (m_basics->field(key)) m_basics->setProblem(key, reason);
    }
  }
  const QString reason = blockedReason();
  m_blocked->setText(reason.isEmpty() ? QString() : tr("Start is disabled: %1").arg(reason));
  m_lrFind->setEnabled(reason.isEmpty());
}

QString TrainingPage::blockedReason() const {
  if (m_document->filePath().isEmpty()) return tr("no project is open");
  if (m_document->problems().empty()) return {};
  const auto& p = m_document->problems().front();
  QString text = QString::fromStdString(p.toString());
  if (m_document->problems().size() > 1)
    text += tr(" (and %n more)", nullptr, int(m_document->problems().size() - 1));
  return text;
}

void TrainingPage::readTrainSize() {
  m_trainSize = -1;
  updateChart();
  // A newer read supersedes a running one: only the latest size reaches the chart. The class
  // count goes to the document, which checks the model's output against it.
  const auto done = [this](train::TrainSplit split) {
    m_trainSize = split.samples;
    m_document->setDataClasses(split.classes);
    updateChart();
    Q_EMIT planReady();
  };
  m_sizeJob->start(
      [config = m_document->resolved().data](const JobContext&) {
        if (!config) throw Error("data: the project has no data section that reads");
        return train::readTrainSplit(*config);
      },
      done, [done](const QString&) { done({}); });
}

std::optional<train::RunPlan> TrainingPage::plan() const {
  const auto& options = m_document->trainOptions();
  if (!m_document->resolved().trainProblems.empty() || m_trainSize <= 0) return std::nullopt;
  // The plan the run will make: the same RunPlan the trainer and `lr-schedule` use.
  return train::RunPlan::make(options, m_trainSize, m_limitTrain, std::max(1, options.processes));
}

std::int64_t TrainingPage::stepsPerEpoch() const {
  const auto p = plan();
  return p ? p->stepsPerEpoch() : 0;
}

void TrainingPage::setSampleLimits(std::int64_t train, std::int64_t validation) {
  const QSignalBlocker blockTrain(m_trainLimit), blockValidation(m_validationLimit);
  m_trainLimit->setValue(int(std::clamp<std::int64_t>(train, 0, m_trainLimit->maximum())));
  m_validationLimit->setValue(
      int(std::clamp<std::int64_t>(validation, 0, m_validationLimit->maximum())));
  setTrainLimit(train);
}

void TrainingPage::setTrainLimit(std::int64_t limit) {
  m_limitTrain = limit;
  updateChart();
}

void TrainingPage::updateChart() {
  const auto p = plan();
  if (!p || p->totalSteps() <= 0) {
    // The document has checked the train section already: its problems say why there is none.
    const auto& problems = m_document->problems();
    const bool trainProblems = std::any_of(problems.begin(), problems.end(), [](const Problem& q) {
      return q.path.rfind("train", 0) == 0;
    });
    m_chart->graph(0)->data()->clear();
    m_planLabel->setText(trainProblems     ? tr("Fix the marked fields to see the plan.")
                         : m_trainSize < 0 ? tr("Reading the training split's size...")
                                           : tr("The training split is empty or unreadable."));
    m_chart->replot(QCustomPlot::rpQueuedReplot);
    return;
  }
  const auto curve = p->lrCurve();
  QVector<double> x(int(curve.size())), y(int(curve.size()));
  for (int i = 0; i < int(curve.size()); ++i) {
    x[i] = i;
    y[i] = curve[std::size_t(i)];
  }
  m_chart->graph(0)->setData(x, y, true);
  m_chart->rescaleAxes();
  m_chart->yAxis->scaleRange(1.1, m_chart->yAxis->range().center());
  m_chart->replot(QCustomPlot::rpQueuedReplot);
  // Nodes that train at a multiple of the rate (lr_mult, e.g. a backbone at x0.1).
  std::map<double, int> multiples;
  for (const auto& n : m_document->project().model.nodes)
    if (n.lrMult != 1.0) ++multiples[n.lrMult];
  QString scaled;
  for (const auto& [m, count] : multiples)
    scaled += tr("; x%1 for %2 nodes").arg(m).arg(count);
  m_planLabel->setText(tr("%1: %2 (%3 training samples)%4")
                           .arg(QString::fromStdString(p->schedule().type()))
                           .arg(QString::fromStdString(p->describe()))
                           .arg(p->trainSamples())
                           .arg(scaled));
}

QVector<double> TrainingPage::plottedLr() const {
  QVector<double> out;
  for (auto it = m_chart->graph(0)->data()->constBegin();
       it != m_chart->graph(0)->data()->constEnd(); ++it)
    out << it->value;
  return out;
}

}  // namespace netsmith::ui
