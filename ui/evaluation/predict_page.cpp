#include "evaluation/predict_page.h"

#include <QApplication>
#include <QClipboard>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QMimeData>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QResizeEvent>
#include <QShortcut>
#include <QShowEvent>
#include <QSlider>
#include <QSplitter>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>
#include <filesystem>
#include <map>
#include <numeric>
#include <opencv2/imgproc.hpp>
#include <set>

#include "data/dataset_source.h"
#include "data/preview_grid.h"
#include "explain/grad_cam.h"
#include "util/background_job.h"
#include "util/image_convert.h"

namespace netsmith::ui {

namespace {

constexpr int kPictureSide = 400;  ///< the shown picture's longer side, in pixels
constexpr int kBars = 5;           ///< class probabilities shown as bars: the highest ones

QString percent(double p) {
  return QStringLiteral("%1%").arg(100.0 * p, 0, 'f', 1);
}

std::string canonical(const std::string& path) {
  std::error_code ec;
  return std::filesystem::weakly_canonical(path, ec).string();
}

}  // namespace

PredictPage::PredictPage(RegistriesPtr registries, QWidget* parent)
    : QWidget(parent),
      m_registries(std::move(registries)),
      m_modelLabel(new QLabel(this)),
      m_status(new QLabel(this)),
      m_list(new QListWidget(this)),
      m_picture(new QLabel(this)),
      m_caption(new QLabel(this)),
      m_barsLayout(nullptr),
      m_bars(new QWidget(this)),
      m_gradCam(new QPushButton(tr("Grad-CAM"), this)),
      m_confidence(new QSlider(Qt::Horizontal, this)),
      m_opacity(new QSlider(Qt::Horizontal, this)),
      m_confidenceLabel(new QLabel(this)),
      m_opacityLabel(new QLabel(this)),
      m_progress(new QProgressBar(this)),
      m_job(new BackgroundJob(this)) {
  setAcceptDrops(true);
  m_status->setObjectName(QStringLiteral("predictStatus"));
  m_status->setWordWrap(true);
  m_progress->setObjectName(QStringLiteral("predictProgress"));
  m_progress->setVisible(false);
  m_list->setObjectName(QStringLiteral("predictImages"));
  m_list->setIconSize(QSize(48, 48));
  m_list->setMinimumWidth(220);
  connect(m_list, &QListWidget::currentRowChanged, this, [this](int) { showSelected(); });
  auto* split = new QSplitter(Qt::Horizontal, this);
  split->addWidget(m_list);
  split->addWidget(shownPanel());
  split->setStretchFactor(1, 1);
  split->setSizes({300, 900});  // room for the captions beside the thumbnails

  auto* layout = new QVBoxLayout(this);
  layout->addLayout(modelRow());
  layout->addWidget(m_status);
  layout->addWidget(m_progress);
  layout->addWidget(split, 1);

  auto* pasteKey = new QShortcut(QKeySequence::Paste, this, this, &PredictPage::paste);
  pasteKey->setContext(Qt::WidgetWithChildrenShortcut);
  connect(m_job, &BackgroundJob::progress, this, [this](qint64 done, qint64 total) {
    m_progress->setRange(0, int(total));
    m_progress->setValue(int(done));
  });
  setModel({});
}

PredictPage::~PredictPage() = default;

QLayout* PredictPage::modelRow() {
  m_modelLabel->setObjectName(QStringLiteral("predictModel"));
  m_modelLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* openModel = new QPushButton(tr("Open model..."), this);
  openModel->setObjectName(QStringLiteral("predictOpenModel"));
  openModel->setToolTip(
      tr("Predict with another checkpoint or an exported ONNX file (the "
         "current run's checkpoint by default)"));
  connect(openModel, &QPushButton::clicked, this, &PredictPage::openModel);
  auto* add = new QPushButton(tr("Add images..."), this);
  add->setObjectName(QStringLiteral("predictAddImages"));
  add->setToolTip(tr("Images to predict on; folders can be dropped on the page or pasted"));
  connect(add, &QPushButton::clicked, this, &PredictPage::chooseImages);
  auto* clear = new QPushButton(tr("Clear"), this);
  clear->setObjectName(QStringLiteral("predictClear"));
  connect(clear, &QPushButton::clicked, this, &PredictPage::clearImages);
  auto* row = new QHBoxLayout;
  row->addWidget(new QLabel(tr("Model:"), this));
  row->addWidget(m_modelLabel, 1);
  row->addWidget(openModel);
  row->addWidget(add);
  row->addWidget(clear);
  return row;
}

QWidget* PredictPage::shownPanel() {
  m_picture->setObjectName(QStringLiteral("predictPicture"));
  m_picture->setAlignment(Qt::AlignCenter);
  // Drawn at kPictureSide, shown fitted to the room the page has (a pixmap's own size would
  // otherwise set the window's smallest size).
  m_picture->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Ignored);
  m_picture->setMinimumSize(160, 160);
  m_caption->setObjectName(QStringLiteral("predictCaption"));
  m_caption->setWordWrap(true);
  m_caption->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_bars->setObjectName(QStringLiteral("predictBars"));
  m_barsLayout = new QVBoxLayout(m_bars);
  m_barsLayout->setContentsMargins(0, 0, 0, 0);
  auto* shown = new QWidget(this);
  auto* column = new QVBoxLayout(shown);
  column->addWidget(m_picture, 1);
  column->addWidget(m_caption);
  column->addWidget(m_bars);
  column->addLayout(controlsRow());
  return shown;
}

