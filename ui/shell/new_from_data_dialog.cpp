#include "shell/new_from_data_dialog.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QVBoxLayout>

#include <cmath>
#include <sstream>

#include "data/source_formats.h"
#include "graph/graph_analysis.h"
#include "ops/op_registry.h"
#include "registries/registries.h"
#include "resolve/resolved_project.h"
#include "task/task_registry.h"
#include "util/background_job.h"

namespace netsmith::ui {

namespace {

QString numbersText(const std::vector<double>& values) {
  QStringList parts;
  for (const double v : values)
    parts << QString::number(v, 'f', 4);
  return parts.join(QLatin1Char(' '));
}

/// Numbers separated by spaces or commas; nullopt when one is not a number.
std::optional<std::vector<double>> parseNumbers(const QString& text) {
  std::vector<double> out;
  for (const QString& part :
       text.split(QRegularExpression(QStringLiteral("[\\s,]+")), Qt::SkipEmptyParts)) {
    bool ok = false;
    const double v = part.toDouble(&ok);
    if (!ok || !std::isfinite(v)) return std::nullopt;
    out.push_back(v);
  }
  return out;
}

}  // namespace

NewFromDataDialog::NewFromDataDialog(RegistriesPtr registries, const QString& templatesDir,
                                     QWidget* parent)
    : QDialog(parent),
      m_registries(std::move(registries)),
      m_templatesDir(templatesDir),
      m_data(new QLineEdit(this)),
      m_task(new QComboBox(this)),
      m_template(new QComboBox(this)),
      m_progress(new QProgressBar(this)),
      m_status(new QLabel(this)),
      m_found(new QPlainTextEdit(this)),
      m_channels(new QSpinBox(this)),
      m_height(new QSpinBox(this)),
      m_width(new QSpinBox(this)),
      m_validation(new QSpinBox(this)),
      m_batch(new QSpinBox(this)),
      m_normalization(new QComboBox(this)),
      m_mean(new QLineEdit(this)),
      m_std(new QLineEdit(this)),
      m_classes(new QListWidget(this)),
      m_classNote(new QLabel(this)),
      m_projectPath(new QLineEdit(this)),
      m_problems(new QLabel(this)),
      m_buttons(new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this)),
      m_job(new BackgroundJob(this)) {
  setObjectName(QStringLiteral("newFromData"));
  setWindowTitle(tr("New project from data"));
  resize(760, 680);

  // Where the data is.
  m_data->setObjectName(QStringLiteral("newFromDataPath"));
  m_data->setPlaceholderText(
      tr("A folder or a file: class folders, a CSV manifest, images with "
         "masks, a YOLO, COCO or VOC set"));
  auto* folder = new QPushButton(tr("&Folder..."), this);
  auto* file = new QPushButton(tr("F&ile..."), this);
  folder->setAutoDefault(false);
  file->setAutoDefault(false);
  auto* dataRow = new QHBoxLayout;
  dataRow->addWidget(m_data, 1);
  dataRow->addWidget(folder);
  dataRow->addWidget(file);

  m_task->setObjectName(QStringLiteral("newFromDataTask"));
  m_task->addItem(tr("Recognise from the data"), QString());
  for (const auto& name : m_registries->tasks.names()) {
    const auto& def = m_registries->tasks.get(name);
    QString title = QString::fromStdString(def.description);
    title[0] = title[0].toUpper();
    m_task->addItem(title, QString::fromStdString(name));
  }
  m_template->setObjectName(QStringLiteral("newFromDataTemplate"));
  m_template->addItem(tr("The task's starter template"), QString());

  auto* source = new QFormLayout;
  auto* dataLabel = new QLabel(tr("&Data:"), this);
  dataLabel->setBuddy(m_data);
  source->addRow(dataLabel, dataRow);
  source->addRow(tr("&Task:"), m_task);
  source->addRow(tr("&Model template:"), m_template);

  m_progress->setRange(0, 0);
  m_progress->setVisible(false);
  m_status->setObjectName(QStringLiteral("newFromDataStatus"));
  m_status->setWordWrap(true);
  m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_status->setText(tr("Choose the folder or file your images are described in."));

  auto* foundBox = new QGroupBox(tr("What the data holds"), this);
  m_found->setObjectName(QStringLiteral("newFromDataFound"));
  m_found->setReadOnly(true);
  m_found->setLineWrapMode(QPlainTextEdit::WidgetWidth);
  auto* foundLayout = new QVBoxLayout(foundBox);
  foundLayout->addWidget(m_found);

  // The choices, each a field.
  auto* chosenBox = m_chosen = new QGroupBox(tr("The project"), this);
  m_channels->setObjectName(QStringLiteral("newFromDataChannels"));
  m_channels->setRange(1, 3);
  m_channels->setSingleStep(2);  // 1 (grey) or 3 (colour)
  m_channels->setToolTip(tr("1: grey, 3: colour (RGB). model.input.channels"));
  m_height->setObjectName(QStringLiteral("newFromDataHeight"));
  m_width->setObjectName(QStringLiteral("newFromDataWidth"));
  for (auto* side : {m_height, m_width}) {
    side->setRange(8, 4096);
    side->setSuffix(tr(" px"));
    side->setSingleStep(8);
  }
  m_height->setToolTip(tr("Every image is brought to this height. model.input.height"));
  m_width->setToolTip(tr("Every image is brought to this width. model.input.width"));
  auto* sizeRow = new QHBoxLayout;
  sizeRow->addWidget(m_height);
  sizeRow->addWidget(new QLabel(tr("high,"), this));
  sizeRow->addWidget(m_width);
  sizeRow->addWidget(new QLabel(tr("wide"), this));
  sizeRow->addStretch(1);
  m_validation->setObjectName(QStringLiteral("newFromDataValidation"));
  m_validation->setRange(0, 80);
  m_validation->setSuffix(tr(" % of the training images"));
  m_validation->setToolTip(
      tr("Held out to measure the model during training, stratified by "
         "class. data.validation.fraction"));
  m_batch->setObjectName(QStringLiteral("newFromDataBatch"));
  m_batch->setRange(1, 65536);
  m_batch->setSuffix(tr(" images a step"));
  m_batch->setToolTip(
      tr("The template's batch, halved for a small set until an epoch holds at least 16 "
         "optimizer steps (down to 8), so BatchNorm and the optimizer get enough steps. "
         "train.batch_size"));
  m_normalization->setObjectName(QStringLiteral("newFromDataNormalization"));
  m_normalization->addItem(tr("Auto: the training images' mean and std, measured when a run "
                              "starts"),
                           QStringLiteral("auto"));
  m_normalization->addItem(tr("Explicit: the mean and std below"), QStringLiteral("explicit"));
  m_normalization->setToolTip(tr("data.normalize"));
  m_mean->setObjectName(QStringLiteral("newFromDataMean"));
  m_std->setObjectName(QStringLiteral("newFromDataStd"));
  m_mean->setToolTip(tr("One value per channel, pixels in [0, 1]. data.normalize.mean"));
  m_std->setToolTip(tr("One value per channel, pixels in [0, 1]. data.normalize.std"));
  m_classes->setObjectName(QStringLiteral("newFromDataClasses"));
  m_classes->setMinimumHeight(90);
  m_classNote->setWordWrap(true);
  m_projectPath->setObjectName(QStringLiteral("newFromDataProject"));
  auto* browse = new QPushButton(tr("&Save as..."), this);
  browse->setAutoDefault(false);
  auto* projectRow = new QHBoxLayout;
  projectRow->addWidget(m_projectPath, 1);
  projectRow->addWidget(browse);
  auto* chosen = new QFormLayout(chosenBox);
  chosen->addRow(tr("Input &channels:"), m_channels);
  auto* sizeLabel = new QLabel(tr("Input &size:"), this);
  sizeLabel->setBuddy(m_height);
  chosen->addRow(sizeLabel, sizeRow);
  chosen->addRow(tr("&Validation:"), m_validation);
  chosen->addRow(tr("&Batch size:"), m_batch);
  chosen->addRow(tr("&Normalisation:"), m_normalization);
  chosen->addRow(tr("Mean:"), m_mean);
  chosen->addRow(tr("Std:"), m_std);
  chosen->addRow(tr("C&lasses:"), m_classes);
  chosen->addRow(QString(), m_classNote);
  auto* projectLabel = new QLabel(tr("&Project file:"), this);
  projectLabel->setBuddy(m_projectPath);
  chosen->addRow(projectLabel, projectRow);
  chosenBox->setEnabled(false);

  m_problems->setObjectName(QStringLiteral("newFromDataProblems"));
  m_problems->setWordWrap(true);
  m_problems->setStyleSheet(QStringLiteral("color: #c0392b"));
  createButton()->setText(tr("&Create project"));
  createButton()->setEnabled(false);

  // What was found above, across the dialog (its lines are long), the choices below.
  m_found->setMinimumHeight(110);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(source);
  layout->addWidget(m_progress);
  layout->addWidget(m_status);
  layout->addWidget(foundBox, 2);
  layout->addWidget(chosenBox, 3);
  layout->addWidget(m_problems);
  layout->addWidget(m_buttons);

  connect(m_data, &QLineEdit::returnPressed, this, &NewFromDataDialog::rescan);
  connect(m_data, &QLineEdit::editingFinished, this, [this] {
    if (!m_filling && m_data->isModified()) rescan();
    m_data->setModified(false);
  });
  connect(folder, &QPushButton::clicked, this, &NewFromDataDialog::chooseFolder);
  connect(file, &QPushButton::clicked, this, &NewFromDataDialog::chooseFile);
  connect(m_task, &QComboBox::currentIndexChanged, this, [this] {
    if (m_filling) return;
    m_filling = true;
    m_template->setCurrentIndex(0);  // the new task's starter
    m_filling = false;
    rescan();
  });
  connect(m_template, &QComboBox::currentIndexChanged, this, [this] {
    if (!m_filling) rescan();
  });
  connect(m_job, &BackgroundJob::progress, this, [this](qint64 done, qint64 total) {
    m_progress->setRange(0, 1000);
    m_progress->setValue(total > 0 ? int(1000 * done / total) : 0);
  });
  for (auto* spin : {m_channels, m_height, m_width, m_validation, m_batch})
    connect(spin, &QSpinBox::valueChanged, this, &NewFromDataDialog::checkFields);
  connect(m_normalization, &QComboBox::currentIndexChanged, this, [this] {
    const bool explicitValues =
        m_normalization->currentData().toString() == QLatin1String("explicit");
    m_mean->setEnabled(explicitValues);
    m_std->setEnabled(explicitValues);
    checkFields();
  });
  for (auto* edit : {m_mean, m_std})
    connect(edit, &QLineEdit::textChanged, this, &NewFromDataDialog::checkFields);
  connect(m_classes, &QListWidget::itemChanged, this, &NewFromDataDialog::checkFields);
  connect(m_projectPath, &QLineEdit::textEdited, this, [this] {
    m_projectPathEdited = true;
    checkFields();
  });
  connect(browse, &QPushButton::clicked, this, [this] {
    const QString target = QFileDialog::getSaveFileName(
        this, tr("Save the new project as"), m_projectPath->text(),
        tr("Netsmith projects (*.netsmith.json)"), nullptr, QFileDialog::DontConfirmOverwrite);
    if (target.isEmpty()) return;
    m_projectPath->setText(target);
    m_projectPathEdited = true;
    checkFields();
  });
  connect(m_buttons, &QDialogButtonBox::accepted, this, [this] {
    if (QFileInfo(projectPath()).exists() &&
        QMessageBox::question(this, tr("Replace the project?"),
                              tr("%1 exists already. Replace it?").arg(projectPath())) !=
            QMessageBox::Yes)
      return;
    accept();
  });
  connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  m_mean->setEnabled(false);
  m_std->setEnabled(false);
}

