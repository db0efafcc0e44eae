#include "shell/example_data_box.h"

#include <QComboBox>
#include <QDir>
#include <QFileDialog>
#include <QGridLayout>
#include <QLabel>
#include <QLocale>
#include <QProgressBar>
#include <QPushButton>
#include <QSpinBox>

#include <cmath>

#include "common/error.h"
#include "data/example_datasets.h"
#include "util/background_job.h"

namespace netsmith::ui {

namespace {

const data::ExampleDatasetInfo* infoOf(const QString& name) {
  for (const auto& info : data::exampleDatasets())
    if (QString::fromStdString(info.name) == name) return &info;
  return nullptr;
}

/// What a job hands back: the folder, and whether it was stopped before the end.
struct Made {
  QString folder;
  bool cancelled = false;
};

}  // namespace

ExampleDataBox::ExampleDataBox(QWidget* parent)
    : QWidget(parent),
      m_sets(new QComboBox(this)),
      m_train(new QSpinBox(this)),
      m_make(new QPushButton(tr("Make..."), this)),
      m_cancel(new QPushButton(tr("Cancel"), this)),
      m_progress(new QProgressBar(this)),
      m_status(new QLabel(this)),
      m_job(new BackgroundJob(this)) {
  setObjectName(QStringLiteral("exampleData"));
  m_sets->setObjectName(QStringLiteral("exampleDataSet"));
  for (const auto& info : data::exampleDatasets()) {
    m_sets->addItem(QString::fromStdString(info.name), QString::fromStdString(info.name));
    m_sets->setItemData(m_sets->count() - 1, QString::fromStdString(info.description),
                        Qt::ToolTipRole);
  }
  m_train->setObjectName(QStringLiteral("exampleDataTrain"));
  m_train->setRange(10, 1000000);
  m_train->setSingleStep(500);
  m_train->setSuffix(tr(" training images"));
  m_train->setToolTip(tr("Test images in the same proportion as the data set's default"));
  m_make->setObjectName(QStringLiteral("exampleDataMake"));
  m_make->setToolTip(
      tr("Choose a folder and write the data set into it, from Fashion-MNIST's "
         "items (nothing is downloaded)"));
  m_cancel->setObjectName(QStringLiteral("exampleDataCancel"));
  m_cancel->setEnabled(false);
  m_progress->setObjectName(QStringLiteral("exampleDataProgress"));
  m_progress->hide();
  m_status->setObjectName(QStringLiteral("exampleDataStatus"));
  m_status->setWordWrap(true);
  m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

  auto* layout = new QGridLayout(this);
  layout->setContentsMargins(0, 0, 0, 0);
  layout->addWidget(new QLabel(tr("<b>Example data</b> for the other tasks"), this), 0, 0, 1, 4);
  layout->addWidget(m_sets, 1, 0, 1, 4);
  layout->addWidget(m_train, 2, 0);
  layout->addWidget(m_make, 2, 1);
  layout->addWidget(m_cancel, 2, 2);
  layout->addWidget(m_progress, 3, 0, 1, 4);
  layout->addWidget(m_status, 4, 0, 1, 4);
  layout->setColumnStretch(3, 1);

  const auto showDefaults = [this] {
    const auto* info = infoOf(m_sets->currentData().toString());
    if (!info) return;
    m_train->setValue(int(info->train));
    m_status->setText(QString::fromStdString(info->description));
  };
  connect(m_sets, qOverload<int>(&QComboBox::currentIndexChanged), this, showDefaults);
  showDefaults();
  connect(m_make, &QPushButton::clicked, this, &ExampleDataBox::chooseFolder);
  connect(m_cancel, &QPushButton::clicked, this, [this] {
    m_job->requestStop();
    m_status->setText(tr("Stopping..."));
  });
  connect(m_job, &BackgroundJob::progress, this, [this](qint64 done, qint64 total) {
    m_progress->setMaximum(int(std::min<qint64>(total, 1 << 30)));
    m_progress->setValue(int(std::min<qint64>(done, 1 << 30)));
  });
}

bool ExampleDataBox::isRunning() const {
  return m_job->isRunning();
}

void ExampleDataBox::chooseFolder() {
  const QString name = m_sets->currentData().toString();
  const QString parent = QFileDialog::getExistingDirectory(
      this, tr("Where to write the %1 data set").arg(name), QDir::homePath());
  if (parent.isEmpty()) return;
  // A new folder named after the data set; another number when that one is taken.
  QString folder = QDir(parent).filePath(name);
  for (int k = 2; QFileInfo::exists(folder) && !QDir(folder).isEmpty(); ++k)
    folder = QDir(parent).filePath(QStringLiteral("%1-%2").arg(name).arg(k));
  make(name, folder);
}

void ExampleDataBox::make(const QString& name, const QString& folder) {
  if (m_job->isRunning()) return;
  const auto* info = infoOf(name);
  if (!info) {
    m_status->setText(tr("No example data set is called \"%1\".").arg(name));
    return;
  }
  data::ExampleDatasetOptions options;
  options.name = name.toStdString();
  options.out = QDir::cleanPath(folder).toStdString();
  options.train = m_train->value();
  // The test split in the default proportion, at least one image.
  options.test = std::max<std::int64_t>(
      1, std::llround(double(info->test) * double(options.train) / double(info->train)));
  m_make->setEnabled(false);
  m_sets->setEnabled(false);
  m_train->setEnabled(false);
  m_cancel->setEnabled(true);
  m_progress->setValue(0);
  m_progress->show();
  m_status->setText(tr("Writing %1 into %2...").arg(name, QDir::toNativeSeparators(folder)));
  m_job->start(
      [options](const JobContext& job) mutable {
        bool stopped = false;
        options.progress = [&job, &stopped](std::int64_t done, std::int64_t total) {
          job.progress(done, total);
          stopped = job.cancelled();
          return !stopped;
        };
        data::makeExampleDataset(options);
        return Made{QString::fromStdString(options.out), stopped};
      },
      [this](const Made& made) { finished(made.folder, QString(), made.cancelled); },
      [this, folder](const QString& error) { finished(folder, error, false); });
}

void ExampleDataBox::finished(const QString& folder, const QString& error, bool cancelled) {
  m_make->setEnabled(true);
  m_sets->setEnabled(true);
  m_train->setEnabled(true);
  m_cancel->setEnabled(false);
  m_progress->hide();
  const QString where = QDir::toNativeSeparators(folder);
  if (!error.isEmpty()) {
    m_status->setText(tr("<b>Not made:</b> %1").arg(error.toHtmlEscaped()));
  } else if (cancelled) {
    m_status->setText(
        tr("Cancelled: %1 is incomplete (it has no manifest); delete it or make the data set "
           "into another folder.")
            .arg(where.toHtmlEscaped()));
  } else {
    m_status->setText(tr("Written to %1.").arg(where.toHtmlEscaped()));
    Q_EMIT made(folder);
  }
}

}  // namespace netsmith::ui