QLayout* PredictPage::controlsRow() {
  m_gradCam->setObjectName(QStringLiteral("predictGradCam"));
  m_gradCam->setCheckable(true);
  m_gradCam->setToolTip(
      tr("Where in the image the predicted class's score comes from (Grad-CAM "
         "at the last convolution, as netsmith-cli eval --gradcam draws it)"));
  connect(m_gradCam, &QPushButton::toggled, this, &PredictPage::showGradCam);
  m_confidence->setObjectName(QStringLiteral("predictConfidence"));
  m_confidence->setRange(0, 100);
  m_confidence->setValue(25);
  m_confidence->setToolTip(tr("Boxes scoring at least this much are drawn"));
  connect(m_confidence, &QSlider::valueChanged, this, [this](int) { showSelected(); });
  m_opacity->setObjectName(QStringLiteral("predictOpacity"));
  m_opacity->setRange(0, 100);
  m_opacity->setValue(55);
  m_opacity->setToolTip(tr("How strongly the predicted mask covers the image"));
  connect(m_opacity, &QSlider::valueChanged, this, [this](int) { showSelected(); });
  auto* row = new QHBoxLayout;
  row->addWidget(m_gradCam);
  row->addWidget(m_confidenceLabel);
  row->addWidget(m_confidence, 1);
  row->addWidget(m_opacityLabel);
  row->addWidget(m_opacity, 1);
  row->addStretch();
  return row;
}

void PredictPage::setModel(const QString& path) {
  m_job->cancel();
  m_progress->setVisible(false);
  m_predictor.reset();
  m_modelPath = path;
  std::fill(m_done.begin(), m_done.end(), false);
  for (auto& p : m_images)
    p = eval::PredictedImage{p.path, {}, {}, {}};
  m_loadFailed = false;
  m_modelLabel->setText(path.isEmpty() ? tr("none: train the project, or open a checkpoint")
                                       : QFileInfo(path).fileName() + QStringLiteral("  (") +
                                             QFileInfo(path).absolutePath() + QStringLiteral(")"));
  m_status->setText(tr("Drop images or folders here, paste them (Ctrl+V) or add them."));
  m_gradCam->setVisible(false);
  // Loaded when the page is seen or given images: a run's checkpoints change often.
  if (isVisible()) loadModel();
  showSelected();
}

void PredictPage::loadModel() {
  if (m_predictor || m_modelPath.isEmpty() || m_loadFailed) return;
  try {
    m_predictor = std::make_shared<const eval::Predictor>(m_registries, m_modelPath.toStdString());
  } catch (const std::exception& e) {
    m_loadFailed = true;
    m_status->setText(tr("The model cannot be used: %1").arg(QString::fromUtf8(e.what())));
  }
  m_gradCam->setVisible(m_predictor && m_predictor->explainsClasses());
  // An exported file says what runs it (ONNX Runtime); a checkpoint runs in LibTorch.
  if (m_predictor && m_predictor->runtime() != "LibTorch")
    m_modelLabel->setText(m_modelLabel->text() + QStringLiteral("  ") +
                          tr("run in %1").arg(QString::fromStdString(m_predictor->runtime())));
  predictPending();
  showSelected();
}