QPushButton* NewFromDataDialog::createButton() const {
  return m_buttons->button(QDialogButtonBox::Ok);
}

bool NewFromDataDialog::isScanning() const {
  return m_job->isRunning();
}

void NewFromDataDialog::setDataPath(const QString& path) {
  m_data->setText(path);
  rescan();
}

void NewFromDataDialog::chooseFolder() {
  const QString folder = QFileDialog::getExistingDirectory(
      this, tr("The folder of your data"),
      m_data->text().isEmpty() ? QDir::homePath() : m_data->text());
  if (!folder.isEmpty()) setDataPath(folder);
}

void NewFromDataDialog::chooseFile() {
  const QString file = QFileDialog::getOpenFileName(
      this, tr("The file describing your data"),
      m_data->text().isEmpty() ? QDir::homePath() : m_data->text(),
      tr("Manifests and annotations (*.csv *.json *.yaml *.yml);;All files (*)"));
  if (!file.isEmpty()) setDataPath(file);
}

void NewFromDataDialog::rescan() {
  const QString data = m_data->text().trimmed();
  m_proposal.reset();
  createButton()->setEnabled(false);
  m_chosen->setEnabled(false);
  if (data.isEmpty()) {
    m_job->cancel();
    m_progress->setVisible(false);
    m_status->setText(tr("Choose the folder or file your images are described in."));
    return;
  }
  import::StarterChoices choices;
  choices.task = m_task->currentData().toString().toStdString();
  choices.templateName = m_template->currentData().toString().toStdString();
  const std::string target = m_projectPathEdited && !m_projectPath->text().isEmpty()
                                 ? m_projectPath->text().toStdString()
                                 : import::defaultProjectPath(data.toStdString());
  import::StarterContext context;
  context.registries = m_registries;
  context.templatesDir = m_templatesDir.toStdString();
  m_progress->setRange(0, 0);
  m_progress->setVisible(true);
  m_status->setText(tr("Reading %1...").arg(QDir::toNativeSeparators(data)));
  m_found->clear();
  m_job->start(
      [context, choices, target, data = data.toStdString()](const JobContext& job) mutable {
        context.progress = [&job](const std::string&, std::int64_t done, std::int64_t total) {
          job.progress(done, total);
          return !job.cancelled();
        };
        return import::proposeProject(data, target, choices, context);
      },
      [this](import::DataProposal proposal) { showProposal(std::move(proposal)); },
      [this](const QString& message) { showError(message); });
}

