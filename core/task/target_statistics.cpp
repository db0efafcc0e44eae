#include "task/target_statistics.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "common/text_format.h"
#include "data/dataset_source.h"

namespace netsmith::task {

namespace {

/// The class (or label) name of index k, or its number when the data names fewer.
std::string nameOf(const std::vector<std::string>& names, std::size_t k) {
  return k < names.size() ? names[k] : std::to_string(k);
}

/// One member per class: {name: count}.
Json perClass(const std::vector<std::string>& classes, const std::vector<std::int64_t>& counts) {
  std::vector<std::pair<std::string, Json>> members;
  members.reserve(counts.size());
  for (std::size_t k = 0; k < classes.size() && k < counts.size(); ++k)
    members.emplace_back(classes[k], counts[k]);
  return namedMembers(std::move(members));
}

/// Bars of `values`, one per name, as the training split's series.
data::SummaryChart classBars(std::string title, const std::vector<std::string>& names,
                             std::vector<double> values, std::string yLabel) {
  data::SummaryChart chart;
  chart.title = std::move(title);
  chart.names = names;
  chart.series.push_back({"train", {}, std::move(values)});
  chart.yLabel = std::move(yLabel);
  return chart;
}

std::vector<double> asDoubles(const std::vector<std::int64_t>& v) {
  return std::vector<double>(v.begin(), v.end());
}

/// "0: 3 1: 5": the non-zero counts of a histogram by number.
std::string countsByNumber(const std::vector<std::int64_t>& counts) {
  std::string out;
  for (std::size_t n = 0; n < counts.size(); ++n)
    if (counts[n] > 0) out += ' ' + std::to_string(n) + ": " + std::to_string(counts[n]);
  return out;
}

// ---------------------------------------------------------------------------------------------

/// Multi-label: images per label; images with 0, 1, 2, ... labels; the co-occurrence of the
/// kCooccurrenceLabels most frequent labels.
class LabelSetStatistics final : public data::TargetStatistics {
 public:
  void begin(const data::DatasetSource& source, const std::vector<std::string>& classes,
             const std::vector<std::string>&) override {
    m_classes = classes;
    m_width = std::size_t(std::max<std::int64_t>(0, source.targetWidth()));
    m_positives.assign(m_width, 0);
    m_perImage.assign(m_width + 1, 0);
  }
  void add(const data::DatasetSource& source, std::int64_t index) override {
    auto labels = source.positiveLabels(index);
    std::vector<std::int32_t> kept;
    for (const auto a : labels)
      if (a >= 0 && std::size_t(a) < m_width) {
        ++m_positives[std::size_t(a)];
        kept.push_back(std::int32_t(a));
      }
    ++m_perImage[std::min(labels.size(), m_width)];
    m_labels.push_back(std::move(kept));
  }
  data::TargetSummary summary() const override {
    data::TargetSummary s;
    // The most frequent labels (ties: in class order), shown in class order.
    std::vector<std::size_t> order(m_positives.size());
    std::iota(order.begin(), order.end(), std::size_t(0));
    std::stable_sort(order.begin(), order.end(), [this](std::size_t a, std::size_t b) {
      return m_positives[a] > m_positives[b];
    });
    if (order.size() > kCooccurrenceLabels) order.resize(kCooccurrenceLabels);
    std::sort(order.begin(), order.end());
    const std::size_t k = order.size();
    std::vector<std::int64_t> shownAt(m_positives.size(), -1);
    for (std::size_t a = 0; a < k; ++a)
      shownAt[order[a]] = std::int64_t(a);
    std::vector<std::vector<std::int64_t>> both(k, std::vector<std::int64_t>(k, 0));
    std::vector<std::size_t> present;
    for (const auto& labels : m_labels) {
      present.clear();
      for (const auto c : labels)
        if (shownAt[std::size_t(c)] >= 0) present.push_back(std::size_t(shownAt[std::size_t(c)]));
      for (auto a : present)
        for (auto b : present)
          ++both[a][b];
    }
    std::vector<std::string> shown;
    for (const auto a : order)
      shown.push_back(nameOf(m_classes, a));

    s.jsonKey = "labels";
    s.json = Json{{"train_positives", perClass(m_classes, m_positives)},
                  {"cooccurrence", Json{{"labels", shown}, {"counts", both}}},
                  {"labels_per_image", m_perImage}};
    s.table.columns = {"label", "train images"};
    for (std::size_t c = 0; c < m_classes.size() && c < m_positives.size(); ++c)
      s.table.rows.push_back({m_classes[c], std::to_string(m_positives[c])});
    s.lines.push_back("Labels per image (train):" + countsByNumber(m_perImage));
    s.chart =
        classBars("Label frequencies", m_classes, asDoubles(m_positives), "images with the label");
    // The co-occurrence: heat by the share of the row label's images that also hold the
    // column's.
    s.viewTitle = "Co-occurrence";
    s.view.rowHeader = true;
    s.view.columns.push_back("label");
    s.view.columns.insert(s.view.columns.end(), shown.begin(), shown.end());
    for (std::size_t a = 0; a < k; ++a) {
      std::vector<std::string> row{shown[a]};
      std::vector<double> heat;
      std::vector<std::string> tips;
      const double positives = double(both[a][a]);
      for (std::size_t b = 0; b < k; ++b) {
        const auto count = both[a][b];
        row.push_back(std::to_string(count));
        heat.push_back(count ? std::min(1.0, 0.05 + (positives > 0 ? double(count) / positives : 0))
                             : 0.0);
        tips.push_back(std::to_string(count) + " training images hold both " + shown[a] + " and " +
                       shown[b]);
      }
      s.view.rows.push_back(std::move(row));
      s.view.heat.push_back(std::move(heat));
      s.view.cellTips.push_back(std::move(tips));
    }
    if (m_positives.size() > k)
      s.view.tooltip = "The " + std::to_string(k) + " most frequent of " +
                       std::to_string(m_positives.size()) + " labels";
    return s;
  }