void PredictPage::showEvent(QShowEvent* event) {
  QWidget::showEvent(event);
  loadModel();
}

void PredictPage::addImages(const QStringList& paths) {
  if (paths.isEmpty()) return;
  std::vector<std::string> inputs;
  for (const auto& p : paths)
    inputs.push_back(p.toStdString());
  std::shared_ptr<data::DatasetSource> listed;
  try {
    listed = data::openImageList(inputs, {});
  } catch (const std::exception& e) {
    m_status->setText(QString::fromUtf8(e.what()));
    return;
  }
  std::set<std::string> known;
  for (const auto& p : m_images)
    known.insert(canonical(p.path));
  int added = 0;
  for (std::int64_t i = 0; i < listed->size(); ++i) {
    const std::string path = listed->describe(i);
    if (!known.insert(canonical(path)).second) continue;
    m_images.push_back(eval::PredictedImage{path, {}, {}, {}});
    m_done.push_back(false);
    auto* item = new QListWidgetItem(QFileInfo(QString::fromStdString(path)).fileName(), m_list);
    item->setToolTip(QString::fromStdString(path));
    ++added;
  }
  const auto skipped = listed->skippedAtScan().size();
  m_status->setText(tr("%n image(s) added", nullptr, added) +
                    (skipped ? tr("; %n file(s) skipped (not images, or unreadable folders)",
                                  nullptr, int(skipped))
                             : QString()) +
                    QStringLiteral("."));
  if (m_list->currentRow() < 0 && m_list->count() > 0) m_list->setCurrentRow(0);
  if (m_predictor)
    predictPending();
  else
    loadModel();  // predicts what waits once loaded
}

void PredictPage::clearImages() {
  m_job->cancel();
  m_progress->setVisible(false);
  m_images.clear();
  m_done.clear();
  m_list->clear();
  showSelected();
}

int PredictPage::imageCount() const {
  return int(m_images.size());
}

void PredictPage::select(int row) {
  m_list->setCurrentRow(row);
}

void PredictPage::showGradCam(bool on) {
  m_showGradCam = on;
  if (m_gradCam->isChecked() != on) m_gradCam->setChecked(on);
  showSelected();
}

void PredictPage::setConfidence(double score) {
  m_confidence->setValue(int(std::lround(std::clamp(score, 0.0, 1.0) * 100)));
}

void PredictPage::setOpacity(double opacity) {
  m_opacity->setValue(int(std::lround(std::clamp(opacity, 0.0, 1.0) * 100)));
}

QPixmap PredictPage::shownPicture() const {
  return m_shown;
}

void PredictPage::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  fitPicture();
}

void PredictPage::fitPicture() {
  if (m_shown.isNull()) return;
  const QSize room = m_picture->size();
  m_picture->setPixmap(m_shown.width() <= room.width() && m_shown.height() <= room.height()
                           ? m_shown
                           : m_shown.scaled(room, Qt::KeepAspectRatio, Qt::SmoothTransformation));
}

QStringList PredictPage::shownBars() const {
  return m_barLines;
}

QString PredictPage::shownCaption() const {
  return m_caption->text();
}

void PredictPage::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void PredictPage::dropEvent(QDropEvent* event) {
  QStringList paths;
  for (const auto& url : event->mimeData()->urls())
    if (url.isLocalFile()) paths << url.toLocalFile();
  addImages(paths);
  event->acceptProposedAction();
}

void PredictPage::openModel() {
  const QString path = QFileDialog::getOpenFileName(
      this, tr("Predict with"), m_modelPath.isEmpty() ? QString() : QFileInfo(m_modelPath).path(),
      tr("Models (*.safetensors *.onnx *.netsmith.json);;Checkpoints (*.safetensors);;"
         "Exported ONNX files, float or int8 (*.onnx);;Projects with their weights "
         "(*.netsmith.json)"));
  if (!path.isEmpty()) setModel(path);
}

