#include "task/detection_head.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "common/error.h"
#include "common/shape.h"

namespace netsmith::task {

namespace {

/// Raw distances are clamped here before exp: exp(10) x stride is already far past any input,
/// and more would overflow float32 on its way to a NaN loss.
constexpr double kDhMaxRaw = 10.0;
/// A positive's target distances are at least this many strides: a fallback's point may lie on
/// its box's edge or outside it, where a zero distance would give a zero centre-ness and a box
/// that does not hold the point.
constexpr double kDhMinDistance = 0.01;
/// Added to the GIoU's union and enclosing area, as torchvision's generalized_box_iou_loss.
constexpr double kDhGiouEps = 1e-7;
/// The box loss's denominator at least this: a batch without positives divides 0 by it.
constexpr double kDhMinCentreness = 1e-6;

void dhCheckParams(const DetectionHeadParams& p, const std::string& what) {
  if (p.classes < 1) throw Error(what + ": a detector needs at least one class");
  if (p.stride < 1)
    throw Error(what + ": the detection head's stride is not known (" + std::to_string(p.stride) +
                "); the model's output map must divide its input evenly");
}

void dhCheckOutput(const torch::Tensor& output, std::int64_t classes, const std::string& what) {
  if (output.dim() != 4 || output.size(1) != classes + 5)
    throw Error(what + ": the model's output is " + formatShape(output.sizes().vec()) +
                "; a detector of " + std::to_string(classes) + " classes gives N x " +
                std::to_string(classes + 5) + " x H x W");
}

void dhCheckTarget(const torch::Tensor& target) {
  if (target.dim() != 3 || target.size(2) != 6)
    throw Error("detection target: " + formatShape(target.sizes().vec()) +
                " is not N x M x 6 (a row [class, x0, y0, x1, y1, flags] per box)");
}

/// The input pixel a location stands for, on one axis.
double dhPoint(std::int64_t index, double stride) {
  return (double(index) + 0.5) * stride;
}

/// The map the targets are laid on: its size in locations, and in pixels the stride, the centre
/// radius and a positive's least distance to its box's edges.
struct DhGrid {
  std::int64_t height, width;
  double s, radius, minDistance;
};

/// One image's claims, per location: the smallest claiming box's area and index (-1: none),
/// whether a crowd box covers it; and the current box's candidate locations.
struct DhClaims {
  std::vector<double> bestArea;
  std::vector<std::int64_t> owner;
  std::vector<char> inCrowd;
  std::vector<std::size_t> candidates;

  explicit DhClaims(std::size_t cells) : bestArea(cells), owner(cells), inCrowd(cells) {}
};

/// A box's corners in pixels, and the cells (columns c0 .. c1, rows r0 .. r1) its points may
/// fall in.
struct DhBoxCells {
  double x0, y0, x1, y1;
  std::int64_t c0, c1, r0, r1;
};

/// The targets of a batch being filled on the CPU, with the accessors that write them.
struct DhTargetMaps {
  torch::Tensor classTarget, valid, positive, boxTarget, centreness;
  at::TensorAccessor<float, 4> classOut;
  at::TensorAccessor<bool, 3> validOut;
  at::TensorAccessor<bool, 3> positiveOut;
  at::TensorAccessor<float, 4> boxOut;
  at::TensorAccessor<float, 3> centreOut;

