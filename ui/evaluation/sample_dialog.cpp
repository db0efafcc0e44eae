#include "evaluation/sample_dialog.h"

#include <QApplication>
#include <QButtonGroup>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QRadioButton>
#include <QSignalBlocker>
#include <QVBoxLayout>

#include <algorithm>

#include "eval/evaluation.h"
#include "util/image_convert.h"

#include <opencv2/imgproc.hpp>

namespace netsmith::ui {

namespace {

constexpr int kSide = 280;  // both pictures, pixels

QPixmap large(const cv::Mat& image) {
  const QImage q = toQImage(image);
  return QPixmap::fromImage(
      q.scaled(kSide, kSide, Qt::KeepAspectRatio,
               q.width() < kSide ? Qt::FastTransformation : Qt::SmoothTransformation));
}

}  // namespace

SampleDialog::SampleDialog(const QString& checkpoint, RegistriesPtr registries,
                           const eval::SampleOutcome& sample,
                           const std::vector<std::string>& classes, QWidget* parent, bool perLabel)
    : QDialog(parent),
      m_picture(new QLabel(this)),
      m_map(new QLabel(this)),
      m_caption(new QLabel(this)),
      m_ofPredicted(new QRadioButton(this)),
      m_node(new QComboBox(this)),
      m_checkpoint(checkpoint),
      m_registries(std::move(registries)),
      m_image(sample.picture),
      m_label(sample.label),
      m_predictedClass(sample.predicted),
      m_classes(classes) {
  setObjectName(QStringLiteral("sampleDialog"));
  const auto name = [&classes](std::int64_t c) {
    return c < std::int64_t(classes.size()) ? QString::fromStdString(classes[std::size_t(c)])
                                            : QString::number(c);
  };
  setWindowTitle(tr("Sample #%1").arg(sample.position));
  m_picture->setObjectName(QStringLiteral("samplePicture"));
  m_picture->setPixmap(large(sample.picture));
  m_map->setObjectName(QStringLiteral("sampleGradCam"));
  m_map->setMinimumSize(kSide, kSide);
  m_map->setAlignment(Qt::AlignCenter);
  QStringList top;
  for (const auto& [c, p] : sample.top)
    top << QStringLiteral("%1 %2%").arg(name(c)).arg(100.0 * p, 0, 'f', 1);
  m_sampleText =
      tr("<b>#%1</b>: true <b>%2</b>, predicted <b>%3</b>, loss %4<br>top-3: %5")
          .arg(sample.position)
          .arg(name(sample.label).toHtmlEscaped(), name(sample.predicted).toHtmlEscaped())
          .arg(sample.loss, 0, 'f', 4)
          .arg(top.join(QStringLiteral(", ")).toHtmlEscaped());
  m_caption->setObjectName(QStringLiteral("sampleCaption"));
  m_caption->setWordWrap(true);
  m_caption->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_ofPredicted->setText(tr("Map of the predicted class (%1)").arg(name(sample.predicted)));
  m_ofPredicted->setObjectName(QStringLiteral("mapOfPredicted"));
  auto* ofTrue = new QRadioButton(tr("Map of the true class (%1)").arg(name(sample.label)), this);
  ofTrue->setObjectName(QStringLiteral("mapOfTrue"));
  auto* group = new QButtonGroup(this);
  group->addButton(m_ofPredicted);
  group->addButton(ofTrue);
  m_ofPredicted->setChecked(true);
  connect(m_ofPredicted, &QRadioButton::toggled, this, &SampleDialog::showPredicted);
  const auto& view = sample.view;
  const bool multiLabel =
      perLabel && !view.output.empty() && view.output.size() == view.truth.size();
  if (multiLabel) {
    // Each label has its own score: the map of the one chosen, most probable first.
    m_ofPredicted->hide();
    ofTrue->hide();
    m_labelChoice = new QComboBox(this);
    m_labelChoice->setObjectName(QStringLiteral("gradCamLabel"));
    m_labelChoice->setToolTip(tr("The label whose score the map explains"));
    std::vector<int> order(view.output.size());
    for (std::size_t k = 0; k < order.size(); ++k)
      order[k] = int(k);
    std::stable_sort(order.begin(), order.end(), [&view](int a, int b) {
      return view.output[std::size_t(a)] > view.output[std::size_t(b)];
    });
    QStringList labels, probabilities;
    for (int k : order) {
      const bool truth = view.truth[std::size_t(k)] > 0.5f;
      m_labelChoice->addItem(tr("%1 (probability %2%%3)")
                                 .arg(name(k))
                                 .arg(100.0 * view.output[std::size_t(k)], 0, 'f', 1)
                                 .arg(truth ? tr(", a true label") : QString()),
                             k);
      if (truth) labels << name(k);
      if (probabilities.size() < 5)
        probabilities << QStringLiteral("%1 %2%").arg(name(k)).arg(
            100.0 * view.output[std::size_t(k)], 0, 'f', 1);
    }
    m_label = m_predictedClass = order.empty() ? 0 : order.front();
    m_sampleText = tr("<b>#%1</b>: labels <b>%2</b>, loss %3<br>most probable: %4")
                       .arg(sample.position)
                       .arg((labels.isEmpty() ? tr("(none)") : labels.join(QStringLiteral(", ")))
                                .toHtmlEscaped())
                       .arg(sample.loss, 0, 'f', 4)
                       .arg(probabilities.join(QStringLiteral(", ")).toHtmlEscaped());
    connect(m_labelChoice, qOverload<int>(&QComboBox::activated), this,
            [this](int row) { mapOfLabel(m_labelChoice->itemData(row).toInt()); });
  }
  m_node->setObjectName(QStringLiteral("gradCamNode"));
  m_node->setToolTip(tr("The node the map is taken at (by default the last convolution)"));

  compute({});  // at the default node
  {
    const QSignalBlocker block(m_node);
    for (const auto& n : m_predicted.featureNodes)
      m_node->addItem(QString::fromStdString(n));
    m_node->setCurrentText(QString::fromStdString(m_predicted.node));
  }
  connect(m_node, &QComboBox::textActivated, this, &SampleDialog::mapAt);
  for (QWidget* w : std::initializer_list<QWidget*>{m_ofPredicted, ofTrue, m_node})
    w->setEnabled(m_error.isEmpty());
  if (m_labelChoice) m_labelChoice->setEnabled(m_error.isEmpty());

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* nodeRow = new QHBoxLayout;
  nodeRow->addWidget(new QLabel(tr("Node:"), this));
  nodeRow->addWidget(m_node, 1);
  auto* grid = new QGridLayout;
  grid->addWidget(m_picture, 0, 0);
  grid->addWidget(m_map, 0, 1);
  grid->addLayout(colourScale(), 0, 2);
  grid->addWidget(m_ofPredicted, 1, 1);
  grid->addWidget(ofTrue, 2, 1);
  if (m_labelChoice) grid->addWidget(m_labelChoice, 1, 1);
  grid->addLayout(nodeRow, 3, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_caption);
  layout->addLayout(grid);
  layout->addWidget(buttons);
  showPredicted(true);
}

QLayout* SampleDialog::colourScale() {
  // The map's colours from low (bottom) to high (top), as the overlay draws them (JET).
  cv::Mat ramp(256, 1, CV_8U), colours;
  for (int i = 0; i < 256; ++i)
    ramp.at<std::uint8_t>(i, 0) = std::uint8_t(255 - i);
  cv::applyColorMap(ramp, colours, cv::COLORMAP_JET);
  auto* bar = new QLabel(this);
  bar->setObjectName(QStringLiteral("gradCamScale"));
  bar->setPixmap(QPixmap::fromImage(toQImage(colours, true))
                     .scaled(14, kSide - 40, Qt::IgnoreAspectRatio, Qt::SmoothTransformation));
  bar->setToolTip(
      tr("How much each region raised the class's score (Grad-CAM, scaled to the "
         "map's highest value)"));
  auto* column = new QVBoxLayout;
  column->addWidget(new QLabel(tr("high"), this), 0, Qt::AlignHCenter);
  column->addWidget(bar, 1, Qt::AlignHCenter);
  column->addWidget(new QLabel(tr("low"), this), 0, Qt::AlignHCenter);
  return column;
}

void SampleDialog::compute(const std::string& node) {
  QApplication::setOverrideCursor(Qt::WaitCursor);
  m_error.clear();
  try {
    explain::GradCamOptions o;
    o.registries = m_registries;
    o.checkpoint = m_checkpoint.toStdString();
    o.node = node;
    auto maps = explain::gradCamsOfImage(o, m_image, {m_predictedClass, m_label});
    m_predicted = std::move(maps[0]);
    m_true = std::move(maps[1]);
  } catch (const std::exception& e) {
    m_error = QString::fromStdString(e.what());
  }
  QApplication::restoreOverrideCursor();
  updateCaption();
}

void SampleDialog::updateCaption() {
  m_caption->setText(m_sampleText + QStringLiteral("<br>") +
                     (m_error.isEmpty()
                          ? tr("Grad-CAM at node %1: red is where the class's score comes from.")
                                .arg(QString::fromStdString(m_predicted.node).toHtmlEscaped())
                          : tr("Grad-CAM failed: %1").arg(m_error.toHtmlEscaped())));
}

void SampleDialog::mapOfLabel(int label) {
  if (!m_labelChoice) return;
  m_label = m_predictedClass = label;
  const int row = m_labelChoice->findData(label);
  if (row >= 0 && row != m_labelChoice->currentIndex()) {
    const QSignalBlocker block(m_labelChoice);
    m_labelChoice->setCurrentIndex(row);
  }
  mapAt(m_node->currentText());
}

void SampleDialog::mapAt(const QString& node) {
  compute(node.toStdString());
  showPredicted(m_ofPredicted->isChecked());
}

void SampleDialog::showPredicted(bool predicted) {
  const explain::GradCam& cam = predicted ? m_predicted : m_true;
  if (!m_error.isEmpty() || cam.heat.empty()) {
    m_map->setText(tr("(no map)"));
    return;
  }
  m_map->setPixmap(QPixmap::fromImage(toQImage(explain::gradCamOverlay(cam, kSide), true)));
}

QPixmap SampleDialog::overlay() const {
  return m_map->pixmap();
}

}  // namespace netsmith::ui