void PredictPage::chooseImages() {
  const QStringList paths = QFileDialog::getOpenFileNames(
      this, tr("Images to predict on"), QString(),
      tr("Images (*.png *.jpg *.jpeg *.bmp *.webp *.tif *.tiff);;All files (*)"));
  addImages(paths);
}

void PredictPage::paste() {
  const QMimeData* mime = QApplication::clipboard()->mimeData();
  QStringList paths;
  if (mime && mime->hasUrls()) {
    for (const auto& url : mime->urls())
      if (url.isLocalFile()) paths << url.toLocalFile();
  } else if (mime && mime->hasText()) {
    for (const auto& line : mime->text().split(QLatin1Char('\n'), Qt::SkipEmptyParts))
      paths << line.trimmed();
  }
  addImages(paths);
}

void PredictPage::predictPending() {
  if (!m_predictor) return;
  std::vector<std::string> paths;
  for (std::size_t i = 0; i < m_images.size(); ++i)
    if (!m_done[i]) paths.push_back(m_images[i].path);
  if (paths.empty()) return;
  m_progress->setRange(0, int(paths.size()));
  m_progress->setValue(0);
  m_progress->setVisible(true);
  auto predictor = m_predictor;
  m_job->start(
      [predictor, paths](const JobContext& job) {
        // In pieces, so that progress shows and a new model or a clear stops it soon.
        std::vector<eval::PredictedImage> out;
        constexpr std::size_t kPiece = 16;
        for (std::size_t start = 0; start < paths.size() && !job.cancelled(); start += kPiece) {
          const std::vector<std::string> piece(
              paths.begin() + std::ptrdiff_t(start),
              paths.begin() + std::ptrdiff_t(std::min(paths.size(), start + kPiece)));
          auto results = predictor->predict(piece);
          std::move(results.begin(), results.end(), std::back_inserter(out));
          job.progress(std::int64_t(out.size()), std::int64_t(paths.size()));
        }
        return out;
      },
      [this](std::vector<eval::PredictedImage> results) { showResults(std::move(results)); },
      [this](const QString& error) {
        m_progress->setVisible(false);
        m_status->setText(tr("Prediction failed: %1").arg(error));
      });
}

void PredictPage::showResults(std::vector<eval::PredictedImage> results) {
  m_progress->setVisible(false);
  std::map<std::string, std::size_t> row;
  for (std::size_t i = 0; i < m_images.size(); ++i)
    row[m_images[i].path] = i;
  int failed = 0;
  for (auto& r : results) {
    const auto it = row.find(r.path);
    if (it == row.end()) continue;  // cleared meanwhile
    const std::size_t i = it->second;
    failed += !r.error.empty();
    m_images[i] = std::move(r);
    m_done[i] = true;
    auto* item = m_list->item(int(i));
    const auto& p = m_images[i];
    if (!p.image.empty()) {
      const QImage icon = toQImage(p.image).scaled(48, 48, Qt::KeepAspectRatio);
      item->setIcon(QIcon(QPixmap::fromImage(icon)));
    }
    item->setText(QFileInfo(QString::fromStdString(p.path)).fileName() + QStringLiteral("\n") +
                  captionOf(p));
  }
  if (failed)
    m_status->setText(tr("%n image(s) could not be read (see the list).", nullptr, failed));
  showSelected();
  Q_EMIT predicted();
}