 private:
  std::vector<std::string> m_classes;
  std::size_t m_width = 0;
  std::vector<std::int64_t> m_positives, m_perImage;
  std::vector<std::vector<std::int32_t>> m_labels;  ///< each training image's labels
};

// ---------------------------------------------------------------------------------------------

/// Regression: each target's values: their range, mean and spread, and a histogram.
class TargetValueStatistics final : public data::TargetStatistics {
 public:
  void begin(const data::DatasetSource& source, const std::vector<std::string>&,
             const std::vector<std::string>& targets) override {
    m_names = targets;
    m_values.assign(std::size_t(std::max<std::int64_t>(0, source.targetWidth())), {});
    m_row.resize(m_values.size());
  }
  void add(const data::DatasetSource& source, std::int64_t index) override {
    source.targetRow(index, m_row.data());
    for (std::size_t a = 0; a < m_values.size(); ++a)
      m_values[a].push_back(m_row[a]);
  }
  data::TargetSummary summary() const override {
    data::TargetSummary s;
    s.jsonKey = "targets";
    s.table.columns = {"target", "min", "mean", "std", "max"};
    std::vector<std::pair<std::string, Json>> members;
    for (std::size_t k = 0; k < m_values.size() && k < m_names.size(); ++k) {
      const auto r = spread(m_values[k]);
      members.emplace_back(m_names[k],
                           Json{{"min", r.min}, {"max", r.max}, {"mean", r.mean}, {"std", r.std}});
      s.table.rows.push_back({m_names[k], formatted("%.5g", r.min), formatted("%.5g", r.mean),
                              formatted("%.5g", r.std), formatted("%.5g", r.max)});
    }
    s.json = namedMembers(std::move(members));
    s.chart = histograms();
    return s;
  }

 private:
  struct Spread {
    double min = 0, max = 0, mean = 0, std = 0;
  };
  /// The minimum, maximum, mean and standard deviation of the finite values.
  static Spread spread(const std::vector<float>& v) {
    Spread s;
    double sum = 0;
    std::size_t n = 0;
    for (float x : v) {
      if (!std::isfinite(x)) continue;
      s.min = n ? std::min(s.min, double(x)) : double(x);
      s.max = n ? std::max(s.max, double(x)) : double(x);
      sum += x;
      ++n;
    }
    if (n == 0) return s;
    s.mean = sum / double(n);
    double sq = 0;  // about the mean: no cancellation for values far from zero
    for (float x : v)
      if (std::isfinite(x)) sq += (double(x) - s.mean) * (double(x) - s.mean);
    s.std = std::sqrt(sq / double(n));
    return s;
  }
  /// One histogram per target, 30 bins over the finite values of all targets.
  data::SummaryChart histograms() const {
    constexpr int kBins = 30;
    data::SummaryChart chart;
    chart.title = "Target histogram";
    chart.xLabel = "value";
    chart.yLabel = "training images";
    double lo = 0, hi = 0;
    bool any = false;
    for (const auto& values : m_values)
      for (float v : values) {
        if (!std::isfinite(v)) continue;
        lo = any ? std::min(lo, double(v)) : double(v);
        hi = any ? std::max(hi, double(v)) : double(v);
        any = true;
      }
    if (hi <= lo) hi = lo + 1;
    const double width = (hi - lo) / kBins;
    for (std::size_t k = 0; k < m_values.size(); ++k) {
      data::SummaryChart::Series series;
      series.name = k < m_names.size() ? m_names[k] : "target " + std::to_string(k);
      series.y.assign(kBins, 0.0);
      for (int b = 0; b < kBins; ++b)
        series.x.push_back(lo + (b + 0.5) * width);
      for (float v : m_values[k])
        if (std::isfinite(v))
          series.y[std::size_t(std::clamp(int((double(v) - lo) / width), 0, kBins - 1))] += 1;
      chart.series.push_back(std::move(series));
    }
    return chart;
  }