void NewFromDataDialog::showError(const QString& message) {
  m_progress->setVisible(false);
  m_status->setText(tr("Cannot make a project from this: %1").arg(message));
  Q_EMIT scanned();
}

void NewFromDataDialog::showProposal(import::DataProposal proposal) {
  m_progress->setVisible(false);
  m_filling = true;
  const auto& p = proposal;
  // The task and template chosen, shown in their boxes (the template list is the task's).
  const QString task = QString::fromStdString(p.task);
  m_template->clear();
  m_template->addItem(tr("The task's starter template"), QString());
  for (const auto& name : import::templatesFor(m_templatesDir.toStdString(), p.task)) {
    const QString n = QString::fromStdString(name);
    m_template->addItem(
        n == QString::fromStdString(m_registries->tasks.get(p.task).starter.templateName)
            ? tr("%1 (the starter)").arg(n)
            : n,
        n);
  }
  const int chosenTemplate = m_template->findData(QString::fromStdString(p.templateName));
  m_template->setCurrentIndex(chosenTemplate < 0 ? 0 : chosenTemplate);
  std::string text = import::proposalText(p);
  text = text.substr(0, text.find("Chose:"));
  m_found->setPlainText(QString::fromStdString(text).trimmed());
  m_channels->setValue(int(p.input.channels));
  m_height->setValue(int(p.input.height));
  m_width->setValue(int(p.input.width));
  const Json& validation = p.project.data.value("validation", Json());
  const bool fraction = !validation.is_object() || validation.contains("fraction");
  m_validation->setEnabled(fraction);
  m_validation->setValue(validation.is_object() && validation.contains("fraction")
                             ? int(std::lround(validation["fraction"].get<double>() * 100))
                             : 0);
  m_validation->setSpecialValueText(fraction ? tr("none") : tr("the data's own split"));
  m_batch->setEnabled(p.batchSize > 0);
  m_batch->setValue(p.batchSize > 0 ? int(p.batchSize) : 1);
  m_normalization->setCurrentIndex(0);
  m_mean->setText(numbersText(p.scan.mean));
  m_std->setText(numbersText(p.scan.std));
  m_mean->setEnabled(false);
  m_std->setEnabled(false);
  // Class names the project writes for class numbers (mask values, YOLO ids) are fields; names
  // the data gives itself (class folders, a manifest's labels, COCO categories, VOC object
  // names) are shown as they are.
  m_classes->clear();
  const auto* format = data::findSourceFormat(p.found.format);
  const bool editable =
      !p.found.classes.empty() && format && format->classNaming == data::ClassNaming::Names;
  const auto& names = p.scan.targetNames.empty() ? p.scan.classes : p.scan.targetNames;
  for (const auto& name : names) {
    auto* item = new QListWidgetItem(QString::fromStdString(name), m_classes);
    if (editable) item->setFlags(item->flags() | Qt::ItemIsEditable);
  }
  m_classNote->setText(!p.scan.targetNames.empty() ? tr("The targets: the manifest's columns.")
                       : editable                  ? tr("Double-click a name to change it.")
                                  : tr("Named by the data itself (its folders, labels or "
                                       "categories): rename them there."));
  if (!m_projectPathEdited)
    m_projectPath->setText(
        QString::fromStdString(import::defaultProjectPath(m_data->text().trimmed().toStdString())));
  m_status->setText(tr("Recognised: %1 (%2), for %3. Every choice below can be changed.")
                        .arg(QString::fromStdString(format ? format->title : p.found.format),
                             QString::fromStdString(p.found.format), task));
  m_proposal = std::move(proposal);
  m_chosen->setEnabled(true);
  m_filling = false;
  checkFields();
  Q_EMIT scanned();
}

