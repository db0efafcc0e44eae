#include "shell/dialogs.h"

#include <qcustomplot.h>
#include <algorithm>

#include <QApplication>
#include <QComboBox>
#include <QDesktopServices>
#include <QDialogButtonBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QListWidget>
#include <QPainter>
#include <QPalette>
#include <QPlainTextEdit>
#include <QProxyStyle>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStyle>
#include <QStyleFactory>
#include <QUrl>
#include <QVBoxLayout>

#include <cmath>

#include "env/env_report.h"
#include "export/export_job.h"
#include "train/trainer.h"
#include "util/chart_fit.h"
#include "util/theme_colors.h"

namespace netsmith::ui {

namespace {

/// Fusion on the dark palette draws a check box's frame in a colour close to its fill (the
/// window colour darkened): the boxes nearly vanish. This style draws the frame again, visibly.
class DarkFusionStyle : public QProxyStyle {
 public:
  DarkFusionStyle() : QProxyStyle(QStyleFactory::create(QStringLiteral("Fusion"))) {}
  void drawPrimitive(PrimitiveElement element, const QStyleOption* option, QPainter* painter,
                     const QWidget* widget) const override {
    QProxyStyle::drawPrimitive(element, option, painter, widget);
    if (element != PE_IndicatorCheckBox && element != PE_IndicatorRadioButton) return;
    painter->save();
    painter->setRenderHint(QPainter::Antialiasing, element == PE_IndicatorRadioButton);
    QColor frame = option->palette.color(QPalette::WindowText);
    frame.setAlpha(option->state & State_Enabled ? 150 : 70);
    painter->setPen(QPen(frame, 1));
    painter->setBrush(Qt::NoBrush);
    const QRectF r = QRectF(option->rect).adjusted(0.5, 0.5, -0.5, -0.5);
    if (element == PE_IndicatorRadioButton)
      painter->drawEllipse(r);
    else
      painter->drawRect(r);
    painter->restore();
  }
};

}  // namespace

void applyTheme(const QString& theme) {
  // The platform's own palette and style, remembered the first time round.
  static const QPalette systemPalette = QApplication::palette();
  static const QString systemStyle = QApplication::style()->name();
  if (theme == QLatin1String("dark")) {
    QApplication::setStyle(new DarkFusionStyle);
    QPalette p;
    const QColor window(45, 45, 48), base(30, 30, 32), text(220, 220, 220), highlight(42, 130, 218);
    p.setColor(QPalette::Window, window);
    p.setColor(QPalette::WindowText, text);
    p.setColor(QPalette::Base, base);
    p.setColor(QPalette::AlternateBase, window);
    p.setColor(QPalette::ToolTipBase, base);
    p.setColor(QPalette::ToolTipText, text);
    p.setColor(QPalette::Text, text);
    p.setColor(QPalette::Button, window);
    p.setColor(QPalette::ButtonText, text);
    p.setColor(QPalette::BrightText, Qt::red);
    p.setColor(QPalette::Link, highlight);
    p.setColor(QPalette::Highlight, highlight);
    p.setColor(QPalette::HighlightedText, Qt::black);
    p.setColor(QPalette::PlaceholderText, QColor(140, 140, 140));
    p.setColor(QPalette::Disabled, QPalette::Text, QColor(120, 120, 120));
    p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(120, 120, 120));
    p.setColor(QPalette::Disabled, QPalette::WindowText, QColor(120, 120, 120));
    QApplication::setPalette(p);
  } else if (theme == QLatin1String("light")) {
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion")));
    QApplication::setPalette(QApplication::style()->standardPalette());
  } else {
    if (auto* style = QStyleFactory::create(systemStyle)) QApplication::setStyle(style);
    QApplication::setPalette(systemPalette);
  }
}

Preferences Preferences::load() {
  QSettings s;
  Preferences p;
  p.theme = s.value(QStringLiteral("preferences/theme"), p.theme).toString();
  p.threads = s.value(QStringLiteral("preferences/threads"), p.threads).toInt();
  p.smoothing = s.value(QStringLiteral("preferences/smoothing"), p.smoothing).toDouble();
  return p;
}

void Preferences::save() const {
  QSettings s;
  s.setValue(QStringLiteral("preferences/theme"), theme);
  s.setValue(QStringLiteral("preferences/threads"), threads);
  s.setValue(QStringLiteral("preferences/smoothing"), smoothing);
}

