// Images and masks (semantic segmentation): a folder of images and a folder of masks paired by
// file stem (images/a.jpg with masks/a.png), as Pascal VOC, Cityscapes-style exports and
// NVIDIA TAO lay them out. Only the top level of each folder is read; names starting with a
// dot are ignored. A mask holds a class index per pixel (255: ignore) or is a palette PNG;
// masks are decoded and checked when a sample is loaded (decodeMaskFile).
#include <algorithm>
#include <filesystem>
#include <map>

#include <opencv2/core.hpp>

#include "data/dataset_source.h"

namespace netsmith::data {

namespace {

namespace fs = std::filesystem;

bool isPngName(const std::string& name) {
  return hasExtension(name, ".png");
}

class MaskFolderSource : public FileListSource {
 public:
  MaskFolderSource(const SourceSpec& spec, const std::vector<std::string>& classes,
                   ErrorPolicy policy) {
    if (classes.empty()) {
      throw Error(spec.path +
                  ": a mask_folders source needs the class names in index order (mask value 0 "
                  "is the first); set data.classes, e.g. [\"background\", \"road\"]");
    }
    if (classes.size() > 255) {
      throw Error("data.classes: " + std::to_string(classes.size()) +
                  " classes; a mask holds at most 255 (0 to 254; 255 means ignore)");
    }
    m_classes = classes;
    std::vector<SkippedItem> problems;
    const auto found =
        pairByStem(spec, "masks", spec.masks, isPngName, "a PNG mask", m_skipped, problems);
    for (const auto& pair : found.pairs) {
      if (pair.other.empty()) {
        problems.push_back({pair.image, "no mask " + pair.stem + ".png in " + spec.masks});
        continue;
      }
      m_files.push_back(pair.image);
      m_masks.push_back(pair.other);
      m_labels.push_back(-1);
    }
    problems.insert(problems.end(), found.orphans.begin(), found.orphans.end());
    settleScanProblems(problems, spec, policy, m_skipped);
    if (m_files.empty()) {
      throw Error(spec.path + ": no image in " + spec.images + " has a mask in " + spec.masks +
                  " (images and masks are paired by file stem: a.jpg with a.png)");
    }
  }

  std::int64_t stratum(std::int64_t) const override { return 0; }
  std::int64_t numStrata() const override { return 1; }
  bool hasMasks() const override { return true; }

  cv::Mat loadMask(std::int64_t i) const override {
    const std::string& path = m_masks.at(static_cast<std::size_t>(i));
    cv::Mat mask = decodeMaskFile(path);
    const auto last = static_cast<int>(m_classes.size()) - 1;
    cv::Mat bad = (mask > last) & (mask != 255);
    if (cv::countNonZero(bad) > 0) {
      std::vector<cv::Point> where;
      cv::findNonZero(bad, where);
      const cv::Point p = where.front();
      throw SampleError(path + ": pixel (" + std::to_string(p.x) + ", " + std::to_string(p.y) +
                        ") has the value " + std::to_string(int(mask.at<uchar>(p))) +
                        ", which is no class (data.classes has " +
                        std::to_string(m_classes.size()) + ": 0 to " + std::to_string(last) +
                        "; 255 means ignore)");
    }
    return mask;
  }

 private:
  std::vector<std::string> m_masks;
};

}  // namespace

std::shared_ptr<DatasetSource> openMaskFolderSource(const SourceSpec& spec,
                                                    const std::vector<std::string>& classes,
                                                    ErrorPolicy policy) {
  return std::make_shared<MaskFolderSource>(spec, classes, policy);
}

}  // namespace netsmith::data