QString NewFromDataDialog::projectPath() const {
  return m_projectPath->text().trimmed();
}

project::Project NewFromDataDialog::project() const {
  if (!m_proposal) return {};
  project::Project p = m_proposal->project;
  p.model.input.channels = m_channels->value();
  p.model.input.height = m_height->value();
  p.model.input.width = m_width->value();
  if (m_batch->isEnabledTo(this)) p.train["batch_size"] = m_batch->value();
  if (m_validation->isEnabled()) {
    if (m_validation->value() > 0)
      p.data["validation"] =
          Json{{"fraction", m_validation->value() / 100.0}, {"seed", 0}, {"stratified", true}};
    else
      p.data.erase("validation");
  }
  if (m_normalization->currentData().toString() == QLatin1String("explicit")) {
    const auto mean = parseNumbers(m_mean->text());
    const auto std = parseNumbers(m_std->text());
    p.data["normalize"] = Json{{"mean", mean.value_or(std::vector<double>{})},
                               {"std", std.value_or(std::vector<double>{})}};
  } else {
    p.data["normalize"] = "auto";
  }
  if (!m_proposal->found.classes.empty()) {
    Json classes = Json::array();
    for (int i = 0; i < m_classes->count(); ++i)
      classes.push_back(m_classes->item(i)->text().trimmed().toStdString());
    p.data["classes"] = classes;
  }
  QString name = QFileInfo(projectPath()).fileName();
  if (name.endsWith(QLatin1String(project::kFileSuffix)))
    name.chop(int(qstrlen(project::kFileSuffix)));
  if (!name.isEmpty()) p.name = name.toStdString();
  return p;
}

