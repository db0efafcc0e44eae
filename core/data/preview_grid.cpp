#include "data/preview_grid.h"

#include <algorithm>
#include <opencv2/imgproc.hpp>

namespace netsmith::data {

std::vector<PreviewRow> makePreview(const ProjectData& pd, int samples, int draws,
                                    std::uint64_t seed) {
  const SampleSet& train = pd.data.train;
  // Round-robin over classes (strata: a multi-label sample's rarest label, a regression's
  // target decile) so the rows show different ones.
  const auto& source = *train.source;
  std::vector<std::vector<std::int64_t>> byClass(
      static_cast<std::size_t>(std::max<std::int64_t>(1, source.numStrata())));
  for (std::int64_t k = 0; k < train.size(); ++k) {
    const auto stratum = source.stratum(train.indices[static_cast<std::size_t>(k)]);
    if (stratum < 0 || stratum >= std::int64_t(byClass.size())) continue;
    auto& bucket = byClass[static_cast<std::size_t>(stratum)];
    if (static_cast<int>(bucket.size()) < samples) bucket.push_back(k);
  }
  std::vector<std::int64_t> chosen;
  for (std::size_t round = 0; static_cast<int>(chosen.size()) < samples; ++round) {
    bool any = false;
    for (const auto& bucket : byClass) {
      if (round < bucket.size() && static_cast<int>(chosen.size()) < samples) {
        chosen.push_back(bucket[round]);
        any = true;
      }
    }
    if (!any) break;
  }
  std::vector<PreviewRow> rows;
  for (auto k : chosen) {
    PreviewRow row;
    row.sample = k;
    row.caption = train.describeTarget(k);
    try {
      row.original = pd.processor->preview(train, k, /*training=*/false, seed, 0);
      for (int j = 0; j < draws; ++j)
        row.draws.push_back(pd.processor->preview(train, k, /*training=*/true, seed, j));
    } catch (const SampleError&) {
      continue;  // an unreadable sample is simply not shown
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

namespace {

cv::Mat toDisplay(const cv::Mat& img, int cell) {
  cv::Mat u8;
  img.convertTo(u8, CV_8U, 255.0);
  cv::Mat bgr;
  if (u8.channels() == 1) {
    cv::cvtColor(u8, bgr, cv::COLOR_GRAY2BGR);
  } else {
    cv::cvtColor(u8, bgr, cv::COLOR_RGB2BGR);
  }
  const double scale = double(cell) / std::max(bgr.rows, bgr.cols);
  cv::Mat out;
  cv::resize(bgr, out, cv::Size(), scale, scale, scale >= 1 ? cv::INTER_NEAREST : cv::INTER_AREA);
  return out;
}

void text(cv::Mat& canvas, const std::string& s, int x, int y, int maxWidth,
          const cv::Scalar& colour) {
  std::string t = s;
  int baseline = 0;
  while (t.size() > 1 &&
         cv::getTextSize(t, cv::FONT_HERSHEY_SIMPLEX, 0.4, 1, &baseline).width > maxWidth)
    t.pop_back();
  cv::putText(canvas, t, cv::Point(x, y), cv::FONT_HERSHEY_SIMPLEX, 0.4, colour, 1, cv::LINE_AA);
}

}  // namespace

cv::Mat renderPreviewGrid(const std::vector<PreviewRow>& rows, int cell,
                          const PreviewColors& colors) {
  const int pad = 6, caption = 16, header = 20;
  std::size_t cols = 1;
  for (const auto& r : rows)
    cols = std::max(cols, 1 + r.draws.size());
  const int width = pad + static_cast<int>(cols) * (cell + pad);
  const int height = header + static_cast<int>(rows.size()) * (cell + caption + pad) + pad;
  cv::Mat canvas(std::max(height, header + pad), width, CV_8UC3, colors.background);
  text(canvas, "original", pad, 14, cell, colors.text);
  for (std::size_t c = 1; c < cols; ++c)
    text(canvas, "draw " + std::to_string(c), pad + int(c) * (cell + pad), 14, cell, colors.text);
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const int y = header + static_cast<int>(r) * (cell + caption + pad);
    std::vector<cv::Mat> images{rows[r].original};
    images.insert(images.end(), rows[r].draws.begin(), rows[r].draws.end());
    for (std::size_t c = 0; c < images.size(); ++c) {
      const cv::Mat shown = toDisplay(images[c], cell);
      const int x = pad + static_cast<int>(c) * (cell + pad);
      shown.copyTo(canvas(cv::Rect(x, y, shown.cols, shown.rows)));
    }
    text(canvas, rows[r].caption, pad, y + cell + 12, cell + pad + cell, colors.text);
  }
  return canvas;
}

}  // namespace netsmith::data
