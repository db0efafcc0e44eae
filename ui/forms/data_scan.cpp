// The Data page's scan, on a worker thread: core's data scan (data/data_scan.h, the job
// `netsmith-cli data-stats` runs too) in Qt's containers, with its progress.
#include "data/data_scan.h"
#include "forms/data_page.h"
#include "util/image_convert.h"

namespace netsmith::ui {

namespace {
constexpr int kSamplesPerClass = 8;
}

DataScan scanProjectData(const project::Project& project, const data::DataConfig& config,
                         const augment::TransformRegistry& transforms,
                         const data::TargetStatisticsFactory& statistics,
                         const std::function<bool(qint64, qint64)>& progress) {
  DataScan s;
  try {
    data::DataScanOptions options;
    options.samplesPerClass = kSamplesPerClass;
    options.targetStatistics = statistics;
    options.progress = [&progress](const std::string&, std::int64_t done, std::int64_t total) {
      return progress(done, total);
    };
    const auto scan = data::scanProjectData(project, config, transforms, options);
    if (scan.cancelled) {
      s.cancelled = true;
      return s;
    }
    for (const auto& c : scan.classes)
      s.classes << QString::fromStdString(c);
    s.train = scan.train;
    s.validation = scan.validation;
    s.test = scan.test;
    const auto counts = [](const std::vector<std::int64_t>& v) {
      return QVector<qint64>(v.begin(), v.end());
    };
    s.trainCounts = counts(scan.trainCounts);
    s.validationCounts = counts(scan.validationCounts);
    s.testCounts = counts(scan.testCounts);
    for (const auto& subset : scan.subsets)
      s.subsets << QString::fromStdString(subset);
    for (const auto& item : scan.skipped)
      s.skipped << QString::fromStdString(item.item + ": " + item.reason);
    s.mean = QVector<double>(scan.mean.begin(), scan.mean.end());
    s.std = QVector<double>(scan.std.begin(), scan.std.end());
    s.normalization = scan.normalizationMode == "none" ? QObject::tr("none")
                      : scan.normalizationMode == "auto"
                          ? QObject::tr("auto (computed over the training split)")
                          : QObject::tr("explicit");
    for (std::size_t k = 0; k < scan.samples.size(); ++k) {
      s.samples << toQImage(scan.samples[k]);
      s.sampleLabels << int(scan.sampleLabels[k]);
      s.sampleCaptions << (k < scan.sampleCaptions.size()
                               ? QString::fromStdString(scan.sampleCaptions[k])
                               : QString());
    }
    s.oneClassPerSample = scan.oneClassPerSample;
    s.targets = scan.targetSummary;
    s.ok = true;
  } catch (const std::exception& e) {
    s.error = QString::fromStdString(e.what());
  }
  return s;
}

}  // namespace netsmith::ui