  DhTargetMaps(std::int64_t n, std::int64_t k, std::int64_t height, std::int64_t width)
      : classTarget(torch::zeros({n, k, height, width}, torch::kFloat)),
        valid(torch::ones({n, height, width}, torch::kBool)),
        positive(torch::zeros({n, height, width}, torch::kBool)),
        boxTarget(torch::zeros({n, 4, height, width}, torch::kFloat)),
        centreness(torch::zeros({n, height, width}, torch::kFloat)),
        classOut(classTarget.accessor<float, 4>()),
        validOut(valid.accessor<bool, 3>()),
        positiveOut(positive.accessor<bool, 3>()),
        boxOut(boxTarget.accessor<float, 4>()),
        centreOut(centreness.accessor<float, 3>()) {}
};

/// Refuses a box of class `cls` (not padding) that is not one of the detector's `k` classes.
void dhCheckClass(double cls, std::int64_t k) {
  if (!(cls < double(k)) || std::llround(cls) >= k)
    throw Error("detection target: a box of class " +
                (std::isfinite(cls) ? std::to_string(std::llround(cls)) : std::string("?")) +
                " but the detector has " + std::to_string(k) + " classes (0 .. " +
                std::to_string(k - 1) + ")");
}

/// The first and last of `n` cells on one axis whose point (c + 0.5) x s may lie in (lo, hi).
std::pair<std::int64_t, std::int64_t> dhCellSpan(double lo, double hi, std::int64_t n, double s) {
  const auto first = std::int64_t(std::clamp(std::floor(lo / s - 0.5), 0.0, double(n)));
  const auto last = std::int64_t(std::clamp(std::ceil(hi / s - 0.5), 0.0, double(n - 1)));
  return std::pair<std::int64_t, std::int64_t>{first, last};
}

/// Marks the locations whose point lies inside crowd box `box` in `inCrowd`.
void dhMarkCrowd(const DhGrid& grid, const DhBoxCells& box, std::vector<char>& inCrowd) {
  const double s = grid.s;
  for (std::int64_t r = box.r0; r <= box.r1; ++r)
    for (std::int64_t c = box.c0; c <= box.c1; ++c) {
      const double px = dhPoint(c, s), py = dhPoint(r, s);
      if (px > box.x0 && px < box.x1 && py > box.y0 && py < box.y1)
        inCrowd[std::size_t(r * grid.width + c)] = 1;
    }
}

/// Fills `candidates` with the locations whose point lies inside `box` and within the centre
/// radius of its centre, or, when none does, with the one cell holding its centre.
void dhCollectCandidates(const DhGrid& grid, const DhBoxCells& box,
                         std::vector<std::size_t>& candidates) {
  const double s = grid.s, radius = grid.radius;
  const std::int64_t height = grid.height, width = grid.width;
  const double x0 = box.x0, y0 = box.y0, x1 = box.x1, y1 = box.y1;
  const double cx = (x0 + x1) / 2, cy = (y0 + y1) / 2;
  candidates.clear();
  for (std::int64_t r = box.r0; r <= box.r1; ++r)
    for (std::int64_t c = box.c0; c <= box.c1; ++c) {
      const double px = dhPoint(c, s), py = dhPoint(r, s);
      if (px > x0 && px < x1 && py > y0 && py < y1 && std::abs(px - cx) < radius &&
          std::abs(py - cy) < radius)
        candidates.push_back(std::size_t(r * width + c));
    }
  if (candidates.empty()) {
    // Smaller than a stride: the cell holding the centre (clamped as a double first, so a
    // far-off centre never overflows the integer).
    const auto r = std::int64_t(std::clamp(std::floor(cy / s), 0.0, double(height - 1)));
    const auto c = std::int64_t(std::clamp(std::floor(cx / s), 0.0, double(width - 1)));
    candidates.push_back(std::size_t(r * width + c));
  }
}

/// Lets the `m` boxes of image `i` (`rows[i]`, rows [class, x0, y0, x1, y1, flags]) claim its
/// locations: each goes to the smallest box holding it near its centre; crowd boxes only mark
/// theirs. (`rows[i]` is indexed only with a box: a batch without boxes has no data to point
/// into.)
void dhClaimLocations(const at::TensorAccessor<float, 3>& rows, std::int64_t i, std::int64_t m,
                      std::int64_t k, const DhGrid& grid, DhClaims& claims) {
  std::fill(claims.bestArea.begin(), claims.bestArea.end(),
            std::numeric_limits<double>::infinity());
  std::fill(claims.owner.begin(), claims.owner.end(), std::int64_t(-1));
  std::fill(claims.inCrowd.begin(), claims.inCrowd.end(), char(0));
  for (std::int64_t b = 0; b < m; ++b) {
    const auto row = rows[i][b];
    const double cls = row[0];
    if (!(cls >= 0)) continue;  // padding
    dhCheckClass(cls, k);
    const double x0 = row[1], y0 = row[2], x1 = row[3], y1 = row[4];
    if (!(x1 > x0 && y1 > y0)) continue;  // no extent (or NaN): nothing to find
    const float flags = row[5];
    const bool crowd = std::isfinite(flags) && (std::lround(flags) & 1) != 0;
    // Only the cells whose point can lie inside the box are visited (point (c + 0.5) x s in
    // (x0, x1)): an image of many boxes costs its boxes' areas, not boxes x cells.
    const auto [c0, c1] = dhCellSpan(x0, x1, grid.width, grid.s);
    const auto [r0, r1] = dhCellSpan(y0, y1, grid.height, grid.s);
    const DhBoxCells box{x0, y0, x1, y1, c0, c1, r0, r1};
    if (crowd) {
      dhMarkCrowd(grid, box, claims.inCrowd);
      continue;
    }
    const double area = (x1 - x0) * (y1 - y0);
    dhCollectCandidates(grid, box, claims.candidates);
    // Strictly smaller: on equal areas the earlier box keeps the location.
    for (const auto cell : claims.candidates)
      if (area < claims.bestArea[cell]) claims.bestArea[cell] = area, claims.owner[cell] = b;
  }
}

/// Writes image `i`'s targets from its claims: an owned location becomes a positive with its
/// box's class, corners and centre-ness; an unowned one inside a crowd box is not valid.
void dhWriteImageTargets(const at::TensorAccessor<float, 3>& rows, std::int64_t i,
                         const DhGrid& grid, const DhClaims& claims, DhTargetMaps& maps) {
  const double s = grid.s, minDistance = grid.minDistance;
  for (std::int64_t r = 0; r < grid.height; ++r)
    for (std::int64_t c = 0; c < grid.width; ++c) {
      const auto cell = std::size_t(r * grid.width + c);
      const std::int64_t b = claims.owner[cell];
      if (b < 0) {
        if (claims.inCrowd[cell]) maps.validOut[i][r][c] = false;
        continue;
      }
      const auto row = rows[i][b];
      const double px = dhPoint(c, s), py = dhPoint(r, s);
      const double l = std::max(px - double(row[1]), minDistance);
      const double top = std::max(py - double(row[2]), minDistance);
      const double right = std::max(double(row[3]) - px, minDistance);
      const double bottom = std::max(double(row[4]) - py, minDistance);
      maps.positiveOut[i][r][c] = true;
      maps.classOut[i][std::llround(row[0])][r][c] = 1;
      maps.boxOut[i][0][r][c] = float(px - l);
      maps.boxOut[i][1][r][c] = float(py - top);
      maps.boxOut[i][2][r][c] = float(px + right);
      maps.boxOut[i][3][r][c] = float(py + bottom);
      maps.centreOut[i][r][c] = float(std::sqrt(std::min(l, right) / std::max(l, right) *
                                                std::min(top, bottom) / std::max(top, bottom)));
    }
}

}  // namespace

DetectionTargets assignTargets(const torch::Tensor& target, std::int64_t height, std::int64_t width,
                               const DetectionHeadParams& p) {
  dhCheckParams(p, "detection target");
  dhCheckTarget(target);
  if (height < 1 || width < 1)
    throw Error("detection target: a map of " + std::to_string(height) + "x" +
                std::to_string(width) + " locations");
  // A few boxes on a small map: plain loops on the CPU, moved to the target's device after.
  const auto t = target.detach().to(torch::kCPU, torch::kFloat).contiguous();
  auto rows = t.accessor<float, 3>();
  const std::int64_t n = t.size(0), m = t.size(1), k = p.classes;
  DhTargetMaps maps(n, k, height, width);
  const double s = double(p.stride), radius = p.centreRadius * s;
  const double minDistance = kDhMinDistance * s;
  const DhGrid grid{height, width, s, radius, minDistance};
  DhClaims claims(static_cast<std::size_t>(height * width));
  for (std::int64_t i = 0; i < n; ++i) {
    dhClaimLocations(rows, i, m, k, grid, claims);
    dhWriteImageTargets(rows, i, grid, claims, maps);
  }
  const auto device = target.device();
  return {maps.classTarget.to(device), maps.valid.to(device), maps.positive.to(device),
          maps.boxTarget.to(device), maps.centreness.to(device)};
}

torch::Tensor sigmoidFocalLoss(const torch::Tensor& logits, const torch::Tensor& targets,
                               double alpha, double gamma) {
  namespace F = torch::nn::functional;
  const auto x = logits.to(torch::kFloat);
  const auto y = targets.to(torch::kFloat);
  const auto prob = torch::sigmoid(x);
  const auto ce = F::binary_cross_entropy_with_logits(
      x, y, F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(torch::kNone));
  const auto pt = prob * y + (1 - prob) * (1 - y);
  auto loss = ce * (1 - pt).pow(gamma);
  // torchvision: a negative alpha leaves the classes unweighted.
  if (alpha >= 0) loss = loss * (alpha * y + (1 - alpha) * (1 - y));
  return loss;
}

torch::Tensor generalizedIouLoss(const torch::Tensor& predicted, const torch::Tensor& target) {
  const auto a = predicted.to(torch::kFloat), b = target.to(torch::kFloat);
  const auto ax0 = a.select(-1, 0), ay0 = a.select(-1, 1), ax1 = a.select(-1, 2),
             ay1 = a.select(-1, 3);
  const auto bx0 = b.select(-1, 0), by0 = b.select(-1, 1), bx1 = b.select(-1, 2),
             by1 = b.select(-1, 3);
  const auto areaA = (ax1 - ax0).clamp_min(0) * (ay1 - ay0).clamp_min(0);
  const auto areaB = (bx1 - bx0).clamp_min(0) * (by1 - by0).clamp_min(0);
  const auto inter = (torch::minimum(ax1, bx1) - torch::maximum(ax0, bx0)).clamp_min(0) *
                     (torch::minimum(ay1, by1) - torch::maximum(ay0, by0)).clamp_min(0);
  const auto uni = areaA + areaB - inter;
  const auto enclosing = (torch::maximum(ax1, bx1) - torch::minimum(ax0, bx0)) *
                         (torch::maximum(ay1, by1) - torch::minimum(ay0, by0));
  const auto iou = inter / (uni + kDhGiouEps);
  return 1 - (iou - (enclosing - uni) / (enclosing + kDhGiouEps));
}

DetectionLossParts detectionLoss(const torch::Tensor& output, const torch::Tensor& target,
                                 const DetectionHeadParams& p) {
  namespace F = torch::nn::functional;
  dhCheckParams(p, "detection loss");
  dhCheckOutput(output, p.classes, "detection loss");
  dhCheckTarget(target);
  if (target.size(0) != output.size(0))
    throw Error("detection loss: " + std::to_string(output.size(0)) + " outputs but " +
                std::to_string(target.size(0)) + " targets");
  const auto x = output.to(torch::kFloat);
  const std::int64_t k = p.classes, n = x.size(0), h = x.size(2), w = x.size(3);
  const auto device = x.device();
  const auto t = assignTargets(target, h, w, p);
  const auto positive = t.positive.to(device);
  const auto positives = positive.sum().to(torch::kFloat).clamp_min(1);

  const auto valid = t.valid.to(device).unsqueeze(1).to(torch::kFloat);
  const auto focal =
      sigmoidFocalLoss(x.narrow(1, 0, k), t.classTarget.to(device), p.focalAlpha, p.focalGamma);
  const auto cls = (focal * valid).sum() / positives;

  // The boxes of the positives only: a negative's predicted box may be degenerate (exp
  // underflows) against no target, and a NaN there would reach the gradient even weighed by 0.
  const double s = double(p.stride);
  const auto distances = (x.narrow(1, k, 4).clamp_max(kDhMaxRaw).exp() * s)
                             .permute({0, 2, 3, 1})
                             .index({positive});  // P x 4: l, t, r, b
  const auto options = torch::TensorOptions().dtype(torch::kFloat).device(device);
  const auto px =
      ((torch::arange(w, options) + 0.5) * s).view({1, 1, w}).expand({n, h, w}).index({positive});
  const auto py =
      ((torch::arange(h, options) + 0.5) * s).view({1, h, 1}).expand({n, h, w}).index({positive});
  const auto predicted = torch::stack({px - distances.select(1, 0), py - distances.select(1, 1),
                                       px + distances.select(1, 2), py + distances.select(1, 3)},
                                      1);
  const auto boxTarget = t.boxTarget.to(device).permute({0, 2, 3, 1}).index({positive});
  const auto centreness = t.centreness.to(device).index({positive});
  const auto box = (generalizedIouLoss(predicted, boxTarget) * centreness).sum() /
                   centreness.sum().clamp_min(kDhMinCentreness);

  const auto ctr = F::binary_cross_entropy_with_logits(
                       x.select(1, k + 4).index({positive}), centreness,
                       F::BinaryCrossEntropyWithLogitsFuncOptions().reduction(torch::kSum)) /
                   positives;
  return {cls + box + ctr, cls, box, ctr};
}

std::vector<std::size_t> nonMaxSuppression(const std::vector<ScoredBox>& boxes, double iou,
                                           std::size_t most) {
  // NaN would break the sort's ordering: it ranks lowest.
  const auto rank = [&](std::size_t i) {
    const float s = boxes[i].score;
    return std::isnan(s) ? -std::numeric_limits<float>::infinity() : s;
  };
  std::vector<std::size_t> order(boxes.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return rank(a) > rank(b); });
  std::vector<std::size_t> kept;
  for (const auto i : order) {
    if (kept.size() >= most) break;  // the rest would be cut anyway: the result is the same
    bool suppressed = false;
    for (const auto j : kept)
      if (boxes[j].box.cls == boxes[i].box.cls && boxIou(boxes[j].box, boxes[i].box) > iou) {
        suppressed = true;
        break;
      }
    if (!suppressed) kept.push_back(i);
  }
  return kept;
}