EnvironmentDialog::EnvironmentDialog(QWidget* parent)
    : QDialog(parent), m_text(new QPlainTextEdit(this)) {
  setObjectName(QStringLiteral("environmentDialog"));
  setWindowTitle(tr("Environment"));
  resize(720, 480);
  const auto report = env::collectEnvReport(true);
  m_text->setReadOnly(true);
  m_text->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
  m_text->setPlainText(QString::fromStdString(env::formatEnvReport(report)));
  auto* layout = new QVBoxLayout(this);
  if (report.blasIsReference || !report.warnings.empty()) {
    QStringList warnings;
    for (const auto& w : report.warnings)
      warnings << QString::fromStdString(w).toHtmlEscaped();
    auto* banner = new QLabel(
        QStringLiteral("<b>%1</b><br>%2").arg(tr("Warning"), warnings.join(QStringLiteral("<br>"))),
        this);
    banner->setObjectName(QStringLiteral("environmentWarning"));
    banner->setWordWrap(true);
    banner->setStyleSheet(
        QStringLiteral("QLabel { background: #fff3cd; color: #664d03; padding: 6px; }"));
    layout->addWidget(banner);
  }
  layout->addWidget(m_text, 1);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  layout->addWidget(buttons);
}

QString EnvironmentDialog::reportText() const {
  return m_text->toPlainText();
}

PreferencesDialog::PreferencesDialog(const Preferences& current, QWidget* parent)
    : QDialog(parent),
      m_theme(new QComboBox(this)),
      m_threads(new QSpinBox(this)),
      m_smoothing(new QDoubleSpinBox(this)) {
  setObjectName(QStringLiteral("preferencesDialog"));
  setWindowTitle(tr("Preferences"));
  m_theme->setObjectName(QStringLiteral("theme"));
  m_theme->addItem(tr("Follow the system"), QStringLiteral("system"));
  m_theme->addItem(tr("Light"), QStringLiteral("light"));
  m_theme->addItem(tr("Dark"), QStringLiteral("dark"));
  m_theme->setCurrentIndex(std::max(0, m_theme->findData(current.theme)));
  m_threads->setObjectName(QStringLiteral("threads"));
  m_threads->setRange(0, 256);
  m_threads->setSpecialValueText(tr("one per core"));
  m_threads->setValue(current.threads);
  m_smoothing->setObjectName(QStringLiteral("smoothing"));
  m_smoothing->setRange(0, 0.99);
  m_smoothing->setSingleStep(0.05);
  m_smoothing->setValue(current.smoothing);
  auto* form = new QFormLayout;
  form->addRow(tr("Theme:"), m_theme);
  form->addRow(tr("LibTorch threads:"), m_threads);
  form->addRow(tr("Loss smoothing:"), m_smoothing);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(form);
  layout->addWidget(buttons);
}

Preferences PreferencesDialog::preferences() const {
  Preferences p;
  p.theme = m_theme->currentData().toString();
  p.threads = m_threads->value();
  p.smoothing = m_smoothing->value();
  return p;
}

ExportReportDialog::ExportReportDialog(const QString& checkpoint,
                                       const exporting::ExportJobResult& result, QWidget* parent)
    : QDialog(parent) {
  m_passed = result.allVerified;
  QStringList lines;
  lines << tr("Checkpoint: %1").arg(checkpoint);
  for (const auto& o : result.outcomes) {
    lines << QString();
    lines << QStringLiteral("%1: %2%3")
                 .arg(QString::fromStdString(o.format),
                      o.written ? QString() : tr("(not written) "), QString::fromStdString(o.path));
    // The exporter's message, one finding a line (its parity figures among them, said once).
    for (const auto& part :
         QString::fromStdString(o.message).split(QStringLiteral("; "), Qt::SkipEmptyParts))
      lines << QStringLiteral("  ") + part;
    if (o.hasParity && !result.samplesNote.empty())
      lines << tr("  (random inputs only: no real samples, %1)")
                   .arg(QString::fromStdString(result.samplesNote));
    if (o.written && m_folder.isEmpty())
      m_folder = QFileInfo(QString::fromStdString(o.path)).absolutePath();
  }
  build(m_passed ? tr("Export finished: verified") : tr("Export finished: NOT verified"),
        lines.join(QLatin1Char('\n')));
}

