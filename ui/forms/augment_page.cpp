#include "forms/augment_page.h"

#include "experiment/sweep_spec.h"

#include <QApplication>
#include <QEvent>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QPainter>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QSplitter>
#include <QToolButton>
#include <QVBoxLayout>
#include <atomic>
#include <map>
#include <mutex>

#include "augment/transform.h"
#include "data/preview_grid.h"
#include "data/project_data.h"
#include "resolve/open_data.h"
#include "resolve/resolved_project.h"
#include "session/project_document.h"
#include "util/background_job.h"
#include "util/image_convert.h"
#include "util/schema_form.h"

namespace netsmith::ui {

namespace {

QString entryName(const Json& entry) {
  return entry.is_object() && entry.contains("transform") && entry["transform"].is_string()
             ? QString::fromStdString(entry["transform"].get<std::string>())
             : QStringLiteral("?");
}

bool entryEnabled(const Json& entry) {
  return !(entry.is_object() && entry.contains("enabled") && entry["enabled"].is_boolean() &&
           !entry["enabled"].get<bool>());
}

struct PreviewImage {
  QImage image;
  QString info;
};

}  // namespace

/// The opened data behind the preview, kept while the project's data section and model input
/// are unchanged: an edit of a transform rebuilds only the pipeline, it does not read and
/// decompress the data set again. Previews run one at a time (the lock); a superseded one's
/// result is dropped by the job.
struct AugmentPreviewSource {
  std::mutex lock;
  std::string key;  ///< the data section, the folder and the model input it was opened for
  std::unique_ptr<data::ProjectData> data;
  std::atomic<int> opens{0};
};

namespace {

/// The preview grid: `samples` training images with `draws` draws of the pipeline each, then
/// the batch mixes of a pair. Runs on a worker thread.
PreviewImage drawPreview(AugmentPreviewSource& source, const Registries& registries,
                         const project::Project& project, const data::DataConfig& config,
                         const std::string& baseDir, int samples, int draws, std::uint64_t seed,
                         const data::PreviewColors& colors) {
  PreviewImage out;
  const std::lock_guard<std::mutex> hold(source.lock);
  const auto& registry = registries.transforms;
  const std::string key = project.data.dump() + '\n' + baseDir + '\n' +
                          std::to_string(project.model.input.channels) + 'x' +
                          std::to_string(project.model.input.height) + 'x' +
                          std::to_string(project.model.input.width);
  if (!source.data || source.key != key) {
    source.data.reset();
    source.key.clear();
    source.data = data::openProjectData(project, config, registry, data::userCacheDir());
    if (!source.data) return out;
    source.key = key;
    ++source.opens;
  } else {
    data::rebuildPipeline(*source.data, project, registry);
  }
  const data::ProjectData* pd = source.data.get();
  const auto rows = data::makePreview(*pd, samples, draws, seed);
  out.image = toQImage(data::renderPreviewGrid(rows, 96, colors), /*bgr=*/true);
  out.info = QObject::tr("%1 images x %2 draws, seed %3").arg(rows.size()).arg(draws).arg(seed);
  // Batch mixes on a pair: both images and the mix, with the mixed label's weights.
  for (const auto& m : data::makeMixPreview(*pd, seed)) {
    data::PreviewRow row;
    row.caption = m.mix;
    row.original = m.first;
    row.draws = {m.second, m.mixed};
    const QImage strip = toQImage(data::renderPreviewGrid({row}, 96, colors), /*bgr=*/true);
    QImage joined(std::max(out.image.width(), strip.width()), out.image.height() + strip.height(),
                  QImage::Format_RGB888);
    joined.fill(
        QColor(int(colors.background[2]), int(colors.background[1]), int(colors.background[0])));
    QPainter painter(&joined);
    painter.drawImage(0, 0, out.image);
    painter.drawImage(0, out.image.height(), strip);
    painter.end();
    out.image = joined;
    out.info += QObject::tr("; %1 of a pair: %2 x %3 + %4 x %5")
                    .arg(QString::fromStdString(m.mix))
                    .arg(m.firstWeight, 0, 'f', 2)
                    .arg(QString::fromStdString(m.firstClass))
                    .arg(1 - m.firstWeight, 0, 'f', 2)
                    .arg(QString::fromStdString(m.secondClass));
  }
  return out;
}

/// The preview's background and captions in the theme's colours (BGR), so that a dark theme
/// gets a dark grid.
data::PreviewColors themedPreviewColors() {
  const QPalette pal = QApplication::palette();
  const QColor base = pal.color(QPalette::Base), text = pal.color(QPalette::Text);
  data::PreviewColors c;
  c.background = cv::Scalar(base.blue(), base.green(), base.red());
  c.text = cv::Scalar(text.blue(), text.green(), text.red());
  return c;
}

}  // namespace

AugmentPage::AugmentPage(ProjectDocument* document, QWidget* parent)
    : QWidget(parent),
      m_document(document),
      m_list(new QListWidget(this)),
      m_form(new SchemaForm(this)),
      m_formTitle(new QLabel(this)),
      m_previewLabel(new QLabel(this)),
      m_previewInfo(new QLabel(this)),
      m_seed(new QSpinBox(this)),
      m_samples(new QSpinBox(this)),
      m_draws(new QSpinBox(this)),
      m_previewJob(new BackgroundJob(this)),
      m_previewSource(std::make_shared<AugmentPreviewSource>()) {
  setObjectName(QStringLiteral("augmentPage"));
  m_list->setObjectName(QStringLiteral("transformList"));
  m_list->setDragDropMode(QAbstractItemView::InternalMove);
  m_list->setDefaultDropAction(Qt::MoveAction);
  m_list->setToolTip(
      tr("Applied in order to every training sample; drag to reorder, untick to "
         "disable"));
  m_form->setObjectName(QStringLiteral("transformForm"));
  m_formTitle->setWordWrap(true);
  m_previewLabel->setObjectName(QStringLiteral("augmentPreview"));
  m_previewInfo->setObjectName(QStringLiteral("previewInfo"));
  m_previewInfo->setWordWrap(true);
  m_previewLabel->setAlignment(Qt::AlignLeft | Qt::AlignTop);
  m_seed->setObjectName(QStringLiteral("previewSeed"));
  m_seed->setRange(0, 1 << 30);
  m_seed->setPrefix(tr("seed "));
  m_samples->setRange(1, 16);
  m_samples->setValue(6);
  m_samples->setPrefix(tr("images "));
  m_draws->setRange(1, 12);
  m_draws->setValue(6);
  m_draws->setPrefix(tr("draws "));

  QToolButton* add = buildAddButton();
  auto* remove = new QPushButton(tr("Remove"), this);
  auto* up = new QPushButton(tr("Up"), this);
  auto* down = new QPushButton(tr("Down"), this);
  connectListButtons(remove, up, down);
  auto* reroll = new QPushButton(tr("Re-roll"), this);
  reroll->setObjectName(QStringLiteral("previewReroll"));
  connect(reroll, &QPushButton::clicked, this, &AugmentPage::reroll);

  QWidget* left = buildListPanel(add, remove, up, down);
  QWidget* right = buildPreviewPanel(reroll);
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(left);
  split->addWidget(right);
  split->setSizes({380, 800});
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(split);

  connectForm();
  connectList();
  connectPreviewUpdates();
}

QToolButton* AugmentPage::buildAddButton() {
  // The add menu, grouped like the registry.
  auto* add = new QToolButton(this);
  add->setText(tr("Add"));
  add->setPopupMode(QToolButton::InstantPopup);
  auto* menu = new QMenu(add);
  const auto& registry = m_document->transforms();
  std::map<std::string, QMenu*> groups;
  for (const auto& name : registry.names()) {
    const auto* def = registry.find(name);
    QMenu*& g = groups[def->group];
    if (!g) g = menu->addMenu(QString::fromStdString(def->group));
    QAction* a = g->addAction(QString::fromStdString(name), this,
                              [this, n = QString::fromStdString(name)] { addTransform(n); });
    a->setToolTip(QString::fromStdString(def->help));
  }
  add->setMenu(menu);
  return add;
}

void AugmentPage::connectListButtons(QPushButton* remove, QPushButton* up, QPushButton* down) {
  connect(remove, &QPushButton::clicked, this, [this] { removeRow(m_list->currentRow()); });
  connect(up, &QPushButton::clicked, this, [this] {
    const int r = m_list->currentRow();
    if (r > 0) moveRow(r, r - 1);
  });
  connect(down, &QPushButton::clicked, this, [this] {
    const int r = m_list->currentRow();
    if (r >= 0 && r + 1 < m_list->count()) moveRow(r, r + 1);
  });
}

QWidget* AugmentPage::buildListPanel(QToolButton* add, QPushButton* remove, QPushButton* up,
                                     QPushButton* down) {
  auto* left = new QWidget(this);
  auto* ll = new QVBoxLayout(left);
  auto* buttons = new QHBoxLayout;
  for (QWidget* w : {static_cast<QWidget*>(add), static_cast<QWidget*>(remove),
                     static_cast<QWidget*>(up), static_cast<QWidget*>(down)})
    buttons->addWidget(w);
  ll->addLayout(buttons);
  ll->addWidget(m_list, 2);
  ll->addWidget(m_formTitle);
  ll->addWidget(m_form, 3);
  return left;
}

QWidget* AugmentPage::buildPreviewPanel(QPushButton* reroll) {
  auto* right = new QWidget(this);
  auto* rl = new QVBoxLayout(right);
  auto* controls = new QHBoxLayout;
  controls->addWidget(new QLabel(tr("<b>Preview</b>"), right));
  controls->addWidget(m_samples);
  controls->addWidget(m_draws);
  controls->addWidget(m_seed);
  controls->addWidget(reroll);
  controls->addStretch(1);
  rl->addLayout(controls);
  auto* scroll = new QScrollArea(right);
  scroll->setWidget(m_previewLabel);
  scroll->setWidgetResizable(true);
  rl->addWidget(scroll, 1);
  rl->addWidget(m_previewInfo);
  return right;
}

void AugmentPage::connectForm() {
  m_form->setOnSweep([this](const QString& key, const schema::ParamSpec& spec, const Json& v) {
    const QString name = m_formTitle->property("transform").toString();
    if (name.isEmpty()) return;
    m_document->addSweepParam(experiment::suggestSweepParam(
        "augment[" + name.toStdString() + "]." + key.toStdString(), spec, v));
  });
  m_form->setOnChange([this](const QString& key, const Json& v) {
    const int row = m_formRow;
    Json a = augment();
    if (row < 0 || row >= int(a.size())) return;
    if (v.is_null())
      a[std::size_t(row)].erase(key.toStdString());
    else
      a[std::size_t(row)][key.toStdString()] = v;
    write(a, tr("Set %1 %2").arg(entryName(a[std::size_t(row)]), key),
          QStringLiteral("augment:%1:%2").arg(row).arg(key));
  });
}

void AugmentPage::connectList() {
  // Not while refresh() rebuilds the list: its clear() selects no row, and a form rebuilt then
  // would delete the field whose edit started the refresh, inside that field's own event.
  connect(m_list, &QListWidget::currentRowChanged, this, [this] {
    if (!m_refreshing) showForm();
  });
  connect(m_list, &QListWidget::itemChanged, this, [this](QListWidgetItem* item) {
    if (m_refreshing) return;
    setEnabled(m_list->row(item), item->checkState() == Qt::Checked);
  });
  connect(m_list->model(), &QAbstractItemModel::rowsMoved, this,
          [this](const QModelIndex&, int start, int, const QModelIndex&, int destination) {
            if (m_refreshing) return;
            // The view moved the item; write the same order to the project.
            const int to = destination > start ? destination - 1 : destination;
            QMetaObject::invokeMethod(
                this, [this, start, to] { moveRow(start, to); }, Qt::QueuedConnection);
          });
}

void AugmentPage::connectPreviewUpdates() {
  connect(m_seed, qOverload<int>(&QSpinBox::valueChanged), this, &AugmentPage::updatePreview);
  connect(m_samples, qOverload<int>(&QSpinBox::valueChanged), this, &AugmentPage::updatePreview);
  connect(m_draws, qOverload<int>(&QSpinBox::valueChanged), this, &AugmentPage::updatePreview);
  connect(m_document, &ProjectDocument::loaded, this, [this] {
    refresh();
    updatePreview();
  });
  connect(m_document, &ProjectDocument::sectionChanged, this, [this](const QString& section) {
    refresh();
    if (section != QLatin1String("train")) updatePreview();
  });
}

Json AugmentPage::augment() const {
  const Json& a = m_document->project().augment;
  return a.is_array() ? a : Json::array();
}

void AugmentPage::write(const Json& augment, const QString& text, const QString& mergeKey) {
  m_document->editSection(QStringLiteral("augment"), augment, text, mergeKey);
}

void AugmentPage::refresh() {
  const Json a = augment();
  const int current = m_list->currentRow();
  m_refreshing = true;
  m_list->clear();
  for (const auto& entry : a) {
    auto* item = new QListWidgetItem(entryName(entry), m_list);
    item->setFlags(item->flags() | Qt::ItemIsUserCheckable | Qt::ItemIsDragEnabled);
    item->setCheckState(entryEnabled(entry) ? Qt::Checked : Qt::Unchecked);
    if (entry.is_object() && entry.contains("p"))
      item->setText(item->text() +
                    QStringLiteral("  (p=%1)").arg(QString::fromStdString(entry["p"].dump())));
  }
  m_list->setCurrentRow(std::min(std::max(current, 0), m_list->count() - 1));
  m_refreshing = false;
  showForm();
}

void AugmentPage::showForm() {
  const int row = m_list->currentRow();
  const Json a = augment();
  if (row < 0 || row >= int(a.size())) {
    m_formRow = -1;
    m_form->setSchema({}, Json::object());
    m_formTitle->setText(a.empty() ? tr("No augmentation: add one with Add.")
                                   : tr("Select a transform to edit it."));
    return;
  }
  const Json& entry = a[std::size_t(row)];
  const auto& registry = m_document->transforms();
  const auto* def = registry.find(entryName(entry).toStdString());
  if (!def) {
    m_formRow = -1;
    m_form->setSchema({}, Json::object());
    m_formTitle->setText(tr("Unknown transform \"%1\"").arg(entryName(entry)));
    return;
  }
  if (m_formRow == row && !m_form->isEmpty() &&
      m_formTitle->property("transform") == entryName(entry)) {
    m_form->setValues(entry);  // same transform: keep the widgets (and focus)
  } else {
    schema::ParamSchema schema = {
        schema::ParamSpec::real("p", def->defaultProbability, "probability of applying it")
            .atLeast(0)
            .atMost(1)};
    for (const auto& s : def->schema)
      schema.push_back(s);
    m_form->setSchema(schema, entry);
    m_formRow = row;
    m_formTitle->setProperty("transform", entryName(entry));
  }
  m_formTitle->setText(
      QStringLiteral("<b>%1</b> &mdash; %2")
          .arg(entryName(entry), QString::fromStdString(def->help).toHtmlEscaped()));
}

void AugmentPage::selectRow(int row) {
  m_list->setCurrentRow(row);
}

void AugmentPage::addTransform(const QString& name) {
  Json a = augment();
  a.push_back(Json{{"transform", name.toStdString()}});
  write(a, tr("Add %1").arg(name));
  selectRow(int(a.size()) - 1);
}

void AugmentPage::removeRow(int row) {
  Json a = augment();
  if (row < 0 || row >= int(a.size())) return;
  const QString name = entryName(a[std::size_t(row)]);
  a.erase(a.begin() + row);
  write(a, tr("Remove %1").arg(name));
}

void AugmentPage::moveRow(int from, int to) {
  Json a = augment();
  if (from < 0 || from >= int(a.size()) || to < 0 || to >= int(a.size()) || from == to) {
    refresh();
    return;
  }
  Json item = a[std::size_t(from)];
  a.erase(a.begin() + from);
  a.insert(a.begin() + to, item);
  write(a, tr("Move %1").arg(entryName(item)));
  selectRow(to);
}

void AugmentPage::setEnabled(int row, bool enabled) {
  Json a = augment();
  if (row < 0 || row >= int(a.size())) return;
  if (enabled)
    a[std::size_t(row)].erase("enabled");
  else
    a[std::size_t(row)]["enabled"] = false;
  write(a, enabled ? tr("Enable %1").arg(entryName(a[std::size_t(row)]))
                   : tr("Disable %1").arg(entryName(a[std::size_t(row)])));
}

void AugmentPage::reroll() {
  m_seed->setValue(m_seed->value() + 1);
}

void AugmentPage::updatePreview() {
  if (m_document->filePath().isEmpty()) return;
  m_previewInfo->setText(tr("Drawing..."));
  std::optional<data::DataConfig> config;  // the data section as the document read it
  try {
    config = resolve::dataConfig(m_document->resolved());
  } catch (const Error& e) {
    m_previewJob->cancel();  // a preview of the data before is not this one
    showPreview({}, {}, QString::fromStdString(e.what()));
    return;
  }
  // A newer preview supersedes a running one: its result is dropped.
  m_previewJob->start(
      [source = m_previewSource, registries = m_document->registries(),
       project = m_document->project(), config = *config,
       baseDir = m_document->baseDir().toStdString(), samples = m_samples->value(),
       draws = m_draws->value(), seed = std::uint64_t(m_seed->value()),
       colors = themedPreviewColors()](const JobContext&) {
        return drawPreview(*source, *registries, project, config, baseDir, samples, draws, seed,
                           colors);
      },
      [this](const PreviewImage& preview) { showPreview(preview.image, preview.info, {}); },
      [this](const QString& error) { showPreview({}, {}, error); });
}

int AugmentPage::previewDataOpens() const {
  return m_previewSource->opens.load();
}

void AugmentPage::changeEvent(QEvent* event) {
  if (event->type() == QEvent::PaletteChange) updatePreview();  // the theme's colours
  QWidget::changeEvent(event);
}

void AugmentPage::showPreview(const QImage& image, const QString& info, const QString& error) {
  m_previewError = error;
  if (error.isEmpty()) {
    m_preview = image;
    m_previewLabel->setPixmap(QPixmap::fromImage(image));
    m_previewInfo->setText(info);
  } else {
    m_previewInfo->setText(tr("No preview: %1").arg(error));
  }
  ++m_previews;
  Q_EMIT previewUpdated();
}

}  // namespace netsmith::ui