DecodedHead decodeHead(const torch::Tensor& output, std::int64_t stride, double imageWidth,
                       double imageHeight) {
  torch::NoGradGuard noGrad;
  const auto x = output.detach().to(torch::kCPU, torch::kFloat);
  const std::int64_t k = x.size(1) - 5, n = x.size(0), h = x.size(2), w = x.size(3);
  const auto scores =
      torch::sqrt(torch::sigmoid(x.narrow(1, 0, k)) * torch::sigmoid(x.narrow(1, k + 4, 1)))
          .reshape({n, k, h * w});
  // The distances in float, the points, sums and clipping in double.
  const double s = double(stride);
  const auto d = (x.narrow(1, k, 4).clamp_max(kDhMaxRaw).exp() * s).to(torch::kDouble);
  const auto px = ((torch::arange(w, torch::kDouble) + 0.5) * s).view({1, 1, w});
  const auto py = ((torch::arange(h, torch::kDouble) + 0.5) * s).view({1, h, 1});
  const double right = std::max(imageWidth, 0.0), bottom = std::max(imageHeight, 0.0);
  const auto boxes = torch::stack(
      {(px - d.select(1, 0)).clamp(0.0, right), (py - d.select(1, 1)).clamp(0.0, bottom),
       (px + d.select(1, 2)).clamp(0.0, right), (py + d.select(1, 3)).clamp(0.0, bottom)},
      3);  // N x H x W x 4
  return {boxes.reshape({n, h * w, 4}).to(torch::kFloat).contiguous(), scores.contiguous()};
}

