#include "forms/data_page.h"

#include <qcustomplot.h>
#include <QCheckBox>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QProgressBar>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QSplitter>
#include <QTabWidget>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>

#include <algorithm>
#include <cmath>
#include <utility>

#include "augment/transform.h"
#include "data/dataset_stats.h"
#include "data/project_data.h"
#include "data/source_formats.h"
#include "doctor/doctor_panel.h"
#include "forms/class_editor.h"
#include "resolve/open_data.h"
#include "resolve/resolved_project.h"
#include "session/project_document.h"
#include "util/background_job.h"
#include "util/chart_fit.h"
#include "util/image_convert.h"
#include "util/theme_colors.h"

namespace netsmith::ui {

namespace {

/// The `i`-th key of a source format (core's description: data/source_formats.h), or nullptr.
const data::SourceField* fieldOf(const QString& format, std::size_t i) {
  const auto* def = data::findSourceFormat(format.toStdString());
  return def && i < def->fields.size() ? &def->fields[i] : nullptr;
}

/// A source's path or file list as the field shows it (a list joined with commas).
QString fieldText(const Json& src, const data::SourceField* field) {
  if (!field || !src.is_object() || !src.contains(field->key)) return {};
  const Json& v = src[field->key];
  if (v.is_string()) return QString::fromStdString(v.get<std::string>());
  if (!v.is_array()) return {};
  QStringList items;
  for (const auto& item : v)
    if (item.is_string()) items << QString::fromStdString(item.get<std::string>());
  return items.join(QStringLiteral(", "));
}

QString text(const Json& j, const char* key) {
  if (!j.is_object() || !j.contains(key)) return {};
  const Json& v = j[key];
  if (v.is_string()) return QString::fromStdString(v.get<std::string>());
  if (v.is_array()) {
    QStringList parts;
    for (const auto& x : v)
      parts << (x.is_string() ? QString::fromStdString(x.get<std::string>())
                              : QString::fromStdString(x.dump()));
    return parts.join(QStringLiteral(", "));
  }
  return QString::fromStdString(v.dump());
}

/// The scan's summary line: split sizes, classes, mean / std, normalization, skipped files and
/// the subsets the data's limits took.
QString dataScanSummary(const DataScan& s) {
  QStringList stats;
  for (int c = 0; c < s.mean.size(); ++c)
    stats << QStringLiteral("%1 / %2").arg(s.mean[c], 0, 'f', 4).arg(s.std[c], 0, 'f', 4);
  return DataPage::tr(
             "Splits (readable images): train %1, validation %2, test %3; %4 classes; "
             "mean / std of the training images: %5; normalization: %6; skipped: %7%8")
      .arg(s.train)
      .arg(s.validation)
      .arg(s.test)
      .arg(s.classes.size())
      .arg(stats.join(QStringLiteral(", ")), s.normalization)
      .arg(s.skipped.size())
      .arg(s.subsets.isEmpty()
               ? QString()
               : QStringLiteral("<br>") + s.subsets.join(QStringLiteral("<br>")).toHtmlEscaped());
}

/// The samples of data without one class per sample, each with its caption.
void addCaptionedDataSamples(QListWidget* grid, const DataScan& s) {
  for (int i = 0; i < s.samples.size(); ++i) {
    // Small images shown at the grid's size, pixels kept sharp (a mask's edges show).
    const QImage& image = s.samples[i];
    const QSize icon = grid->iconSize();
    auto* item = new QListWidgetItem(
        QIcon(
            QPixmap::fromImage(image.width() < icon.width()
                                   ? image.scaled(icon, Qt::KeepAspectRatio, Qt::FastTransformation)
                                   : image)),
        s.sampleCaptions.value(i), grid);
    item->setToolTip(s.sampleCaptions.value(i));
    item->setData(Qt::UserRole, -1);
  }
}

/// Histogram: train and validation bars per class, the classes' names on the axis.
void drawDataClassHistogram(QCustomPlot* plot, const DataScan& s) {
  auto* group = new QCPBarsGroup(plot);
  QVector<double> ticks;
  for (int c = 0; c < s.classes.size(); ++c)
    ticks << c;
  const QList<QPair<QString, const QVector<qint64>*>> sets = {
      {DataPage::tr("train"), &s.trainCounts}, {DataPage::tr("validation"), &s.validationCounts}};
  const QColor colours[] = {QColor(31, 119, 180), QColor(255, 127, 14)};
  double top = 1;
  for (int i = 0; i < sets.size(); ++i) {
    QVector<double> values;
    for (auto v : *sets[i].second) {
      values << double(v);
      top = std::max(top, double(v));
    }
    auto* bars = new QCPBars(plot->xAxis, plot->yAxis);
    bars->setName(sets[i].first);
    bars->setBrush(colours[i]);
    bars->setPen(Qt::NoPen);
    bars->setWidth(0.38);
    bars->setBarsGroup(group);
    bars->setData(ticks, values);
  }
  QSharedPointer<QCPAxisTickerText> ticker(new QCPAxisTickerText);
  for (int c = 0; c < s.classes.size(); ++c)
    ticker->addTick(c, s.classes[c]);
  plot->xAxis->setTicker(ticker);
  plot->xAxis->setTickLabelRotation(s.classes.size() > 6 ? 40 : 0);
  plot->xAxis->setRange(-0.6, s.classes.size() - 0.4);
  plot->yAxis->setRange(0, top * 1.1);
  plot->yAxis->setLabel(DataPage::tr("images"));
  plot->xAxis->setLabel(QString());
  plot->legend->setVisible(true);
  plot->replot();
}

/// What the normalisation fields do, as their tooltip says it.
QString normalizationHelp() {
  return DataPage::tr("Pixels are in [0, 1]; each channel becomes (x - mean) / std");
}

}  // namespace

DataPage::DataPage(ProjectDocument* document, QWidget* parent)
    : QWidget(parent),
      m_document(document),
      m_fraction(new QDoubleSpinBox(this)),
      m_splitSeed(new QSpinBox(this)),
      m_stratified(new QCheckBox(tr("stratified (same class mix as train)"), this)),
      m_normalize(new QComboBox(this)),
      m_mean(new QLineEdit(this)),
      m_std(new QLineEdit(this)),
      m_fit(new QComboBox(this)),
      m_input(new QLabel(this)),
      m_scanButton(new QPushButton(tr("Scan the data"), this)),
      m_cancelButton(new QPushButton(tr("Cancel"), this)),
      m_progress(new QProgressBar(this)),
      m_summary(new QLabel(this)),
      m_imbalance(new QLabel(this)),
      m_classWeights(new QPushButton(tr("Use class weights"), this)),
      m_histogram(new QCustomPlot(this)),
      m_cooccurrence(new QTableWidget(this)),
      m_skipped(new QListWidget(this)),
      m_classFilter(new QComboBox(this)),
      m_grid(new QListWidget(this)),
      m_scanJob(new BackgroundJob(this)) {
  setObjectName(QStringLiteral("dataPage"));
  setupFormWidgets();
  setupScanWidgets();

  QWidget* scroll = buildFormsPanel();
  QWidget* right = buildResultsPanel();
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(scroll);
  split->addWidget(right);
  split->setSizes({420, 800});
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(split);

  connectFormEdits();
  connectScan();
  connectDocument();
}

void DataPage::setupFormWidgets() {
  m_fraction->setObjectName(QStringLiteral("validationFraction"));
  m_fraction->setRange(0, 0.95);
  m_fraction->setSingleStep(0.05);
  m_fraction->setDecimals(3);
  m_fraction->setToolTip(tr("Share of the training source held out for validation (0: none)"));
  m_splitSeed->setRange(0, 1 << 30);
  m_normalize->setObjectName(QStringLiteral("normalizeMode"));
  m_normalize->addItems(
      {QStringLiteral("auto"), QStringLiteral("none"), QStringLiteral("explicit")});
  m_normalize->setToolTip(
      tr("auto: mean/std computed over the training split (cached); "
         "explicit: the values in the project file"));
  m_mean->setObjectName(QStringLiteral("normalizeMean"));
  m_std->setObjectName(QStringLiteral("normalizeStd"));
  for (auto* field : {m_mean, m_std}) {
    field->setPlaceholderText(tr("one number, or one per channel: 0.5, 0.5, 0.5"));
    field->setToolTip(normalizationHelp());
  }
  m_fit->setObjectName(QStringLiteral("fitMode"));
  m_fit->addItems({QStringLiteral("resize"), QStringLiteral("resize_crop")});
  m_fit->setToolTip(tr("How images of another size are fitted to the model input"));
}

void DataPage::setupScanWidgets() {
  m_scanButton->setObjectName(QStringLiteral("dataScan"));
  m_cancelButton->setEnabled(false);
  m_summary->setObjectName(QStringLiteral("dataSummary"));
  m_summary->setWordWrap(true);
  m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_imbalance->setWordWrap(true);
  cautionLabel(m_imbalance);
  m_classWeights->setObjectName(QStringLiteral("useClassWeights"));
  m_classWeights->hide();
  m_histogram->setObjectName(QStringLiteral("classHistogram"));
  m_histogram->setMinimumHeight(200);
  // Room on the right for the last class's slanted name.
  m_histogram->axisRect()->setMinimumMargins(QMargins(0, 0, 40, 0));
  legendBelow(m_histogram);
  followTheme(m_histogram);
  fitTicksToSize(m_histogram);
  m_skipped->setObjectName(QStringLiteral("skippedList"));
  m_grid->setObjectName(QStringLiteral("sampleGrid"));
  m_grid->setViewMode(QListView::IconMode);
  m_grid->setIconSize(QSize(64, 64));
  m_grid->setGridSize(QSize(96, 96));
  m_grid->setResizeMode(QListView::Adjust);
  m_grid->setMovement(QListView::Static);
  m_classFilter->setObjectName(QStringLiteral("sampleFilter"));
}

QWidget* DataPage::buildFormsPanel() {
  // Left: the forms.
  auto* forms = new QWidget(this);
  auto* fl = new QVBoxLayout(forms);
  fl->addWidget(buildSourceBox(QStringLiteral("train")));
  fl->addWidget(buildSourceBox(QStringLiteral("test")));
  auto* splitBox = new QGroupBox(tr("Validation split"), forms);
  auto* sf = new QFormLayout(splitBox);
  sf->addRow(tr("fraction"), m_fraction);
  sf->addRow(tr("seed"), m_splitSeed);
  sf->addRow(QString(), m_stratified);
  fl->addWidget(splitBox);
  auto* prepBox = new QGroupBox(tr("Preprocessing"), forms);
  auto* pf = new QFormLayout(prepBox);
  m_prepForm = pf;
  pf->addRow(tr("model input"), m_input);
  pf->addRow(tr("fit"), m_fit);
  pf->addRow(tr("normalize"), m_normalize);
  pf->addRow(tr("mean"), m_mean);
  pf->addRow(tr("std"), m_std);
  fl->addWidget(prepBox);
  m_classEditor = new ClassEditor(m_document, forms);
  fl->addWidget(m_classEditor);
  fl->addStretch(1);
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(forms);
  scroll->setWidgetResizable(true);
  scroll->setMinimumWidth(340);
  return scroll;
}

QWidget* DataPage::buildResultsPanel() {
  // Right: the scan's results.
  auto* right = new QWidget(this);
  auto* rl = new QVBoxLayout(right);
  auto* scanRow = new QHBoxLayout;
  scanRow->addWidget(m_scanButton);
  scanRow->addWidget(m_cancelButton);
  scanRow->addWidget(m_progress, 1);
  rl->addLayout(scanRow);
  rl->addWidget(m_summary);
  auto* imbalanceRow = new QHBoxLayout;
  imbalanceRow->addWidget(m_imbalance, 1);
  imbalanceRow->addWidget(m_classWeights);
  rl->addLayout(imbalanceRow);
  auto* tabs = m_tabs = new QTabWidget(right);
  tabs->addTab(m_histogram, tr("Class histogram"));
  m_cooccurrence->setObjectName(QStringLiteral("labelCooccurrence"));
  m_cooccurrence->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_cooccurrence->setToolTip(
      tr("Training images holding both the row's and the column's label (the diagonal: each "
         "label's images)"));
  auto* samplesTab = new QWidget(tabs);
  auto* stl = new QVBoxLayout(samplesTab);
  stl->addWidget(m_classFilter);
  stl->addWidget(m_grid, 1);
  tabs->addTab(samplesTab, tr("Samples"));
  tabs->addTab(m_skipped, tr("Skipped files"));
  tabs->addTab(m_cooccurrence, tr("Co-occurrence"));
  tabs->setTabVisible(tabs->indexOf(m_cooccurrence), false);
  tabs->setObjectName(QStringLiteral("dataTabs"));
  m_doctor = new DoctorPanel(m_document, tabs);
  tabs->addTab(m_doctor, tr("Doctor"));
  rl->addWidget(tabs, 1);
  return right;
}

void DataPage::connectFormEdits() {
  auto editValidation = [this](const char* key, const Json& value) {
    if (m_refreshing) return;
    Json data = m_document->project().data;
    if (!data["validation"].is_object()) data["validation"] = Json::object();
    data["validation"][key] = value;
    writeData(data, tr("Set validation %1").arg(QLatin1String(key)),
              QStringLiteral("validation:") + QLatin1String(key));
  };
  connect(m_fraction, qOverload<double>(&QDoubleSpinBox::valueChanged), this,
          [editValidation](double v) { editValidation("fraction", v); });
  connect(m_splitSeed, qOverload<int>(&QSpinBox::valueChanged), this,
          [editValidation](int v) { editValidation("seed", v); });
  connect(m_stratified, &QCheckBox::toggled, this,
          [editValidation](bool v) { editValidation("stratified", v); });
  connect(m_normalize, &QComboBox::textActivated, this, [this](const QString& mode) {
    Json data = m_document->project().data;
    if (mode == QLatin1String("explicit")) {
      // The scan's figures when there are some, else the identity (mean 0, std 1) to type over.
      const auto channels =
          std::size_t(std::max<std::int64_t>(1, m_document->project().model.input.channels));
      data["normalize"] =
          m_scan.mean.isEmpty()
              ? Json{{"mean", std::vector<double>(channels, 0.0)},
                     {"std", std::vector<double>(channels, 1.0)}}
              : Json{{"mean", std::vector<double>(m_scan.mean.begin(), m_scan.mean.end())},
                     {"std", std::vector<double>(m_scan.std.begin(), m_scan.std.end())}};
    } else {
      data["normalize"] = mode.toStdString();
    }
    writeData(data, tr("Normalize: %1").arg(mode));
  });
  for (auto* field : {m_mean, m_std})
    connect(field, &QLineEdit::editingFinished, this, &DataPage::editExplicitNormalization);
  connect(m_fit, &QComboBox::textActivated, this, [this](const QString& fit) {
    Json data = m_document->project().data;
    data["fit"] = fit.toStdString();
    writeData(data, tr("Fit: %1").arg(fit));
  });
}

void DataPage::connectScan() {
  connect(m_scanButton, &QPushButton::clicked, this, &DataPage::scan);
  connect(m_cancelButton, &QPushButton::clicked, this, &DataPage::cancelScan);
  connect(m_scanJob, &BackgroundJob::progress, this, [this](qint64 done, qint64 total) {
    m_progress->setMaximum(int(std::max<qint64>(1, total)));
    m_progress->setValue(int(done));
  });
  connect(m_classWeights, &QPushButton::clicked, this, [this] {
    Json train = m_document->project().train;
    train["class_weights"] = "auto";
    m_document->editSection(QStringLiteral("train"), train, tr("Use class weights"));
    m_classWeights->hide();
  });
  connect(m_classFilter, qOverload<int>(&QComboBox::currentIndexChanged), this,
          [this](int i) { filterSamples(i - 1); });
}

void DataPage::connectDocument() {
  connect(m_document, &ProjectDocument::loaded, this, [this] {
    // A scan of the previous project never reports into this one.
    m_scanJob->cancel();
    m_cancelButton->setEnabled(false);
    m_progress->setValue(0);
    m_scan = DataScan();
    m_classEditor->clear();
    showScan();
    refreshForms();
  });
  connect(m_document, &ProjectDocument::sectionChanged, this, [this](const QString& section) {
    if (section != QLatin1String("data")) return;
    refreshForms();
    followClassNames();
  });
}

void DataPage::followClassNames() {
  // The scan's charts and filters name the classes as the class list now does: renamed in
  // place where names attach to the data's class numbers; read again where the list's order
  // decides which class is which (COCO, VOC).
  if (!m_scan.ok || m_scan.classes.isEmpty() || m_scanJob->isRunning()) return;
  const Json& d = m_document->project().data;
  const Json classes = d.is_object() ? d.value("classes", Json()) : Json();
  if (!classes.is_array() || int(classes.size()) != m_scan.classes.size()) return;
  QStringList names;
  for (const auto& c : classes) {
    if (!c.is_string()) return;
    names << QString::fromStdString(c.get<std::string>());
  }
  if (names == m_scan.classes) return;
  switch (data::classNamingOf(m_document->project().data)) {
    case data::ClassNaming::Names:
      m_scan.classes = names;
      showScan();
      break;
    case data::ClassNaming::Order:
      scan();
      break;
    default:
      break;
  }
}

QWidget* DataPage::buildSourceBox(const QString& split) {
  SourceWidgets& w = split == QLatin1String("train") ? m_train : m_test;
  auto* box = new QGroupBox(
      split == QLatin1String("train") ? tr("Training source") : tr("Test source"), this);
  auto* f = new QFormLayout(box);
  w.format = new QComboBox(box);
  w.format->setObjectName(split + QStringLiteral("Format"));
  w.format->addItem(tr("(none)"), QString());
  for (const auto& def : data::sourceFormats()) {
    w.format->addItem(QString::fromStdString(def.title), QString::fromStdString(def.name));
    w.format->setItemData(w.format->count() - 1, QString::fromStdString(def.help), Qt::ToolTipRole);
  }
  w.path = new QLineEdit(box);
  w.path->setObjectName(split + QStringLiteral("Path"));
  w.labels = new QLineEdit(box);
  w.labels->setObjectName(split + QStringLiteral("Labels"));
  auto* pick = new QToolButton(box);
  pick->setText(tr("Browse..."));
  pick->setObjectName(split + QStringLiteral("Browse"));
  pick->setToolTip(tr("Choose the %1 data's folder or file").arg(split));
  auto* pickLabels = new QToolButton(box);
  pickLabels->setText(tr("Browse..."));
  pickLabels->setObjectName(split + QStringLiteral("BrowseLabels"));
  pickLabels->setToolTip(tr("Choose the %1 data's second file").arg(split));
  auto row = [box](QLineEdit* e, QToolButton* b) {
    auto* r = new QWidget(box);
    auto* l = new QHBoxLayout(r);
    l->setContentsMargins(0, 0, 0, 0);
    l->addWidget(e, 1);
    l->addWidget(b);
    return r;
  };
  f->addRow(tr("format"), w.format);
  w.pathLabel = new QLabel(tr("path"), box);
  w.pathLabel->setObjectName(split + QStringLiteral("PathLabel"));
  f->addRow(w.pathLabel, row(w.path, pick));
  w.labelsLabel = new QLabel(tr("labels"), box);
  w.labelsRow = row(w.labels, pickLabels);
  f->addRow(w.labelsLabel, w.labelsRow);

  connectSourceBox(split, w, pick, pickLabels);
  return box;
}

void DataPage::connectSourceBox(const QString& split, SourceWidgets& w, QToolButton* pick,
                                QToolButton* pickLabels) {
  connect(w.format, qOverload<int>(&QComboBox::activated), this, [this, split, &w](int) {
    const QString format = w.format->currentData().toString();
    Json data = m_document->project().data;
    if (format.isEmpty())
      data.erase(split.toStdString());
    else
      data[split.toStdString()] = Json{{"format", format.toStdString()}};
    writeData(data, tr("%1 source: %2").arg(split, format));
  });
  // The format's `i`-th key, from what its field holds.
  auto writePath = [this, split, &w](std::size_t i, const QString& value) {
    const QString format = w.format->currentData().toString();
    const auto* field = fieldOf(format, i);
    if (!field) return;
    const QString key = QString::fromStdString(field->key);
    Json data = m_document->project().data;
    Json& src = data[split.toStdString()];
    if (!src.is_object()) src = Json{{"format", format.toStdString()}};
    if (field->kind == data::SourceField::Kind::FileList) {
      Json files = Json::array();
      for (const auto& f : value.split(QLatin1Char(','), Qt::SkipEmptyParts))
        files.push_back(f.trimmed().toStdString());
      src[key.toStdString()] = files;
    } else {
      src[key.toStdString()] = value.trimmed().toStdString();
    }
    writeData(data, tr("%1 %2").arg(split, key));
  };
  connect(w.path, &QLineEdit::editingFinished, this, [this, &w, writePath] {
    if (!m_refreshing) writePath(0, w.path->text());
  });
  connect(w.labels, &QLineEdit::editingFinished, this, [this, &w, writePath] {
    if (!m_refreshing) writePath(1, w.labels->text());
  });
  // A file, a folder or several files, as the format's key holds.
  auto browse = [this, &w, writePath, split](std::size_t i) {
    const auto* field = fieldOf(w.format->currentData().toString(), i);
    if (!field) return;
    const QString start = m_document->baseDir();
    const QString title = tr("The %1 data: %2").arg(split, QString::fromStdString(field->help));
    QString path;
    switch (field->kind) {
      case data::SourceField::Kind::Folder:
        path = QFileDialog::getExistingDirectory(this, title, start);
        break;
      case data::SourceField::Kind::FileList:
        path = QFileDialog::getOpenFileNames(this, title, start).join(QStringLiteral(", "));
        break;
      case data::SourceField::Kind::File:
        path = QFileDialog::getOpenFileName(this, title, start);
        break;
    }
    if (!path.isEmpty()) writePath(i, path);
  };
  connect(pick, &QToolButton::clicked, this, [browse] { browse(0); });
  connect(pickLabels, &QToolButton::clicked, this, [browse] { browse(1); });
}

void DataPage::setSource(const QString& split, const QString& format, const QString& key,
                         const QString& path) {
  Json data = m_document->project().data;
  Json& src = data[split.toStdString()];
  if (!src.is_object() || src.value("format", std::string()) != format.toStdString())
    src = Json{{"format", format.toStdString()}};
  src[key.toStdString()] = path.toStdString();
  writeData(data, tr("%1 source").arg(split));
}

void DataPage::writeData(const Json& data, const QString& text, const QString& mergeKey) {
  m_document->editSection(QStringLiteral("data"), data, text, mergeKey);
}

void DataPage::refreshForms() {
  m_refreshing = true;
  const Json& d = m_document->project().data;
  for (const auto& [split, w] : {std::pair<const char*, SourceWidgets*>{"train", &m_train},
                                 std::pair<const char*, SourceWidgets*>{"test", &m_test}}) {
    const Json src = d.is_object() && d.contains(split) ? d[split] : Json();
    const QString format = text(src, "format");
    const QSignalBlocker b1(w->format), b2(w->path), b3(w->labels);
    w->format->setCurrentIndex(std::max(0, w->format->findData(format)));
    // The format's first key on the first row, its second (IDX's labels) on the second.
    const auto* first = fieldOf(format, 0);
    const auto* second = fieldOf(format, 1);
    w->path->setText(fieldText(src, first));
    w->labels->setText(fieldText(src, second));
    w->pathLabel->setText(first ? QString::fromStdString(first->key) : tr("path"));
    w->path->setToolTip(first ? QString::fromStdString(first->help) : QString());
    if (second) {
      w->labelsLabel->setText(QString::fromStdString(second->key));
      w->labels->setToolTip(QString::fromStdString(second->help));
    }
    w->labelsRow->setVisible(second != nullptr);
    w->labelsLabel->setVisible(second != nullptr);
    w->path->setEnabled(first != nullptr);
  }
  const Json v = d.is_object() && d.contains("validation") ? d["validation"] : Json::object();
  {
    const QSignalBlocker b1(m_fraction), b2(m_splitSeed), b3(m_stratified);
    // Set only when it differs: the edit being typed comes back here, and setting the same
    // value rewrites the text under the cursor ("0.2" became "0.200", so typing "0.25" gave
    // 0.2).
    const double fraction = v.is_object() && v.contains("fraction") && v["fraction"].is_number()
                                ? v["fraction"].get<double>()
                                : 0.0;
    if (m_fraction->value() != fraction) m_fraction->setValue(fraction);
    const int seed = v.is_object() && v.contains("seed") && v["seed"].is_number_integer()
                         ? v["seed"].get<int>()
                         : 0;
    if (m_splitSeed->value() != seed) m_splitSeed->setValue(seed);
    m_stratified->setChecked(v.is_object() && v.contains("stratified") &&
                                     v["stratified"].is_boolean()
                                 ? v["stratified"].get<bool>()
                                 : true);
  }
  {
    const QSignalBlocker b(m_normalize);
    const Json n = d.is_object() && d.contains("normalize") ? d["normalize"] : Json("auto");
    m_normalize->setCurrentText(n.is_object()
                                    ? QStringLiteral("explicit")
                                    : (n.is_string() ? QString::fromStdString(n.get<std::string>())
                                                     : QStringLiteral("auto")));
    m_normalize->setToolTip(n.is_object() ? QString::fromStdString(n.dump())
                                          : m_normalize->toolTip());
    const auto numbers = [](const Json& v) {
      QStringList out;
      for (const auto& x : v.is_array() ? v : Json::array({v}))
        out << (x.is_number() ? QString::number(x.get<double>(), 'g', 6)
                              : QString::fromStdString(x.dump()));
      return out.join(QStringLiteral(", "));
    };
    const bool explicitFigures = n.is_object();
    m_prepForm->setRowVisible(m_mean, explicitFigures);
    m_prepForm->setRowVisible(m_std, explicitFigures);
    for (auto [field, key] : {std::pair{m_mean, "mean"}, std::pair{m_std, "std"}}) {
      if (explicitFigures && n.contains(key) && !field->hasFocus()) field->setText(numbers(n[key]));
      field->setStyleSheet(QString());
    }
  }
  {
    const QSignalBlocker b(m_fit);
    m_fit->setCurrentText(d.is_object() && d.contains("fit") && d["fit"].is_string()
                              ? QString::fromStdString(d["fit"].get<std::string>())
                              : QStringLiteral("resize"));
  }
  const auto& in = m_document->project().model.input;
  m_input->setText(tr("%1 channel(s), %2 x %3 px").arg(in.channels).arg(in.height).arg(in.width));
  m_scanButton->setEnabled(!m_document->filePath().isEmpty() && !m_scanJob->isRunning());
  m_classEditor->refresh();
  m_refreshing = false;
}

void DataPage::editExplicitNormalization() {
  if (m_refreshing) return;
  const auto channels = m_document->project().model.input.channels;
  QString why;
  const auto parse = [&](QLineEdit* field, bool positive) {
    std::vector<double> out;
    for (const auto& part :
         field->text().split(QRegularExpression(QStringLiteral("[,;\\s]+")), Qt::SkipEmptyParts)) {
      bool ok = false;
      const double v = part.toDouble(&ok);
      if (!ok || !std::isfinite(v)) {
        why = tr("\"%1\" is not a number").arg(part);
        return out;
      }
      if (positive && v <= 0) {
        why = tr("a std must be above 0, got %1").arg(part);
        return out;
      }
      out.push_back(v);
    }
    if (why.isEmpty() && out.size() != 1 && std::int64_t(out.size()) != channels)
      why = tr("one number, or %1 (one per channel of the model input); got %2")
                .arg(channels)
                .arg(out.size());
    return out;
  };
  const auto mean = parse(m_mean, false);
  const QString meanWhy = why;
  why.clear();
  const auto stdev = parse(m_std, true);
  const QString stdWhy = why;
  for (auto [field, reason] : {std::pair{m_mean, meanWhy}, std::pair{m_std, stdWhy}}) {
    field->setStyleSheet(
        reason.isEmpty() ? QString() : QStringLiteral("QLineEdit { border: 1px solid #d33; }"));
    field->setToolTip(reason.isEmpty() ? normalizationHelp() : reason);
  }
  if (!meanWhy.isEmpty() || !stdWhy.isEmpty()) return;
  Json data = m_document->project().data;
  const Json figures{{"mean", mean}, {"std", stdev}};
  if (data.is_object() && data.value("normalize", Json()) == figures) return;
  data["normalize"] = figures;
  writeData(data, tr("Set the normalization"), QStringLiteral("normalize:explicit"));
}

bool DataPage::isScanning() const {
  return m_scanJob->isRunning();
}

void DataPage::cancelScan() {
  m_scanJob->requestStop();  // the scan ends early and reports itself cancelled
}

void DataPage::scan() {
  if (m_scanJob->isRunning() || m_document->filePath().isEmpty()) return;
  m_scanButton->setEnabled(false);
  m_cancelButton->setEnabled(true);
  m_progress->setValue(0);
  m_summary->setText(tr("Scanning..."));
  std::optional<data::DataConfig> config;  // the data section as the document read it
  try {
    config = resolve::dataConfig(m_document->resolved());
  } catch (const Error& e) {
    DataScan failed;
    failed.error = QString::fromStdString(e.what());
    scanDone(std::move(failed));
    return;
  }
  m_scanJob->start(
      [project = m_document->project(), registries = m_document->registries(),
       config = *config](const JobContext& job) {
        return scanProjectData(project, config, registries->transforms,
                               registries->tasks.statisticsOf(project.task),
                               [&job](qint64 done, qint64 total) {
                                 job.progress(done, total);
                                 return !job.cancelled();
                               });
      },
      [this](DataScan scan) { scanDone(std::move(scan)); },
      [this](const QString& error) {
        DataScan failed;
        failed.error = error;
        scanDone(std::move(failed));
      });
}

void DataPage::scanDone(DataScan scan) {
  m_cancelButton->setEnabled(false);
  m_scanButton->setEnabled(true);
  m_scan = std::move(scan);
  showScan();
  Q_EMIT scanned();
  // Class list edits made while it read the data (it read the list as it was then).
  QTimer::singleShot(0, this, &DataPage::followClassNames);
}

void DataPage::showScan() {
  const auto& s = m_scan;
  m_skipped->clear();
  m_grid->clear();
  m_histogram->clearPlottables();
  m_histogram->clearGraphs();
  m_cooccurrence->clear();
  m_imbalance->clear();
  m_classWeights->hide();
  if (!s.ok) {
    showUnreadScan();
    return;
  }
  m_classEditor->setScanned(s.classes);
  m_summary->setText(dataScanSummary(s));
  for (const auto& item : s.skipped)
    m_skipped->addItem(item);
  // The task's view of its targets: its chart, its table in a tab of its own when it has one.
  const bool view = s.targets && !s.targets->view.empty();
  if (view) fillSummaryTable(m_cooccurrence, s.targets->view);
  m_tabs->setTabVisible(m_tabs->indexOf(m_cooccurrence), view);
  if (view)
    m_tabs->setTabText(m_tabs->indexOf(m_cooccurrence),
                       QString::fromStdString(s.targets->viewTitle));
  if (!s.oneClassPerSample) {
    // Targets that are not one class per sample: their chart, the samples with captions.
    if (s.targets) {
      drawSummaryChart(m_histogram, s.targets->chart);
      m_tabs->setTabText(m_tabs->indexOf(m_histogram),
                         QString::fromStdString(s.targets->chart.title));
    }
    m_classFilter->hide();
    addCaptionedDataSamples(m_grid, s);
    return;
  }
  m_tabs->setTabText(m_tabs->indexOf(m_histogram), tr("Class histogram"));
  m_classFilter->show();
  // Histogram: train and validation bars per class.
  drawDataClassHistogram(m_histogram, s);
  showImbalance();
  {
    const QSignalBlocker b(m_classFilter);
    m_classFilter->clear();
    m_classFilter->addItem(tr("All classes"));
    m_classFilter->addItems(s.classes);
  }
  for (int i = 0; i < s.samples.size(); ++i) {
    auto* item = new QListWidgetItem(QIcon(QPixmap::fromImage(s.samples[i])),
                                     s.classes.value(s.sampleLabels[i]), m_grid);
    item->setData(Qt::UserRole, s.sampleLabels[i]);
  }
}

void DataPage::showUnreadScan() {
  const auto& s = m_scan;
  m_tabs->setTabVisible(m_tabs->indexOf(m_cooccurrence), false);
  m_tabs->setTabText(m_tabs->indexOf(m_histogram), tr("Class histogram"));
  m_classFilter->show();
  {
    const QSignalBlocker b(m_classFilter);
    m_classFilter->clear();
    m_classFilter->addItem(tr("All classes"));
  }
  m_summary->setText(s.cancelled ? tr("Scan cancelled.")
                     : s.error.isEmpty()
                         ? tr("Scan the data to see its splits, classes and images.")
                         : tr("<b>The data cannot be read:</b> %1").arg(s.error.toHtmlEscaped()));
  m_histogram->replot();
}

void DataPage::showImbalance() {
  const auto& s = m_scan;
  // Imbalance: the largest class more than 3x the smallest.
  qint64 most = 0, least = std::numeric_limits<qint64>::max();
  for (auto v : s.trainCounts) {
    most = std::max(most, v);
    least = std::min(least, v);
  }
  if (!s.trainCounts.isEmpty() && most > 3 * std::max<qint64>(least, 1)) {
    m_imbalance->setText(tr("The classes are imbalanced: the largest has %1 training images, the "
                            "smallest %2. Class weights (auto, from the counts) even out the loss.")
                             .arg(most)
                             .arg(least));
    const Json& train = m_document->project().train;
    if (!(train.is_object() && train.contains("class_weights"))) m_classWeights->show();
  }
}

void DataPage::filterSamples(int label) {
  for (int i = 0; i < m_grid->count(); ++i)
    m_grid->item(i)->setHidden(label >= 0 && m_grid->item(i)->data(Qt::UserRole).toInt() != label);
  const QSignalBlocker b(m_classFilter);
  m_classFilter->setCurrentIndex(label + 1);
}

}  // namespace netsmith::ui