QString PredictPage::captionOf(const eval::PredictedImage& p) const {
  if (!p.error.empty()) return tr("not read: %1").arg(QString::fromStdString(p.error));
  if (p.image.empty() || !m_predictor) return tr("waiting for the model");
  const auto& v = p.view;
  const auto& names = m_predictor->names();
  const auto name = [&names](std::size_t c) {
    return c < names.size() ? QString::fromStdString(names[c]) : QString::number(c);
  };
  if (!v.predictedMask.empty()) {
    const cv::Mat mask(v.height, v.width, CV_8UC1,
                       const_cast<std::uint8_t*>(v.predictedMask.data()));
    return QString::fromStdString(data::maskCaption(mask, names));
  }
  if (v.height > 0) {  // boxes
    std::vector<target::Box> kept;
    for (std::size_t i = 0; i < v.predictedBoxes.size(); ++i)
      if (i < v.predictedScores.size() && v.predictedScores[i] >= m_confidence->value() / 100.0)
        kept.push_back(v.predictedBoxes[i]);
    return QString::fromStdString(data::boxCaption(kept, names));
  }
  if (v.output.empty()) return {};
  if (m_predictor->outputsProbabilities()) {
    const auto best =
        std::size_t(std::max_element(v.output.begin(), v.output.end()) - v.output.begin());
    return name(best) + QStringLiteral(" ") + percent(v.output[best]);
  }
  QStringList values;
  for (std::size_t i = 0; i < v.output.size(); ++i)
    values << name(i) + QStringLiteral(" ") + QString::number(v.output[i], 'g', 4);
  return values.join(QStringLiteral(", "));
}

QImage PredictPage::drawn(const eval::PredictedImage& p) const {
  if (m_showGradCam && m_predictor && m_predictor->explainsClasses()) {
    explain::GradCamOptions o;
    o.checkpoint = m_modelPath.toStdString();
    o.registries = m_registries;
    // Once per image and model: a slider move or a reselection draws it again without
    // reading the checkpoint and running the backward pass again.
    const QString key = m_modelPath + QLatin1Char('\n') + QString::fromStdString(p.path);
    if (key == m_camKey) return m_camImage;
    try {
      const auto cam = explain::gradCamOfImage(o, p.image);
      m_camImage = toQImage(explain::gradCamOverlay(cam, kPictureSide), true);
      m_camKey = key;
      return m_camImage;
    } catch (const std::exception& e) {
      m_status->setText(tr("No Grad-CAM map: %1").arg(e.what()));
    }
  }
  cv::Mat picture;
  p.image.convertTo(picture, CV_32F, 1.0 / 255.0);
  if (picture.channels() == 1) cv::cvtColor(picture, picture, cv::COLOR_GRAY2RGB);
  const auto& v = p.view;
  const std::vector<std::string> colors =
      m_predictor ? m_predictor->colors() : std::vector<std::string>{};
  if (!v.predictedMask.empty() && v.height == picture.rows && v.width == picture.cols) {
    // Each class's colour over its pixels at the chosen opacity; the background (0) untinted.
    const float a = float(m_opacity->value()) / 100.0f;
    for (int y = 0; y < picture.rows; ++y) {
      auto* px = picture.ptr<cv::Vec3f>(y);
      const std::uint8_t* m = v.predictedMask.data() + std::size_t(y) * std::size_t(v.width);
      for (int x = 0; x < picture.cols; ++x)
        if (m[x] != 0 && m[x] != 255)
          px[x] = px[x] * (1.0f - a) + data::classColor(m[x], colors, 1) * (a / 255.0f);
    }
  }
  const double scale = double(kPictureSide) / std::max(picture.cols, picture.rows);
  QImage image = toQImage(picture).scaled(
      int(std::lround(picture.cols * scale)), int(std::lround(picture.rows * scale)),
      Qt::KeepAspectRatio, scale > 1 ? Qt::FastTransformation : Qt::SmoothTransformation);
  if (!v.predictedBoxes.empty()) {
    QPainter painter(&image);
    const auto& names = m_predictor ? m_predictor->names() : std::vector<std::string>{};
    for (std::size_t i = 0; i < v.predictedBoxes.size() && i < v.predictedScores.size(); ++i) {
      if (v.predictedScores[i] < m_confidence->value() / 100.0) continue;
      const auto& b = v.predictedBoxes[i];
      const cv::Vec3f c =
          data::classColor(std::size_t(std::max<std::int64_t>(b.cls, 0)), colors, 0);
      const QColor colour{int(c[0]), int(c[1]), int(c[2])};
      painter.setPen(QPen(colour, 2));
      const QRectF r(b.x0 * scale, b.y0 * scale, (b.x1 - b.x0) * scale, (b.y1 - b.y0) * scale);
      painter.drawRect(r);
      const QString label =
          (std::size_t(b.cls) < names.size() ? QString::fromStdString(names[std::size_t(b.cls)])
                                             : QString::number(b.cls)) +
          QStringLiteral(" %1").arg(v.predictedScores[i], 0, 'f', 2);
      const QRectF text = painter.boundingRect(QRectF(r.topLeft(), QSizeF(300, 20)),
                                               Qt::AlignLeft | Qt::AlignTop, label);
      painter.fillRect(text.translated(0, -text.height()), colour);
      painter.setPen(qGray(colour.rgb()) < 128 ? Qt::white : Qt::black);  // readable on it
      painter.drawText(text.translated(0, -text.height()), Qt::AlignLeft | Qt::AlignTop, label);
    }
  }
  return image;
}