std::vector<std::vector<ScoredBox>> decodeDetections(const torch::Tensor& output,
                                                     const DetectionHeadParams& p, int imageWidth,
                                                     int imageHeight) {
  dhCheckParams(p, "detection decoding");
  dhCheckOutput(output, p.classes, "detection decoding");
  const auto decoded = decodeHead(output, p.stride, imageWidth, imageHeight);
  const std::int64_t k = p.classes, n = decoded.scores.size(0), l = decoded.scores.size(2);
  auto scoreAt = decoded.scores.accessor<float, 3>();
  auto boxAt = decoded.boxes.accessor<float, 3>();
  const auto preNms = static_cast<std::size_t>(std::max<std::int64_t>(p.preNms, 0));
  const auto most = static_cast<std::size_t>(std::max<std::int64_t>(p.maxDetections, 0));

  struct Candidate {
    float score;
    std::int64_t cls, at;
  };
  std::vector<std::vector<ScoredBox>> out(static_cast<std::size_t>(n));
  std::vector<Candidate> candidates;
  std::vector<ScoredBox> boxes;
  for (std::int64_t i = 0; i < n; ++i) {
    candidates.clear();
    // Collected class, then location (row-major) in order: the stable sort keeps that order on
    // equal scores.
    for (std::int64_t c = 0; c < k; ++c)
      for (std::int64_t at = 0; at < l; ++at) {
        const float score = scoreAt[i][c][at];
        if (double(score) >= p.scoreThreshold) candidates.push_back({score, c, at});
      }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.score > b.score; });
    if (candidates.size() > preNms) candidates.resize(preNms);
    boxes.clear();
    for (const auto& cand : candidates) {
      ScoredBox d;
      d.box.cls = cand.cls;
      d.box.x0 = boxAt[i][cand.at][0];
      d.box.y0 = boxAt[i][cand.at][1];
      d.box.x1 = boxAt[i][cand.at][2];
      d.box.y1 = boxAt[i][cand.at][3];
      d.score = cand.score;
      // Clipped to nothing (wholly outside the image, or NaN distances): no box to report.
      if (!(d.box.x1 > d.box.x0 && d.box.y1 > d.box.y0)) continue;
      boxes.push_back(d);
    }
    auto& image = out[static_cast<std::size_t>(i)];
    for (const auto j : nonMaxSuppression(boxes, p.nmsIou, most))
      image.push_back(boxes[j]);
  }
  return out;
}