  std::vector<std::string> m_names;
  std::vector<std::vector<float>> m_values;  ///< [target][sample]
  std::vector<float> m_row;
};

// ---------------------------------------------------------------------------------------------

/// Segmentation: the training pixels of each class in the masks (at their files' size), and
/// the ignored ones (255).
class MaskPixelStatistics final : public data::TargetStatistics {
 public:
  void begin(const data::DatasetSource&, const std::vector<std::string>& classes,
             const std::vector<std::string>&) override {
    m_classes = classes;
    m_pixels.assign(classes.size(), 0);
  }
  void add(const data::DatasetSource& source, std::int64_t index) override {
    if (!source.hasMasks()) return;
    const cv::Mat mask = data::readMask(source, index);
    std::array<std::int64_t, 256> histogram{};
    for (int y = 0; y < mask.rows; ++y) {
      const uchar* m = mask.ptr<uchar>(y);
      for (int x = 0; x < mask.cols; ++x)
        ++histogram[m[x]];
    }
    for (std::size_t c = 0; c < m_pixels.size() && c < 255; ++c)
      m_pixels[c] += histogram[c];
    m_ignored += histogram[255];
  }
  data::TargetSummary summary() const override {
    data::TargetSummary s;
    // Shares of the counted pixels, as the figures' pixel_share (ignored ones left out).
    const std::int64_t counted = std::accumulate(m_pixels.begin(), m_pixels.end(), std::int64_t(0));
    const auto share = [](std::int64_t part, std::int64_t whole) {
      return whole > 0 ? 100.0 * double(part) / double(whole) : 0.0;
    };
    s.jsonKey = "pixels";
    s.json = Json{{"train", perClass(m_classes, m_pixels)}, {"ignored", m_ignored}};
    s.table.columns = {"class", "train pixels", "share"};
    std::vector<double> shares;
    for (std::size_t c = 0; c < m_classes.size() && c < m_pixels.size(); ++c) {
      shares.push_back(share(m_pixels[c], counted));
      s.table.rows.push_back(
          {m_classes[c], std::to_string(m_pixels[c]), formatted("%.2f%%", shares.back())});
    }
    s.lines.push_back("Ignored pixels (255, train): " + std::to_string(m_ignored) + ", " +
                      formatted("%.2f%% of all pixels", share(m_ignored, counted + m_ignored)));
    s.chart = classBars("Class pixels", m_classes, shares, "share of the pixels not ignored (%)");
    return s;
  }

