#include "data/preview_grid.h"

#include <algorithm>
#include <array>
#include <map>
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
      if (source.hasMasks()) {
        const auto& colors = pd.data.config.colors;
        cv::Mat mask;
        row.original =
            overlayMask(pd.processor->preview(train, k, false, seed, 0, &mask), mask, colors);
        row.caption = maskCaption(mask, source.classNames());
        for (int j = 0; j < draws; ++j) {
          const cv::Mat drawn = pd.processor->preview(train, k, true, seed, j, &mask);
          row.draws.push_back(overlayMask(drawn, mask, colors));
        }
        rows.push_back(std::move(row));
        continue;
      }
      if (source.hasBoxes()) {
        const auto& colors = pd.data.config.colors;
        std::vector<target::Box> boxes;
        row.original = overlayBoxes(
            pd.processor->preview(train, k, false, seed, 0, nullptr, &boxes), boxes, colors);
        row.caption = boxCaption(boxes, source.classNames());
        for (int j = 0; j < draws; ++j) {
          const cv::Mat drawn = pd.processor->preview(train, k, true, seed, j, nullptr, &boxes);
          row.draws.push_back(overlayBoxes(drawn, boxes, colors));
        }
        rows.push_back(std::move(row));
        continue;
      }
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

cv::Vec3f classColor(std::size_t c, const std::vector<std::string>& colors,
                     std::size_t paletteStart) {
  // A qualitative palette when the project gives no colours.
  static const cv::Vec3f kPalette[] = {{230, 25, 75},   {60, 180, 75},  {255, 225, 25},
                                       {67, 99, 216},   {245, 130, 49}, {145, 30, 180},
                                       {70, 240, 240},  {240, 50, 230}, {188, 246, 12},
                                       {250, 190, 190}, {0, 128, 128},  {154, 99, 36}};
  if (c < colors.size() && colors[c].size() == 7 && colors[c][0] == '#' &&
      colors[c].find_first_not_of("0123456789abcdefABCDEF", 1) == std::string::npos) {
    const auto hex = [&](std::size_t at) {
      return float(std::stoi(colors[c].substr(at, 2), nullptr, 16));
    };
    return {hex(1), hex(3), hex(5)};
  }
  const std::size_t n = sizeof kPalette / sizeof kPalette[0];
  return kPalette[(c + n - paletteStart % n) % n];
}

cv::Mat overlayMask(const cv::Mat& image, const cv::Mat& mask,
                    const std::vector<std::string>& colors) {
  // Each class's tint once (not per pixel): the project's colour, else the palette's from
  // class 1 (class 0 is the background).
  std::array<cv::Vec3f, 256> tint;
  tint[255] = cv::Vec3f(255, 255, 255);
  for (std::size_t c = 1; c < 255; ++c)
    tint[c] = classColor(c, colors, 1);
  cv::Mat rgb;
  if (image.channels() == 1)
    cv::cvtColor(image, rgb, cv::COLOR_GRAY2RGB);
  else
    rgb = image.clone();
  if (mask.size() != rgb.size()) return rgb;
  for (int y = 0; y < rgb.rows; ++y) {
    auto* px = rgb.ptr<cv::Vec3f>(y);
    const uchar* m = mask.ptr<uchar>(y);
    for (int x = 0; x < rgb.cols; ++x) {
      if (m[x] != 0) px[x] = px[x] * 0.45f + tint[m[x]] * (0.55f / 255.0f);
    }
  }
  return rgb;
}

cv::Mat overlayBoxes(const cv::Mat& image, const std::vector<target::Box>& boxes,
                     const std::vector<std::string>& colors) {
  cv::Mat rgb;
  if (image.channels() == 1)
    cv::cvtColor(image, rgb, cv::COLOR_GRAY2RGB);
  else
    rgb = image.clone();
  for (const auto& b : boxes) {
    const cv::Vec3f c =
        classColor(std::size_t(std::max<std::int64_t>(b.cls, 0)), colors, 0) / 255.f;
    // The box's outermost pixels: [x0, x1) x [y0, y1) rounded to whole pixels.
    const cv::Point a(int(std::lround(b.x0)), int(std::lround(b.y0)));
    const cv::Point z(int(std::lround(b.x1)) - 1, int(std::lround(b.y1)) - 1);
    cv::rectangle(rgb, a, z, cv::Scalar(c[0], c[1], c[2]), 1, cv::LINE_8);
  }
  return rgb;
}

std::string boxCaption(const std::vector<target::Box>& boxes,
                       const std::vector<std::string>& classes) {
  if (boxes.empty()) return "no boxes";
  std::map<std::int64_t, int> counts;
  for (const auto& b : boxes)
    ++counts[b.cls];
  std::string text;
  for (const auto& [c, n] : counts) {
    const std::string name =
        c >= 0 && std::size_t(c) < classes.size() ? classes[std::size_t(c)] : std::to_string(c);
    text += (text.empty() ? "" : ", ") + name + (n > 1 ? " x" + std::to_string(n) : "");
  }
  return text;
}

std::string maskCaption(const cv::Mat& mask, const std::vector<std::string>& classes) {
  std::array<int, 256> histogram{};  // one pass over the mask
  for (int y = 0; y < mask.rows; ++y) {
    const uchar* m = mask.ptr<uchar>(y);
    for (int x = 0; x < mask.cols; ++x)
      ++histogram[m[x]];
  }
  std::vector<std::pair<int, int>> counts;  // (pixels, class)
  for (int c = 0; c < 255; ++c)
    if (histogram[std::size_t(c)] > 0) counts.emplace_back(histogram[std::size_t(c)], c);
  // The items first, largest first; the background (class 0) last.
  std::sort(counts.begin(), counts.end(), [](auto a, auto b) {
    if ((a.second == 0) != (b.second == 0)) return b.second == 0;
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  std::string text;
  const double total = double(mask.total());
  for (const auto& [n, c] : counts) {
    const std::string name =
        std::size_t(c) < classes.size() ? classes[std::size_t(c)] : std::to_string(c);
    text += (text.empty() ? "" : ", ") + name + " " +
            std::to_string(int(std::lround(100.0 * n / total))) + "%";
  }
  return text;
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
