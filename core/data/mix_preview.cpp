// makeMixPreview: MixUp / CutMix shown on a pair of images (LibTorch inside, none in the header).
#include <torch/torch.h>

#include <opencv2/core.hpp>

#include "augment/batch_mix.h"
#include "data/preview_grid.h"

namespace netsmith::data {

namespace {

torch::Tensor toTensor(const cv::Mat& hwc) {
  cv::Mat m = hwc.isContinuous() ? hwc : hwc.clone();
  return torch::from_blob(m.data, {m.rows, m.cols, m.channels()}, torch::kFloat)
      .permute({2, 0, 1})
      .clone();
}

cv::Mat toMat(const torch::Tensor& chw) {
  const auto t = chw.permute({1, 2, 0}).contiguous().to(torch::kFloat);
  cv::Mat m(int(t.size(0)), int(t.size(1)), CV_32FC(int(t.size(2))), t.data_ptr<float>());
  return m.clone();
}

}  // namespace

std::vector<MixPreview> makeMixPreview(const ProjectData& pd, std::uint64_t seed) {
  std::vector<MixPreview> out;
  const auto& mixes = pd.pipeline.batchMixes();
  const SampleSet& train = pd.data.train;
  // Mixes blend class labels: a source of label sets or numbers has none to show.
  if (mixes.empty() || train.size() < 2 || train.source->targetWidth() > 0 ||
      train.source->hasMasks() || train.source->hasBoxes())
    return out;
  // Two samples of different classes (when there are two classes).
  std::int64_t a = 0, b = 1;
  for (std::int64_t k = 1; k < train.size(); ++k)
    if (train.label(k) != train.label(0)) {
      b = k;
      break;
    }
  const cv::Mat first = pd.processor->preview(train, a, /*training=*/false, seed, 0);
  const cv::Mat second = pd.processor->preview(train, b, /*training=*/false, seed, 0);
  const auto classes = std::max<std::int64_t>(2, pd.data.numClasses());
  const auto labels = torch::tensor({train.label(a), train.label(b)}, torch::kLong);
  for (const auto& mix : mixes) {
    if (mix.kind == augment::BatchMix::Kind::Mosaic) continue;  // boxes only (none here)
    MixPreview p;
    p.mix = mix.kind == augment::BatchMix::Kind::MixUp ? "MixUp" : "CutMix";
    p.first = first;
    p.second = second;
    p.firstClass = pd.data.classes.at(std::size_t(train.label(a)));
    p.secondClass = pd.data.classes.at(std::size_t(train.label(b)));
    augment::BatchMix always = mix;
    always.probability = 1.0;  // show what it does when it fires
    // Draw until the first image is mixed with the second (the partner is a permutation).
    for (std::uint64_t attempt = 0; attempt < 64; ++attempt) {
      auto images = torch::stack({toTensor(first), toTensor(second)});
      auto targets = augment::oneHot(labels, classes);
      augment::SampleRng rng(seed * 1000003 + attempt);
      augment::applyBatchMix(images, targets, {always}, rng);
      const double w = targets[0][train.label(a)].item<double>();
      if (w < 0.999) {
        p.mixed = toMat(images[0]);
        p.firstWeight = w;
        break;
      }
    }
    if (p.mixed.empty()) p.mixed = first.clone();
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace netsmith::data
