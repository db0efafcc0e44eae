#include "evaluation/sample_dialog.h"

#include <QApplication>
#include <QButtonGroup>
#include <QDialogButtonBox>
#include <QGridLayout>
#include <QLabel>
#include <QRadioButton>
#include <QVBoxLayout>

#include "train/evaluation.h"
#include "util/image_convert.h"

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

SampleDialog::SampleDialog(const QString& checkpoint, const train::SampleOutcome& sample,
                           const std::vector<std::string>& classes, QWidget* parent)
    : QDialog(parent),
      m_picture(new QLabel(this)),
      m_map(new QLabel(this)),
      m_caption(new QLabel(this)),
      m_ofPredicted(new QRadioButton(this)) {
  setObjectName(QStringLiteral("sampleDialog"));
  const auto name = [&classes](std::int64_t c) {
    return c < std::int64_t(classes.size()) ? QString::fromStdString(classes[std::size_t(c)])
                                            : QString::number(c);
  };
  setWindowTitle(tr("Sample #%1").arg(sample.position));
  QApplication::setOverrideCursor(Qt::WaitCursor);
  try {
    explain::GradCamOptions o;
    o.checkpoint = checkpoint.toStdString();
    o.targetClass = sample.predicted;
    m_predicted = explain::gradCamOfImage(o, sample.picture);
    o.targetClass = sample.label;
    m_true = explain::gradCamOfImage(o, sample.picture);
  } catch (const std::exception& e) {
    m_error = QString::fromStdString(e.what());
  }
  QApplication::restoreOverrideCursor();

  m_picture->setObjectName(QStringLiteral("samplePicture"));
  m_picture->setPixmap(large(sample.picture));
  m_map->setObjectName(QStringLiteral("sampleGradCam"));
  m_map->setMinimumSize(kSide, kSide);
  m_map->setAlignment(Qt::AlignCenter);
  QStringList top;
  for (const auto& [c, p] : sample.top)
    top << QStringLiteral("%1 %2%").arg(name(c)).arg(100.0 * p, 0, 'f', 1);
  m_caption->setObjectName(QStringLiteral("sampleCaption"));
  m_caption->setWordWrap(true);
  m_caption->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_caption->setText(
      tr("<b>#%1</b>: true <b>%2</b>, predicted <b>%3</b>, loss %4<br>top-3: %5<br>%6")
          .arg(sample.position)
          .arg(name(sample.label).toHtmlEscaped(), name(sample.predicted).toHtmlEscaped())
          .arg(sample.loss, 0, 'f', 4)
          .arg(top.join(QStringLiteral(", ")).toHtmlEscaped(),
               m_error.isEmpty()
                   ? tr("Grad-CAM at node %1: red is where the class's score comes from.")
                         .arg(QString::fromStdString(m_predicted.node).toHtmlEscaped())
                   : tr("Grad-CAM failed: %1").arg(m_error.toHtmlEscaped())));
  m_ofPredicted->setText(tr("Map of the predicted class (%1)").arg(name(sample.predicted)));
  m_ofPredicted->setObjectName(QStringLiteral("mapOfPredicted"));
  auto* ofTrue = new QRadioButton(tr("Map of the true class (%1)").arg(name(sample.label)), this);
  ofTrue->setObjectName(QStringLiteral("mapOfTrue"));
  auto* group = new QButtonGroup(this);
  group->addButton(m_ofPredicted);
  group->addButton(ofTrue);
  m_ofPredicted->setChecked(true);
  connect(m_ofPredicted, &QRadioButton::toggled, this, &SampleDialog::showPredicted);
  for (auto* b : {m_ofPredicted, ofTrue})
    b->setEnabled(m_error.isEmpty());

  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* grid = new QGridLayout;
  grid->addWidget(m_picture, 0, 0);
  grid->addWidget(m_map, 0, 1);
  grid->addWidget(m_ofPredicted, 1, 1);
  grid->addWidget(ofTrue, 2, 1);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(m_caption);
  layout->addLayout(grid);
  layout->addWidget(buttons);
  showPredicted(true);
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