void NewFromDataDialog::checkFields() {
  if (m_filling) return;
  QStringList problems;
  if (m_proposal) {
    const auto p = project();
    project::LoadedProject proposed;
    proposed.project = p;
    const auto resolved = resolve::resolveProject(std::move(proposed), *m_registries);
    const auto& analysis = resolved.analysis;
    for (const auto& problem : analysis.problems)
      problems << QString::fromStdString(problem.toString());
    const auto& scan = m_proposal->scan;
    const train::TaskFacts facts{std::int64_t(scan.classes.size()), scan.classes, scan.targetNames};
    if (analysis.ok())
      if (auto head = resolve::headProblem(resolved, facts, *m_registries))
        problems << QString::fromStdString(head->toString());
    if (p.data["normalize"].is_object()) {
      const auto channels = std::size_t(m_channels->value());
      if (!parseNumbers(m_mean->text()) || !parseNumbers(m_std->text()) ||
          p.data["normalize"]["mean"].size() != channels ||
          p.data["normalize"]["std"].size() != channels)
        problems << tr("Normalisation: the mean and the std need %1 number(s) each, one per "
                       "channel")
                        .arg(channels);
    }
    for (int i = 0; i < m_classes->count(); ++i)
      if (m_classes->item(i)->text().trimmed().isEmpty())
        problems << tr("Class %1 has no name").arg(i);
    if (!projectPath().endsWith(QLatin1String(project::kFileSuffix)))
      problems << tr("The project file's name ends in %1").arg(QLatin1String(project::kFileSuffix));
  }
  m_problems->setText(problems.join(QLatin1Char('\n')));
  createButton()->setEnabled(m_proposal.has_value() && problems.isEmpty());
}

}  // namespace netsmith::ui