void PredictPage::setBars(const eval::PredictedImage& p) {
  while (auto* item = m_barsLayout->takeAt(0)) {
    delete item->widget();
    delete item;
  }
  m_barLines.clear();
  const auto& v = p.view;
  if (v.output.empty() || !m_predictor) return;
  const auto& names = m_predictor->names();
  std::vector<std::size_t> order(v.output.size());
  std::iota(order.begin(), order.end(), 0);
  const bool probabilities = m_predictor->outputsProbabilities();
  if (probabilities)
    std::stable_sort(order.begin(), order.end(),
                     [&v](std::size_t a, std::size_t b) { return v.output[a] > v.output[b]; });
  for (std::size_t k = 0; k < order.size() && (!probabilities || k < std::size_t(kBars)); ++k) {
    const std::size_t c = order[k];
    const QString name = c < names.size() ? QString::fromStdString(names[c]) : QString::number(c);
    auto* row = new QWidget(m_bars);
    auto* line = new QHBoxLayout(row);
    line->setContentsMargins(0, 0, 0, 0);
    auto* label = new QLabel(name, row);
    label->setMinimumWidth(120);
    line->addWidget(label);
    if (probabilities) {
      auto* bar = new QProgressBar(row);
      bar->setRange(0, 1000);
      bar->setValue(int(std::lround(v.output[c] * 1000)));
      bar->setFormat(percent(v.output[c]));
      line->addWidget(bar, 1);
      m_barLines << name + QStringLiteral(" ") + percent(v.output[c]);
    } else {
      const QString value = QString::number(v.output[c], 'g', 6);
      line->addWidget(new QLabel(value, row), 1);
      m_barLines << name + QStringLiteral(" ") + value;
    }
    m_barsLayout->addWidget(row);
  }
}

void PredictPage::showSelected() {
  const int row = m_list->currentRow();
  const bool any = row >= 0 && std::size_t(row) < m_images.size();
  const eval::PredictedImage* p = any ? &m_images[std::size_t(row)] : nullptr;
  const bool ready = p && !p->image.empty() && p->error.empty();
  const bool boxes = ready && p->view.height > 0 && p->view.predictedMask.empty();
  const bool mask = ready && !p->view.predictedMask.empty();
  m_confidence->setVisible(boxes);
  m_confidenceLabel->setVisible(boxes);
  m_confidenceLabel->setText(tr("Confidence %1").arg(m_confidence->value() / 100.0, 0, 'f', 2));
  m_opacity->setVisible(mask);
  m_opacityLabel->setVisible(mask);
  m_opacityLabel->setText(tr("Opacity %1%").arg(m_opacity->value()));
  if (!ready) {
    m_shown = QPixmap();
    m_picture->clear();
    m_picture->setText(p ? captionOf(*p) : tr("No image chosen"));
    m_caption->clear();
    setBars(eval::PredictedImage{});
    return;
  }
  m_shown = QPixmap::fromImage(drawn(*p));
  fitPicture();
  m_caption->setText(QStringLiteral("%1: %2").arg(
      QFileInfo(QString::fromStdString(p->path)).fileName(), captionOf(*p)));
  setBars(*p);
  if (auto* item = m_list->item(row))
    item->setText(QFileInfo(QString::fromStdString(p->path)).fileName() + QStringLiteral("\n") +
                  captionOf(*p));
}

}  // namespace netsmith::ui