std::optional<std::string> detectionOutputProblem(const std::vector<std::int64_t>& outputShape,
                                                  std::int64_t classes, std::int64_t inputHeight,
                                                  std::int64_t inputWidth, std::int64_t* stride) {
  if (classes < 1) return std::string("has no class to detect (the data has none)");
  const std::string k = std::to_string(classes);
  const std::string channels = std::to_string(classes + 5);
  const std::string detector = "a detector of " + k + (classes == 1 ? " class" : " classes");
  const std::string parts = "(" + k + (classes == 1 ? " class score" : " class scores") +
                            ", 4 box distances, 1 centre-ness)";
  if (outputShape.size() != 3)
    return "gives an output of " + formatShape(outputShape) + "; " + detector +
           " needs a map (channels x height x width) of " + channels + " channels " + parts;
  if (outputShape[0] != classes + 5)
    return "gives " + std::to_string(outputShape[0]) + " channels; " + detector + " needs " +
           channels + " " + parts;
  const std::int64_t h = outputShape[1], w = outputShape[2];
  if (h < 1 || w < 1 || inputHeight < 1 || inputWidth < 1 || inputHeight % h != 0 ||
      inputWidth % w != 0 || inputHeight / h != inputWidth / w)
    return "a " + std::to_string(h) + "x" + std::to_string(w) + " map does not divide the " +
           std::to_string(inputHeight) + "x" + std::to_string(inputWidth) +
           " input into equal strides";
  if (stride) *stride = inputHeight / h;
  return std::nullopt;
}