ExportReportDialog::ExportReportDialog(const QString& checkpoint, const QString& error,
                                       QWidget* parent)
    : QDialog(parent) {
  build(tr("Export failed"), tr("Checkpoint: %1\n\n%2").arg(checkpoint, error));
}

void ExportReportDialog::build(const QString& title, const QString& text) {
  setObjectName(QStringLiteral("exportReport"));
  setWindowTitle(title);
  resize(760, 360);
  auto* heading = new QLabel(QStringLiteral("<b>%1</b>").arg(title.toHtmlEscaped()), this);
  m_text = new QPlainTextEdit(this);
  m_text->setReadOnly(true);
  // Long paths and parity lines wrap at the window's width (no sideways scrolling).
  m_text->setLineWrapMode(QPlainTextEdit::WidgetWidth);
  m_text->setWordWrapMode(QTextOption::WrapAtWordBoundaryOrAnywhere);
  m_text->setPlainText(text);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  if (!m_folder.isEmpty()) {
    // Where the files went, one click away in the file manager.
    QPushButton* openFolder = buttons->addButton(tr("&Open folder"), QDialogButtonBox::ActionRole);
    openFolder->setObjectName(QStringLiteral("openExportFolder"));
    openFolder->setToolTip(m_folder);
    connect(openFolder, &QPushButton::clicked, this,
            [this] { QDesktopServices::openUrl(QUrl::fromLocalFile(m_folder)); });
  }
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(heading);
  layout->addWidget(m_text, 1);
  layout->addWidget(buttons);
}

QString ExportReportDialog::reportText() const {
  return m_text->toPlainText();
}

LrFinderDialog::LrFinderDialog(const train::LrFindResult& result, QWidget* parent)
    : QDialog(parent) {
  setObjectName(QStringLiteral("lrFinderDialog"));
  setWindowTitle(tr("Learning rate finder"));
  resize(640, 440);
  auto* plot = new QCustomPlot(this);
  plot->setObjectName(QStringLiteral("lrFinderChart"));
  QVector<double> lrs(result.lrs.begin(), result.lrs.end());
  plot->addGraph()->setData(lrs, QVector<double>(result.losses.begin(), result.losses.end()));
  plot->graph(0)->setName(tr("loss"));
  plot->graph(0)->setPen(QPen(QColor(31, 119, 180, 90)));
  plot->addGraph()->setData(lrs, QVector<double>(result.smoothed.begin(), result.smoothed.end()));
  plot->graph(1)->setName(tr("smoothed"));
  plot->graph(1)->setPen(QPen(QColor(31, 119, 180), 2));
  plot->xAxis->setScaleType(QCPAxis::stLogarithmic);
  plot->xAxis->setTicker(QSharedPointer<QCPAxisTickerLog>(new QCPAxisTickerLog));
  plot->xAxis->setLabel(tr("learning rate"));
  plot->yAxis->setLabel(tr("smoothed loss"));
  plot->rescaleAxes();
  if (!result.smoothed.empty()) {
    // The useful part: from the lowest loss to three times the loss at the start (a diverging
    // end would otherwise flatten the curve).
    const auto& sm = result.smoothed;
    const double start = sm[std::min(sm.size() - 1, sm.size() / 10)];
    const double low = *std::min_element(sm.begin(), sm.end());
    const double high = std::max(3.0 * start, low * 1.5);
    plot->yAxis->setRange(low - 0.05 * (high - low), high);
  }
  auto addLine = [plot](double lr, const QPen& pen) {
    auto* line = new QCPItemStraightLine(plot);
    line->setPen(pen);
    line->point1->setCoords(lr, 0);
    line->point2->setCoords(lr, 1);
  };
  if (result.minLossLr > 0) addLine(result.minLossLr, QPen(Qt::gray, 1, Qt::DotLine));
  if (result.suggestedLr > 0) addLine(result.suggestedLr, QPen(Qt::red, 1, Qt::DashLine));
  plot->legend->setVisible(true);
  legendBelow(plot);
  followTheme(plot);
  fitTicksToSize(plot);
  plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
  m_summary =
      tr("Suggested learning rate: %1 (red: the steepest fall of the smoothed loss before its "
         "lowest point); lowest loss at %2 (grey).%3%4")
          .arg(result.suggestedLr, 0, 'g', 3)
          .arg(result.minLossLr, 0, 'g', 3)
          .arg(result.diverged ? tr(" The loss diverged at the end of the sweep.") : QString(),
               result.weightsRestored ? tr(" The model's weights were restored.")
                                      : tr(" The weights were NOT restored."));
  auto* label = new QLabel(m_summary, this);
  label->setObjectName(QStringLiteral("lrFinderSummary"));
  label->setWordWrap(true);
  label->setTextInteractionFlags(Qt::TextSelectableByMouse);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  m_suggested = result.suggestedLr > 0
                    ? std::stod(QString::number(result.suggestedLr, 'g', 2).toStdString())
                    : 0;
  if (m_suggested > 0) {
    auto* use =
        buttons->addButton(tr("Use %1").arg(m_suggested, 0, 'g', 2), QDialogButtonBox::AcceptRole);
    use->setObjectName(QStringLiteral("useLr"));
    connect(use, &QPushButton::clicked, this, [this] {
      Q_EMIT useLearningRate(m_suggested);
      accept();
    });
  }
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(plot, 1);
  layout->addWidget(label);
  layout->addWidget(buttons);
}

