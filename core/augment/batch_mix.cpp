#include "augment/batch_mix.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace netsmith::augment {

torch::Tensor oneHot(const torch::Tensor& labels, std::int64_t numClasses) {
  auto out = torch::zeros({labels.size(0), numClasses}, torch::kFloat);
  out.scatter_(1, labels.to(torch::kLong).unsqueeze(1), 1.0);
  return out;
}

double applyBatchMix(torch::Tensor& images, torch::Tensor& targets,
                     const std::vector<BatchMix>& mixes, SampleRng& rng, torch::Tensor* masks) {
  if (mixes.empty() || images.size(0) < 2) return 1.0;
  const BatchMix& mix =
      mixes[static_cast<std::size_t>(rng.integer(0, static_cast<std::int64_t>(mixes.size()) - 1))];
  if (!rng.chance(mix.probability)) return 1.0;
  const std::int64_t n = images.size(0);
  std::vector<std::int64_t> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng.engine());
  const auto perm = torch::tensor(order, torch::kLong);
  double lambda = rng.beta(mix.alpha, mix.alpha);
  torch::NoGradGuard noGrad;
  if (mix.kind == BatchMix::Kind::Mosaic)
    throw Error("augment: Mosaic moves boxes with the images, and this task's targets are none");
  if (mix.kind == BatchMix::Kind::MixUp) {
    if (masks) throw Error("augment: MixUp blends images, and a blended mask is no class");
    images = images * lambda + images.index_select(0, perm) * (1.0 - lambda);
  } else {
    const std::int64_t h = images.size(2), w = images.size(3);
    const double cut = std::sqrt(1.0 - lambda);
    const auto cutH = static_cast<std::int64_t>(std::llround(double(h) * cut));
    const auto cutW = static_cast<std::int64_t>(std::llround(double(w) * cut));
    const std::int64_t cy = rng.integer(0, h - 1), cx = rng.integer(0, w - 1);
    const std::int64_t y0 = std::clamp<std::int64_t>(cy - cutH / 2, 0, h),
                       y1 = std::clamp<std::int64_t>(cy + cutH / 2, 0, h);
    const std::int64_t x0 = std::clamp<std::int64_t>(cx - cutW / 2, 0, w),
                       x1 = std::clamp<std::int64_t>(cx + cutW / 2, 0, w);
    images = images.clone();
    if (y1 > y0 && x1 > x0) {
      using torch::indexing::Slice;
      const auto partner = images.index_select(0, perm);
      images.index_put_({Slice(), Slice(), Slice(y0, y1), Slice(x0, x1)},
                        partner.index({Slice(), Slice(), Slice(y0, y1), Slice(x0, x1)}));
      if (masks) {
        *masks = masks->clone();
        const auto partnerMask = masks->index_select(0, perm);
        masks->index_put_({Slice(), Slice(y0, y1), Slice(x0, x1)},
                          partnerMask.index({Slice(), Slice(y0, y1), Slice(x0, x1)}));
      }
    }
    // The label weight is the area actually kept, after clipping the box at the border.
    lambda = 1.0 - double((y1 - y0) * (x1 - x0)) / double(h * w);
  }
  if (targets.defined())
    targets = targets * lambda + targets.index_select(0, perm) * (1.0 - lambda);
  return lambda;
}

void applyMosaic(torch::Tensor& images, std::vector<std::vector<target::Box>>& boxes,
                 double probability, SampleRng& rng) {
  namespace F = torch::nn::functional;
  const std::int64_t n = images.size(0);
  if (std::int64_t(boxes.size()) != n)
    throw Error("augment: Mosaic got " + std::to_string(boxes.size()) + " box lists for " +
                std::to_string(n) + " images");
  const std::int64_t h = images.size(2), w = images.size(3), hh = h / 2, hw = w / 2;
  if (n < 1 || hh < 1 || hw < 1) return;
  torch::NoGradGuard noGrad;
  const std::vector<std::vector<target::Box>> sourceBoxes = boxes;
  torch::Tensor halves;  // every image at half size, made when the first Mosaic fires
  torch::Tensor out;
  for (std::int64_t i = 0; i < n; ++i) {
    if (!rng.chance(probability)) continue;
    if (!halves.defined()) {
      halves = F::interpolate(images.to(torch::kFloat), F::InterpolateFuncOptions()
                                                            .size(std::vector<std::int64_t>{hh, hw})
                                                            .mode(torch::kBilinear)
                                                            .align_corners(false));
      out = images.clone();
    }
    const std::array<std::int64_t, 4> parts{i, rng.integer(0, n - 1), rng.integer(0, n - 1),
                                            rng.integer(0, n - 1)};
    auto image = torch::zeros_like(images[i]);
    std::vector<target::Box> moved;
    const double sx = double(hw) / double(w), sy = double(hh) / double(h);
    for (std::size_t q = 0; q < 4; ++q) {
      const std::int64_t top = std::int64_t(q / 2) * hh, left = std::int64_t(q % 2) * hw;
      image.narrow(1, top, hh).narrow(2, left, hw).copy_(halves[parts[q]]);
      for (auto b : sourceBoxes[std::size_t(parts[q])]) {
        b.x0 = float(b.x0 * sx + double(left)), b.x1 = float(b.x1 * sx + double(left));
        b.y0 = float(b.y0 * sy + double(top)), b.y1 = float(b.y1 * sy + double(top));
        if (b.x1 > b.x0 && b.y1 > b.y0) moved.push_back(b);
      }
    }
    out[i].copy_(image);
    boxes[std::size_t(i)] = std::move(moved);
  }
  if (out.defined()) images = out;
}

}  // namespace netsmith::augment
