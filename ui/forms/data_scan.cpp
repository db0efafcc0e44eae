// The Data page's scan, on a worker thread: the project's data opened and every image of every
// split decoded once (the unreadable ones listed and not counted), the training split's
// statistics, and a few samples of each class.
#include <algorithm>

#include "augment/transform.h"
#include "data/dataset_stats.h"
#include "data/project_data.h"
#include "forms/data_page.h"
#include "util/image_convert.h"

namespace netsmith::ui {

namespace {
constexpr int kSamplesPerClass = 8;
}

DataScan scanProjectData(const project::Project& project, const std::string& baseDir,
                         const std::function<bool(qint64, qint64)>& progress) {
  DataScan s;
  try {
    auto p = project;
    p.augment = Json::array();
    auto pd = data::openProjectData(p, baseDir, augment::TransformRegistry::withBuiltins(),
                                    data::userCacheDir());
    if (!pd) {
      s.cancelled = true;
      return s;
    }
    auto& d = pd->data;
    for (const auto& c : d.classes)
      s.classes << QString::fromStdString(c);
    std::vector<data::SkippedItem> skipped = d.skippedAtScan();
    // Every image of every split decoded once: the unreadable ones are listed and left out of
    // the counts (training would skip them), mean/std come out of the training split.
    const data::SampleProcessor plain(pd->format, nullptr, {}, {});
    const std::int64_t all = d.train.size() + d.validation.size() + d.test.size();
    std::vector<std::int64_t> unreadable;
    const auto stats = data::computeChannelStats(
        d.train, plain, data::ErrorPolicy::Skip,
        [&](std::int64_t done, std::int64_t) { return progress(done, all); }, &skipped,
        &unreadable);
    if (!stats) {
      s.cancelled = true;
      return s;
    }
    std::int64_t offset = d.train.size();
    data::removePositions(d.train, unreadable);
    for (auto* set : {&d.validation, &d.test}) {
      if (set->empty()) continue;
      const std::int64_t size = set->size();
      if (!data::dropUnreadable(
              *set, plain, data::ErrorPolicy::Skip,
              [&](std::int64_t done, std::int64_t) { return progress(offset + done, all); },
              &skipped)) {
        s.cancelled = true;
        return s;
      }
      offset += size;
    }
    s.train = d.train.size();
    s.validation = d.validation.size();
    s.test = d.test.size();
    auto counts = [&](const data::SampleSet& set) {
      QVector<qint64> out;
      for (auto c : data::classCounts(set, d.numClasses()))
        out << c;
      return out;
    };
    s.trainCounts = counts(d.train);
    s.validationCounts = counts(d.validation);
    s.testCounts = counts(d.test);
    for (const auto& subset : d.subsets)
      s.subsets << QString::fromStdString(subset);
    for (const auto& item : skipped)
      s.skipped << QString::fromStdString(item.item + ": " + item.reason);
    s.mean = QVector<double>(stats->mean.begin(), stats->mean.end());
    s.std = QVector<double>(stats->std.begin(), stats->std.end());
    const auto& n = pd->normalization;
    s.normalization = n.mean.empty() ? QObject::tr("none")
                      : n.computed   ? QObject::tr("auto (computed over the training split)")
                                     : QObject::tr("explicit");
    // A few training images of every class, as the model sees them.
    std::vector<int> taken(std::size_t(d.numClasses()), 0);
    for (std::int64_t k = 0; k < d.train.size(); ++k) {
      const auto label = d.train.source->label(d.train.indices[std::size_t(k)]);
      if (label < 0 || label >= d.numClasses() || taken[std::size_t(label)] >= kSamplesPerClass)
        continue;
      try {
        s.samples << toQImage(plain.plain(d.train, k));
        s.sampleLabels << int(label);
        ++taken[std::size_t(label)];
      } catch (const std::exception&) {
        // corrupt: already listed as skipped
      }
      if (std::all_of(taken.begin(), taken.end(), [](int t) { return t >= kSamplesPerClass; }))
        break;
    }
    s.ok = true;
  } catch (const std::exception& e) {
    s.error = QString::fromStdString(e.what());
  }
  return s;
}

}  // namespace netsmith::ui