NewProjectTaskDialog::NewProjectTaskDialog(QWidget* parent)
    : QDialog(parent), m_list(new QListWidget(this)) {
  setObjectName(QStringLiteral("newProjectTask"));
  setWindowTitle(tr("New project"));
  resize(560, 340);
  auto* heading = new QLabel(tr("<b>What will the network learn?</b>"), this);
  m_list->setObjectName(QStringLiteral("newProjectTaskList"));
  m_list->setSpacing(2);
  m_list->setWordWrap(true);
  const auto all = choices();
  for (const auto& c : all) {
    auto* item = new QListWidgetItem(c.title + QLatin1Char('\n') + c.data, m_list);
    item->setData(Qt::UserRole, c.name);
  }
  m_list->setCurrentRow(0);
  auto* note = new QLabel(tr("The project starts with its Input only, and the data and training "
                             "settings of the task's template: point the Data page at your "
                             "data."),
                          this);
  note->setWordWrap(true);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
  // The list passes Enter on to the dialog, which presses its default button.
  buttons->button(QDialogButtonBox::Ok)->setDefault(true);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
  connect(m_list, &QListWidget::itemDoubleClicked, this, &QDialog::accept);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(heading);
  layout->addWidget(m_list, 1);
  layout->addWidget(note);
  layout->addWidget(buttons);
  m_list->setFocus();
}

QString NewProjectTaskDialog::task() const {
  const auto* item = m_list->currentItem();
  return item ? item->data(Qt::UserRole).toString() : choices().constFirst().name;
}

QList<TaskChoice> NewProjectTaskDialog::choices() {
  // The names are the task registry's (core/task); the templates are in resources/templates.
  return {
      {QStringLiteral("classification"), tr("Classification"), tr("classification"),
       tr("One class per image: a folder of images per class, a path,label CSV, IDX or CIFAR-10 "
          "files"),
       QStringLiteral("fashion_mnist_cnn.netsmith.json")},
      {QStringLiteral("multilabel"), tr("Multi-label"), tr("multi-label"),
       tr("Any number of labels per image: a CSV with a path,labels header, the labels "
          "separated by ;"),
       QStringLiteral("multilabel_cnn.netsmith.json")},
      {QStringLiteral("regression"), tr("Regression"), tr("regression"),
       tr("Numbers per image: a CSV with a path column and a column of numbers per target"),
       QStringLiteral("regression_cnn.netsmith.json")},
      {QStringLiteral("segmentation"), tr("Segmentation"), tr("segmentation"),
       tr("A class for every pixel: a folder of images and a folder of PNG masks paired by file "
          "name"),
       QStringLiteral("unet.netsmith.json")},
      {QStringLiteral("detection"), tr("Object detection"), tr("detection"),
       tr("Boxes around the objects of each image: YOLO label folders, a COCO JSON or Pascal "
          "VOC XML files"),
       QStringLiteral("detector.netsmith.json")},
  };
}

TaskChoice NewProjectTaskDialog::choice(const QString& task) {
  const auto all = choices();
  for (const auto& c : all)
    if (c.name == task) return c;
  return {task, task, task, QString(), QString()};
}

}  // namespace netsmith::ui
