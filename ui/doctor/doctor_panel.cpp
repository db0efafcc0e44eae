#include "doctor/doctor_panel.h"

#include <QCheckBox>
#include <QDir>
#include <QFormLayout>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QListWidget>
#include <QPainter>
#include <QProgressBar>
#include <QPushButton>
#include <QShortcut>
#include <QSpinBox>
#include <QTabWidget>
#include <QUndoStack>
#include <QVBoxLayout>

#include <cmath>

#include "common/clock_text.h"
#include "doctor/doctor.h"
#include "doctor/doctor_actions.h"
#include "session/project_document.h"
#include "util/background_job.h"
#include "util/chart_fit.h"
#include "util/image_convert.h"

namespace netsmith::ui {

namespace {

constexpr int kDoctorThumb = 64;
/// A gallery item's position in its report list.
constexpr int kFindingRole = Qt::UserRole + 1;

std::string pictureKey(const doctor::SampleRef& s) {
  return s.split + "#" + std::to_string(s.index);
}

/// "1:05" or "1:02:05".
QString clock(double seconds) {
  return QString::fromStdString(clockText(seconds));
}

void setUpDoctorGallery(QListWidget* list, const QString& name, QSize icon) {
  list->setObjectName(name);
  list->setViewMode(QListView::IconMode);
  list->setIconSize(icon);
  list->setGridSize(QSize(icon.width() + 40, icon.height() + 52));
  list->setResizeMode(QListView::Adjust);
  list->setMovement(QListView::Static);
  list->setWordWrap(true);
  list->setUniformItemSizes(true);
}

}  // namespace

DoctorPanel::DoctorPanel(ProjectDocument* document, QWidget* parent)
    : QWidget(parent),
      m_document(document),
      m_folds(new QSpinBox(this)),
      m_epochs(new QSpinBox(this)),
      m_limit(new QSpinBox(this)),
      m_checkLabels(new QCheckBox(tr("Check labels (cross-training)"), this)),
      m_run(new QPushButton(tr("Run doctor"), this)),
      m_stop(new QPushButton(tr("Stop"), this)),
      m_progress(new QProgressBar(this)),
      m_status(new QLabel(this)),
      m_summary(new QLabel(this)),
      m_balance(new QLabel(this)),
      m_classWeights(new QPushButton(tr("Use class weights"), this)),
      m_sampler(new QPushButton(tr("Use a balanced sampler"), this)),
      m_relabel(new QPushButton(tr("Relabel as suggested"), this)),
      m_exclude(new QPushButton(tr("Exclude from the data"), this)),
      m_tabs(new QTabWidget(this)),
      m_labels(new QListWidget(this)),
      m_duplicates(new QListWidget(this)),
      m_outliers(new QListWidget(this)),
      m_job(new BackgroundJob(this)),
      m_report(std::make_unique<doctor::DoctorReport>()) {
  setObjectName(QStringLiteral("doctorPanel"));
  m_folds->setObjectName(QStringLiteral("doctorFolds"));
  m_folds->setRange(2, 20);
  m_folds->setValue(3);
  m_folds->setToolTip(
      tr("The training data is dealt into this many folds; each is predicted "
         "by a model trained on the others."));
  m_epochs->setObjectName(QStringLiteral("doctorEpochs"));
  m_epochs->setRange(1, 1000);
  m_epochs->setValue(2);
  m_epochs->setToolTip(tr("The short schedule each fold's model trains."));
  m_limit->setObjectName(QStringLiteral("doctorLimit"));
  m_limit->setRange(0, 100000000);
  m_limit->setSpecialValueText(tr("all"));
  m_limit->setSingleStep(1000);
  m_limit->setToolTip(tr("Examine a stratified subset of the training data (all: every sample)."));
  m_checkLabels->setObjectName(QStringLiteral("doctorCheckLabels"));
  m_run->setObjectName(QStringLiteral("runDoctor"));
  m_stop->setObjectName(QStringLiteral("stopDoctor"));
  m_stop->setEnabled(false);
  m_progress->setObjectName(QStringLiteral("doctorProgress"));
  m_progress->setRange(0, 1000);
  m_progress->setValue(0);
  m_progress->setTextVisible(true);
  m_progress->setFormat(QString());
  m_status->setObjectName(QStringLiteral("doctorStatus"));
  m_status->setWordWrap(true);
  m_summary->setObjectName(QStringLiteral("doctorSummary"));
  m_summary->setWordWrap(true);
  m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
  m_balance->setObjectName(QStringLiteral("doctorBalance"));
  m_balance->setWordWrap(true);
  m_classWeights->setObjectName(QStringLiteral("doctorClassWeights"));
  m_classWeights->setToolTip(
      tr("Weigh each class's loss by the inverse of its share "
         "(train.class_weights: \"auto\"; undoable)."));
  m_classWeights->hide();
  m_sampler->setObjectName(QStringLiteral("doctorSampler"));
  m_sampler->setToolTip(
      tr("Draw each training epoch with every class equally likely "
         "(train.sampler: \"balanced\"; undoable)."));
  m_sampler->hide();
  m_relabel->setObjectName(QStringLiteral("doctorRelabel"));
  m_exclude->setObjectName(QStringLiteral("doctorExclude"));
  // Keys on the galleries only: Delete and Ctrl+R mean other things on other pages.
  for (const auto& [key, button] : {std::pair{QKeySequence(Qt::Key_Delete), m_exclude},
                                    std::pair{QKeySequence(Qt::CTRL | Qt::Key_R), m_relabel}}) {
    auto* shortcut = new QShortcut(key, m_tabs);
    shortcut->setContext(Qt::WidgetWithChildrenShortcut);
    connect(shortcut, &QShortcut::activated, button, [button = button] {
      if (button->isEnabled()) button->click();
    });
  }
  setUpDoctorGallery(m_labels, QStringLiteral("doctorLabelIssues"),
                     QSize(kDoctorThumb, kDoctorThumb));
  setUpDoctorGallery(m_duplicates, QStringLiteral("doctorDuplicates"),
                     QSize(2 * kDoctorThumb + 6, kDoctorThumb));
  setUpDoctorGallery(m_outliers, QStringLiteral("doctorOutliers"),
                     QSize(kDoctorThumb, kDoctorThumb));
  m_tabs->setObjectName(QStringLiteral("doctorFindings"));
  m_tabs->addTab(m_labels, tr("Label issues"));
  m_tabs->addTab(m_duplicates, tr("Duplicates"));
  m_tabs->addTab(m_outliers, tr("Outliers"));

  connect(m_run, &QPushButton::clicked, this, &DoctorPanel::run);
  connect(m_stop, &QPushButton::clicked, this, &DoctorPanel::stop);
  connect(m_classWeights, &QPushButton::clicked, this, [this] {
    Json train = m_document->project().train;
    train["class_weights"] = "auto";
    m_document->editSection(QStringLiteral("train"), train, tr("Use class weights"));
  });
  connect(m_sampler, &QPushButton::clicked, this, [this] {
    Json train = m_document->project().train;
    train["sampler"] = "balanced";
    m_document->editSection(QStringLiteral("train"), train, tr("Use a balanced sampler"));
  });
  connect(m_relabel, &QPushButton::clicked, this, &DoctorPanel::relabelSelected);
  connect(m_exclude, &QPushButton::clicked, this, &DoctorPanel::excludeSelected);
  for (auto* list : {m_labels, m_duplicates, m_outliers})
    connect(list, &QListWidget::currentRowChanged, this, &DoctorPanel::updateActions);
  connect(m_tabs, &QTabWidget::currentChanged, this, &DoctorPanel::updateActions);
  // A relabel undone can be done again.
  // (Not while the document goes: its stack's last clear() comes after the rest of it is gone.)
  const auto undoLink = connect(m_document->undoStack(), &QUndoStack::indexChanged, this,
                                &DoctorPanel::updateActions);
  connect(m_document, &QObject::destroyed, this, [undoLink] { QObject::disconnect(undoLink); });
  // Undo and redo of an exclusion or an evening-out show on the galleries and buttons.
  connect(m_document, &ProjectDocument::sectionChanged, this, [this] {
    markExcluded();
    updateBalanceButtons();
    updateActions();
  });

  // Two rows, so that the tab fits beside the forms in a window half a 1920 screen wide.
  auto* settings = new QGridLayout;
  settings->addWidget(new QLabel(tr("Folds"), this), 0, 0);
  settings->addWidget(m_folds, 0, 1);
  settings->addWidget(new QLabel(tr("Epochs per fold"), this), 0, 2);
  settings->addWidget(m_epochs, 0, 3);
  settings->addWidget(new QLabel(tr("Samples"), this), 1, 0);
  settings->addWidget(m_limit, 1, 1);
  settings->addWidget(m_checkLabels, 1, 2, 1, 2);
  settings->setColumnStretch(4, 1);
  auto* runRow = new QHBoxLayout;
  runRow->addWidget(m_run);
  runRow->addWidget(m_stop);
  runRow->addWidget(m_progress, 1);
  auto* balanceRow = new QHBoxLayout;
  balanceRow->addWidget(m_classWeights);
  balanceRow->addWidget(m_sampler);
  balanceRow->addStretch(1);
  auto* actionRow = new QHBoxLayout;
  actionRow->addWidget(m_relabel);
  actionRow->addWidget(m_exclude);
  actionRow->addStretch(1);
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(settings);
  layout->addLayout(runRow);
  layout->addWidget(m_status);
  layout->addWidget(m_summary);
  layout->addWidget(m_balance);
  layout->addLayout(balanceRow);
  layout->addWidget(m_tabs, 1);
  layout->addLayout(actionRow);
  showIntro();
  connect(m_document, &ProjectDocument::loaded, this, [this] {
    // Nothing of the previous project stays: its report, its error, its progress.
    m_job->cancel();
    *m_report = doctor::DoctorReport{};
    m_pictures.clear();
    m_error.clear();
    m_progress->setRange(0, 1000);
    m_progress->setValue(0);
    m_progress->setFormat(QString());
    m_run->setEnabled(true);
    m_stop->setEnabled(false);
    fitToTask();
    showIntro();
    showReport();
  });
  fitToTask();
}

void DoctorPanel::fitToTask() {
  // Labels are checked where a sample has one class; the other tasks get the rest, unasked.
  const auto* def = m_document->tasks().find(m_document->project().task);
  const bool labels = !def || doctor::checksLabelsOf(*def);
  m_checkLabels->setEnabled(labels);
  m_checkLabels->setChecked(labels);
  m_checkLabels->setToolTip(
      labels ? tr("Off: duplicates, balance and image outliers only (no training).")
             : tr("Label checks are for one class per sample: this project's task gets "
                  "duplicates, balance and image outliers."));
}

DoctorPanel::~DoctorPanel() {
  delete m_job;  // stops the doctor and waits for it before the widgets it reports to go
}

void DoctorPanel::showIntro() {
  const QString where = QDir::toNativeSeparators(folder());
  if (m_checkLabels->isEnabled())
    m_status->setText(tr("Finds likely label errors, duplicates and leakage across splits, class "
                         "imbalance and outliers. Writes its report to %1.")
                          .arg(where));
  else
    m_status->setText(tr("Finds duplicates and leakage across splits, class imbalance and "
                         "outliers. Writes its report to %1.")
                          .arg(where));
}

QString DoctorPanel::folder() const {
  const QString path = m_document->filePath();
  if (path.isEmpty()) return {};
  return QDir(m_document->baseDir())
      .filePath(QString::fromStdString(doctor::defaultDoctorFolder(path.toStdString())));
}

bool DoctorPanel::isRunning() const {
  return m_job->isRunning();
}

void DoctorPanel::stop() {
  m_job->requestStop();
  m_status->setText(tr("Stopping after the current step..."));
}

void DoctorPanel::run() {
  if (m_job->isRunning()) return;
  if (m_document->filePath().isEmpty()) {
    m_status->setText(tr("Save the project first: the doctor writes its report beside it."));
    return;
  }
  m_error.clear();
  m_run->setEnabled(false);
  m_stop->setEnabled(true);
  m_progress->setValue(0);
  m_progress->setFormat(tr("starting"));
  project::LoadedProject loaded;
  loaded.project = m_document->project();
  loaded.path = m_document->filePath().toStdString();
  doctor::DoctorOptions o;
  o.registries = m_document->registries();
  o.folder = folder().toStdString();
  o.folds = m_folds->value();
  o.epochs = m_epochs->value();
  o.limit = m_limit->value();
  o.labels = m_checkLabels->isChecked();
  struct Outcome {
    doctor::DoctorReport report;
    std::map<std::string, QImage> pictures;
  };
  m_job->start(
      [this, loaded, o](const JobContext& job) mutable {
        Outcome out;
        o.progress = [this, &job](const doctor::DoctorProgress& p) {
          // Shown on the UI thread; dropped if this panel is gone by then.
          QMetaObject::invokeMethod(
              this, [this, p] { showProgress(p); }, Qt::QueuedConnection);
          return !job.cancelled();
        };
        o.thumbnail = [&out](const doctor::SampleRef& s, const cv::Mat& picture) {
          out.pictures[pictureKey(s)] = toQImage(picture);
        };
        out.report = doctor::runDoctor(loaded, o);
        return out;
      },
      [this](Outcome out) {
        *m_report = std::move(out.report);
        m_pictures = std::move(out.pictures);
        done();
      },
      [this](const QString& error) {
        m_error = error;
        *m_report = doctor::DoctorReport{};
        m_pictures.clear();
        done();
      });
  updateActions();  // no relabelling or excluding while the doctor reads the data
}

void DoctorPanel::showProgress(const doctor::DoctorProgress& p) {
  if (!m_job->isRunning()) return;
  m_progress->setValue(int(std::lround(1000 * std::clamp(p.fraction, 0.0, 1.0))));
  m_progress->setFormat(tr("%1: %2 spent, %3 left")
                            .arg(QString::fromStdString(p.stage), clock(p.seconds),
                                 p.remaining >= 0 ? clock(p.remaining) : tr("estimating")));
  if (!p.message.empty()) m_status->setText(QString::fromStdString(p.message));
}

void DoctorPanel::done() {
  m_run->setEnabled(true);
  m_stop->setEnabled(false);
  if (!m_error.isEmpty()) {
    m_progress->setFormat(tr("failed"));
    m_status->setText(tr("<b>The doctor stopped:</b> %1").arg(m_error.toHtmlEscaped()));
  } else if (m_report->stopped) {
    m_progress->setFormat(tr("stopped at %p%"));
    m_status->setText(tr("Stopped: what is finished is kept in %1; Run doctor goes on from there.")
                          .arg(QDir::toNativeSeparators(folder()).toHtmlEscaped()));
  } else {
    m_progress->setValue(1000);
    m_progress->setFormat(tr("done in %1").arg(clock(m_report->seconds)));
    m_status->setText(
        tr("Report: %1 (doctor.json and label_ranking.csv beside it).")
            .arg(QDir::toNativeSeparators(QDir(folder()).filePath(QStringLiteral("report.html")))
                     .toHtmlEscaped()));
  }
  showReport();
  Q_EMIT finished();
}

QString DoctorPanel::className(std::int64_t k) const {
  return k >= 0 && std::size_t(k) < m_report->classes.size()
             ? QString::fromStdString(m_report->classes[std::size_t(k)])
             : QString::number(k);
}

void DoctorPanel::showReport() {
  const auto& r = *m_report;
  m_labels->clear();
  m_duplicates->clear();
  m_outliers->clear();
  if (r.examined == 0) {
    m_tabs->setTabText(0, tr("Label issues"));
    m_tabs->setTabText(1, tr("Duplicates"));
    m_tabs->setTabText(2, tr("Outliers"));
    m_summary->clear();
    m_balance->clear();
    m_classWeights->hide();
    m_sampler->hide();
    updateActions();
    return;
  }
  QString text = tr("Examined %1 training samples").arg(r.examined);
  if (r.validationSamples) text += tr(", %1 validation").arg(r.validationSamples);
  if (r.testSamples) text += tr(", %1 test").arg(r.testSamples);
  text += QStringLiteral(". ");
  text +=
      (r.leaks == 1 ? tr("<b>Leakage: %1 pair across splits</b>; duplicates: %2 exact, %3 near.")
                    : tr("<b>Leakage: %1 pairs across splits</b>; duplicates: %2 exact, %3 near."))
          .arg(r.leaks)
          .arg(r.exactDuplicates)
          .arg(r.nearDuplicates);
  if (!r.probabilitiesFrom.empty())
    text +=
        QStringLiteral(" ") + tr("<b>Label errors: %1 likely</b> (confident learning on %2).")
                                  .arg(r.labelIssuesFlagged)
                                  .arg(QString::fromStdString(r.probabilitiesFrom).toHtmlEscaped());
  text += QStringLiteral(" ") + tr("Outliers: %1.").arg(r.outliersFound);
  if (r.unreadable)
    text += QStringLiteral(" ") + tr("%1 unreadable samples left out.").arg(r.unreadable);
  for (const auto& w : r.warnings)
    text +=
        QStringLiteral("<br>") + tr("Warning: %1").arg(QString::fromStdString(w).toHtmlEscaped());
  m_summary->setText(text);

  const auto& b = r.balance;
  m_balance->setText(tr("Balance: largest class / smallest %1, %2 effective classes of %3. %4")
                         .arg(b.imbalanceRatio, 0, 'f', 2)
                         .arg(b.effectiveClasses, 0, 'f', 2)
                         .arg(b.counts.size())
                         .arg(QString::fromStdString(b.advice)));
  updateBalanceButtons();

  const auto picture = [this](const doctor::SampleRef& s) {
    const auto it = m_pictures.find(pictureKey(s));
    return it == m_pictures.end() ? QImage() : it->second;
  };
  const auto thumb = [](const QImage& image) {
    return image.isNull()
               ? QPixmap()
               : QPixmap::fromImage(image.scaled(kDoctorThumb, kDoctorThumb, Qt::KeepAspectRatio,
                                                 Qt::FastTransformation));
  };
  for (const auto& issue : r.labelIssues) {
    auto* item = new QListWidgetItem(m_labels);
    item->setIcon(thumb(picture(issue.sample)));
    item->setText(tr("%1 → %2\np %3")
                      .arg(className(issue.sample.label), className(issue.suggested))
                      .arg(issue.selfConfidence, 0, 'f', 3));
    item->setToolTip(tr("%1\nlabelled %2; looks like %3 (p %4 against %5 for its label)")
                         .arg(QString::fromStdString(issue.sample.item))
                         .arg(className(issue.sample.label), className(issue.suggested))
                         .arg(issue.suggestedProbability, 0, 'f', 3)
                         .arg(issue.selfConfidence, 0, 'f', 3));
    item->setData(Qt::UserRole, qlonglong(issue.sample.index));
    item->setData(kFindingRole, int(m_labels->count() - 1));
  }
  for (const auto& d : r.duplicates) {
    QPixmap pair(2 * kDoctorThumb + 6, kDoctorThumb);
    pair.fill(Qt::transparent);
    {
      QPainter p(&pair);
      const QPixmap a = thumb(picture(d.a)), b2 = thumb(picture(d.b));
      if (!a.isNull()) p.drawPixmap(0, 0, a);
      if (!b2.isNull()) p.drawPixmap(kDoctorThumb + 6, 0, b2);
    }
    auto* item = new QListWidgetItem(m_duplicates);
    item->setData(kFindingRole, int(m_duplicates->count() - 1));
    item->setIcon(pair);
    const QString kind = d.exact ? tr("exact") : tr("near, %1 bits").arg(d.distance);
    item->setText(
        d.leak()
            ? tr("LEAK %1 / %2\n%3")
                  .arg(QString::fromStdString(d.a.split), QString::fromStdString(d.b.split), kind)
            : tr("%1 / %2\n%3")
                  .arg(QString::fromStdString(d.a.split), QString::fromStdString(d.b.split), kind));
    item->setToolTip(tr("%1\n%2\nsimilarity %3")
                         .arg(QString::fromStdString(d.a.item), QString::fromStdString(d.b.item))
                         .arg(d.similarity, 0, 'f', 4));
  }
  for (const auto& o : r.outliers) {
    auto* item = new QListWidgetItem(m_outliers);
    item->setData(kFindingRole, int(m_outliers->count() - 1));
    item->setIcon(thumb(picture(o.sample)));
    item->setText(QStringLiteral("%1\n%2").arg(QString::fromStdString(o.kind),
                                               elideMiddle(QString::fromStdString(o.why), 24)));
    item->setToolTip(QStringLiteral("%1\n%2").arg(QString::fromStdString(o.sample.item),
                                                  QString::fromStdString(o.why)));
  }
  m_tabs->setTabText(0, tr("Label issues (%1)").arg(r.labelIssues.size()));
  m_tabs->setTabText(1, tr("Duplicates (%1)").arg(r.duplicates.size()));
  m_tabs->setTabText(2, tr("Outliers (%1)").arg(r.outliers.size()));
  markExcluded();
  updateActions();
}

const doctor::SampleRef* DoctorPanel::selectedSample(const doctor::LabelIssue** issue) const {
  if (issue) *issue = nullptr;
  auto* list = qobject_cast<QListWidget*>(m_tabs->currentWidget());
  const QListWidgetItem* item = list ? list->currentItem() : nullptr;
  if (!item) return nullptr;
  const auto k = std::size_t(item->data(kFindingRole).toInt());
  const auto& r = *m_report;
  if (list == m_labels && k < r.labelIssues.size()) {
    if (issue) *issue = &r.labelIssues[k];
    return &r.labelIssues[k].sample;
  }
  // A duplicate pair: its first image (the training copy when the pair is a leak), so the
  // validation or test split stays as it was.
  if (list == m_duplicates && k < r.duplicates.size()) return &r.duplicates[k].a;
  if (list == m_outliers && k < r.outliers.size()) return &r.outliers[k].sample;
  return nullptr;
}

void DoctorPanel::updateActions() {
  const doctor::LabelIssue* issue = nullptr;
  const doctor::SampleRef* sample = selectedSample(&issue);
  const bool running = isRunning();
  m_exclude->setEnabled(!running && sample && !isExcluded(*m_document, *sample));
  m_exclude->setToolTip(sample ? tr("Add %1 to data.exclude: left out of every split from the "
                                    "next run (Delete; Edit > Undo takes it back).")
                                     .arg(QString::fromStdString(sample->item))
                               : tr("Select a finding to exclude its sample."));
  if (!issue || running) {
    m_relabel->setEnabled(false);
    m_relabel->setToolTip(tr("Select a label issue to relabel it as the class it looks like."));
    return;
  }
  const RelabelPlan plan =
      planRelabel(*m_document, issue->sample, issue->suggested, m_report->classes, folder());
  m_relabel->setEnabled(plan.kind != RelabelPlan::Kind::None);
  m_relabel->setToolTip(plan.kind == RelabelPlan::Kind::None
                            ? plan.why
                            : plan.description + tr(" (Ctrl+R; Edit > Undo takes it back)"));
}

void DoctorPanel::relabelSelected() {
  const doctor::LabelIssue* issue = nullptr;
  selectedSample(&issue);
  if (!issue || isRunning()) return;
  const RelabelPlan plan =
      planRelabel(*m_document, issue->sample, issue->suggested, m_report->classes, folder());
  if (const QString error = relabel(m_document, plan); !error.isEmpty()) {
    m_status->setText(tr("Not relabelled: %1").arg(error.toHtmlEscaped()));
    return;
  }
  m_status->setText(
      plan.kind == RelabelPlan::Kind::Manifest
          ? tr("%1. Edit > Undo puts the label back.").arg(plan.description.toHtmlEscaped())
          : tr("%1: %2 lists the moves to make (from,to); Edit > Undo takes it off the list.")
                .arg(plan.description.toHtmlEscaped(),
                     QString::fromStdString(plan.file).toHtmlEscaped()));
  m_relabel->setEnabled(false);
}

void DoctorPanel::excludeSelected() {
  const doctor::SampleRef* sample = selectedSample(nullptr);
  if (!sample || isRunning()) return;
  excludeSample(m_document, *sample);
  m_status->setText(tr("%1 is left out of the data from the next run (data.exclude); Edit > "
                       "Undo takes it back.")
                        .arg(QString::fromStdString(sample->item).toHtmlEscaped()));
}

void DoctorPanel::markExcluded() {
  const auto& r = *m_report;
  const auto mark = [this](QListWidget* list, int row, const doctor::SampleRef& sample) {
    auto* item = list->item(row);
    if (!item) return;
    const bool out = isExcluded(*m_document, sample);
    QFont font = item->font();
    font.setStrikeOut(out);
    item->setFont(font);
    item->setForeground(out ? palette().brush(QPalette::Disabled, QPalette::Text)
                            : palette().brush(QPalette::Active, QPalette::Text));
  };
  for (std::size_t k = 0; k < r.labelIssues.size(); ++k)
    mark(m_labels, int(k), r.labelIssues[k].sample);
  for (std::size_t k = 0; k < r.duplicates.size(); ++k)
    mark(m_duplicates, int(k), r.duplicates[k].a);
  for (std::size_t k = 0; k < r.outliers.size(); ++k)
    mark(m_outliers, int(k), r.outliers[k].sample);
}

void DoctorPanel::updateBalanceButtons() {
  const Json& train = m_document->project().train;
  const bool evened = train.is_object() && (train.contains("class_weights") ||
                                            train.value("sampler", Json()) == "balanced");
  const bool unbalanced = !m_report->balance.advice.empty();
  m_classWeights->setVisible(unbalanced && !evened);
  m_sampler->setVisible(unbalanced && !evened);
}

}  // namespace netsmith::ui