torch::Tensor targetFromBoxes(const std::vector<std::vector<target::Box>>& boxes) {
  std::size_t most = 0;
  for (const auto& image : boxes)
    most = std::max(most, image.size());
  auto target = torch::zeros({std::int64_t(boxes.size()), std::int64_t(most), 6}, torch::kFloat);
  auto rows = target.accessor<float, 3>();
  for (std::size_t i = 0; i < boxes.size(); ++i)
    for (std::size_t j = 0; j < most; ++j) {
      auto row = rows[std::int64_t(i)][std::int64_t(j)];
      if (j >= boxes[i].size()) {
        row[0] = -1;
        continue;
      }
      const auto& b = boxes[i][j];
      row[0] = float(b.cls);
      row[1] = b.x0, row[2] = b.y0, row[3] = b.x1, row[4] = b.y1;
      row[5] = float((b.crowd ? 1 : 0) | (b.difficult ? 2 : 0));
    }
  return target;
}

std::vector<std::vector<target::Box>> boxesFromTarget(const torch::Tensor& target) {
  dhCheckTarget(target);
  const auto t = target.detach().to(torch::kCPU, torch::kFloat).contiguous();
  auto rows = t.accessor<float, 3>();
  std::vector<std::vector<target::Box>> out(static_cast<std::size_t>(t.size(0)));
  for (std::int64_t i = 0; i < t.size(0); ++i)
    for (std::int64_t j = 0; j < t.size(1); ++j) {
      const auto row = rows[i][j];
      if (!(row[0] >= 0) || !std::isfinite(row[0])) continue;  // padding
      target::Box b;
      b.cls = std::llround(row[0]);
      b.x0 = row[1], b.y0 = row[2], b.x1 = row[3], b.y1 = row[4];
      const long flags = std::isfinite(row[5]) ? std::lround(row[5]) : 0;
      b.crowd = (flags & 1) != 0;
      b.difficult = (flags & 2) != 0;
      out[std::size_t(i)].push_back(b);
    }
  return out;
}

}  // namespace netsmith::task