 private:
  std::vector<std::string> m_classes;
  std::vector<std::int64_t> m_pixels;
  std::int64_t m_ignored = 0;
};

// ---------------------------------------------------------------------------------------------

/// Detection: training boxes per class and their sizes; images by their number of boxes.
class BoxStatistics final : public data::TargetStatistics {
 public:
  void begin(const data::DatasetSource&, const std::vector<std::string>& classes,
             const std::vector<std::string>&) override {
    m_classes = classes;
    m_perClass.assign(classes.size(), 0);
  }
  void add(const data::DatasetSource& source, std::int64_t index) override {
    if (!source.hasBoxes()) return;
    const auto boxes = data::readBoxes(source, index);
    if (m_perImage.size() <= boxes.size()) m_perImage.resize(boxes.size() + 1, 0);
    ++m_perImage[boxes.size()];
    for (const auto& b : boxes) {
      if (b.cls >= 0 && std::size_t(b.cls) < m_perClass.size()) ++m_perClass[std::size_t(b.cls)];
      m_boxClasses.push_back(std::int32_t(b.cls));
      m_widths.push_back(b.x1 - b.x0);
      m_heights.push_back(b.y1 - b.y0);
    }
  }
  data::TargetSummary summary() const override {
    data::TargetSummary s;
    const auto sizes = boxSizeSummaries(m_boxClasses, m_widths, m_heights, m_classes.size());
    const auto spreadJson = [](const std::array<double, 3>& v) {
      return Json{{"min", v[0]}, {"median", v[1]}, {"max", v[2]}};
    };
    const auto spreadText = [](const std::array<double, 3>& v, int decimals) {
      return formatted("%.*f / %.*f / %.*f", decimals, v[0], decimals, v[1], decimals, v[2]);
    };
    const std::int64_t without = m_perImage.empty() ? 0 : m_perImage[0];
    std::vector<std::pair<std::string, Json>> members;
    s.table.columns = {"class", "boxes", "width min / median / max", "height min / median / max",
                       "aspect (w / h)"};
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      const auto& z = sizes[k];
      members.emplace_back(m_classes[k], Json{{"boxes", z.boxes},
                                              {"width", spreadJson(z.width)},
                                              {"height", spreadJson(z.height)},
                                              {"aspect", spreadJson(z.aspect)}});
      const char* none = "-";
      s.table.rows.push_back(
          {m_classes[k], std::to_string(z.boxes), z.boxes ? spreadText(z.width, 0) : none,
           z.boxes ? spreadText(z.height, 0) : none, z.boxes ? spreadText(z.aspect, 2) : none});
    }
    s.jsonKey = "boxes";
    s.json = Json{{"train", namedMembers(std::move(members))},
                  {"boxes_per_image", m_perImage},
                  {"images_without_boxes", without}};
    // Training images by their number of boxes (the first: images without any).
    std::string byBoxes;
    for (std::size_t n = 0; n < m_perImage.size(); ++n)
      if (m_perImage[n] > 0)
        byBoxes += (byBoxes.empty() ? "" : ", ") + std::to_string(m_perImage[n]) + " with " +
                   std::to_string(n);
    s.table.footer = "Training images by boxes: " + byBoxes + " (" + std::to_string(without) +
                     " images without boxes)";
    s.table.tooltip = "Box sizes in their images' pixels, per class (training split)";
    s.chart = classBars("Boxes per class", m_classes, asDoubles(m_perClass), "boxes");
    s.view = s.table;
    s.viewTitle = "Box sizes";
    return s;
  }

 private:
  std::vector<std::string> m_classes;
  std::vector<std::int64_t> m_perClass, m_perImage;  ///< [n]: images with n boxes
  std::vector<std::int32_t> m_boxClasses;            ///< every box's, in file order
  std::vector<float> m_widths, m_heights;
};

}  // namespace

std::unique_ptr<data::TargetStatistics> labelSetStatistics() {
  return std::make_unique<LabelSetStatistics>();
}
std::unique_ptr<data::TargetStatistics> targetValueStatistics() {
  return std::make_unique<TargetValueStatistics>();
}
std::unique_ptr<data::TargetStatistics> maskPixelStatistics() {
  return std::make_unique<MaskPixelStatistics>();
}
std::unique_ptr<data::TargetStatistics> boxStatistics() {
  return std::make_unique<BoxStatistics>();
}

std::vector<BoxSizeSummary> boxSizeSummaries(const std::vector<std::int32_t>& boxClasses,
                                             const std::vector<float>& boxWidths,
                                             const std::vector<float>& boxHeights,
                                             std::size_t classes) {
  std::vector<BoxSizeSummary> out(classes);
  std::vector<std::vector<float>> widths(classes), heights(classes), aspects(classes);
  for (std::size_t b = 0; b < boxClasses.size(); ++b) {
    const auto c = boxClasses[b];
    if (c < 0 || std::size_t(c) >= classes) continue;
    widths[std::size_t(c)].push_back(boxWidths[b]);
    heights[std::size_t(c)].push_back(boxHeights[b]);
    aspects[std::size_t(c)].push_back(boxHeights[b] > 0 ? boxWidths[b] / boxHeights[b] : 0.f);
  }
  const auto spread = [](std::vector<float>& v) {
    std::array<double, 3> r{};
    if (v.empty()) return r;
    std::sort(v.begin(), v.end());
    r = {v.front(), v[(v.size() - 1) / 2], v.back()};
    return r;
  };
  for (std::size_t c = 0; c < classes; ++c) {
    out[c].boxes = std::int64_t(widths[c].size());
    out[c].width = spread(widths[c]);
    out[c].height = spread(heights[c]);
    out[c].aspect = spread(aspects[c]);
  }
  return out;
}

}  // namespace netsmith::task
