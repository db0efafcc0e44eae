#include "task/coco_map.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>

namespace netsmith::task {

namespace {

constexpr int kThresholds = 10;  // 0.50 .. 0.95
constexpr int kRecalls = 101;    // 0, 0.01, .., 1

double area(const target::Box& b) {
  return double(std::max(0.0f, b.x1 - b.x0)) * double(std::max(0.0f, b.y1 - b.y0));
}

struct Range {
  double lo, hi;
};
constexpr std::array<Range, 4> kRanges{
    {{0, 1e10}, {0, 32.0 * 32.0}, {32.0 * 32.0, 96.0 * 96.0}, {96.0 * 96.0, 1e10}}};

/// The IoU thresholds and recalls exactly as COCOeval's np.linspace makes them (k x step +
/// start, the last the end itself): 0.5 + 0.05 x 7 is not its 8th threshold to the last bit,
/// and a detection's IoU or a class's recall can land on one exactly.
double threshold(int t) {
  return t == kThresholds - 1 ? 0.95 : t * ((0.95 - 0.5) / (kThresholds - 1)) + 0.5;
}

/// One image and class, one area range: its detections (best first) with, per threshold,
/// whether each matched and whether it is ignored; and its truth boxes not ignored.
struct ImageResult {
  std::vector<float> scores;
  std::vector<std::array<bool, kThresholds>> matched, ignored;
  std::int64_t truth = 0;
};

ImageResult evaluateImage(const std::vector<const target::Box*>& gts,
                          const std::vector<const ScoredBox*>& dts, const Range& range) {
  ImageResult r;
  // Truth: the ones counted first, the ignored after (the matching stops at the first ignored
  // box once it has a counted one).
  std::vector<const target::Box*> g;
  std::vector<bool> gIgnored;
  for (int pass = 0; pass < 2; ++pass)
    for (const auto* b : gts) {
      const double a = area(*b);
      const bool ignored = b->crowd || b->difficult || a < range.lo || a > range.hi;
      if (ignored != (pass == 1)) continue;
      g.push_back(b);
      gIgnored.push_back(ignored);
      if (!ignored) ++r.truth;
    }
  const std::size_t nd = dts.size(), ng = g.size();
  r.scores.resize(nd);
  r.matched.assign(nd, {});
  r.ignored.assign(nd, {});
  std::vector<double> ious(nd * ng);
  for (std::size_t d = 0; d < nd; ++d) {
    r.scores[d] = dts[d]->score;
    for (std::size_t k = 0; k < ng; ++k)
      ious[d * ng + k] = boxIou(dts[d]->box, *g[k], g[k]->crowd);
  }
  for (int t = 0; t < kThresholds; ++t) {
    std::vector<bool> taken(ng, false);
    for (std::size_t d = 0; d < nd; ++d) {
      double best = std::min(threshold(t), 1 - 1e-10);
      int m = -1;
      for (std::size_t k = 0; k < ng; ++k) {
        if (taken[k] && !g[k]->crowd) continue;
        if (m > -1 && !gIgnored[std::size_t(m)] && gIgnored[k]) break;
        if (ious[d * ng + k] < best) continue;
        best = ious[d * ng + k];
        m = int(k);
      }
      if (m == -1) {
        // Unmatched: ignored when outside the area range.
        const double a = area(dts[d]->box);
        r.ignored[d][std::size_t(t)] = a < range.lo || a > range.hi;
        continue;
      }
      taken[std::size_t(m)] = true;
      r.matched[d][std::size_t(t)] = true;
      r.ignored[d][std::size_t(t)] = gIgnored[std::size_t(m)];
    }
  }
  return r;
}

/// Precision at the 101 recalls and the final recall of one class, threshold and range from
/// all images' results; -1 (both) when there is no truth box.
void accumulate(const std::vector<ImageResult>& images, int t, std::array<double, kRecalls>& q,
                double& recall) {
  std::int64_t truth = 0;
  std::vector<std::tuple<float, bool, bool>> all;  // score, matched, ignored
  for (const auto& r : images) {
    truth += r.truth;
    for (std::size_t d = 0; d < r.scores.size(); ++d)
      all.emplace_back(r.scores[d], r.matched[d][std::size_t(t)], r.ignored[d][std::size_t(t)]);
  }
  if (truth == 0) {
    q.fill(-1);
    recall = -1;
    return;
  }
  // Best score first; equal scores keep the images' order (a stable sort, as COCOeval's).
  std::stable_sort(all.begin(), all.end(),
                   [](const auto& a, const auto& b) { return std::get<0>(a) > std::get<0>(b); });
  std::vector<double> rc, pr;
  double tp = 0, fp = 0;
  for (const auto& [score, matched, ignored] : all) {
    if (ignored) continue;
    (matched ? tp : fp) += 1;
    rc.push_back(tp / double(truth));
    pr.push_back(tp / (tp + fp + 2.220446049250313e-16));
  }
  recall = rc.empty() ? 0 : rc.back();
  for (std::size_t i = pr.size(); i-- > 1;)
    pr[i - 1] = std::max(pr[i - 1], pr[i]);
  q.fill(0);
  for (int k = 0; k < kRecalls; ++k) {
    const double at = k == kRecalls - 1 ? 1.0 : k * (1.0 / (kRecalls - 1));
    const auto it = std::lower_bound(rc.begin(), rc.end(), at);
    if (it == rc.end()) break;
    q[std::size_t(k)] = pr[std::size_t(it - rc.begin())];
  }
}

double meanOfValid(const std::vector<double>& v) {
  double sum = 0;
  int n = 0;
  for (double x : v)
    if (x > -1) sum += x, ++n;
  return n ? sum / n : -1;
}

}  // namespace

double boxIou(const target::Box& a, const target::Box& b, bool crowd) {
  const double w = std::min(a.x1, b.x1) - std::max(a.x0, b.x0);
  const double h = std::min(a.y1, b.y1) - std::max(a.y0, b.y0);
  if (w <= 0 || h <= 0) return 0;
  const double inter = w * h;
  const double denom = crowd ? area(a) : area(a) + area(b) - inter;
  return denom > 0 ? inter / denom : 0;
}

CocoMap cocoMap(const std::vector<std::vector<target::Box>>& truth,
                const std::vector<std::vector<ScoredBox>>& detections, std::int64_t classes,
                const CocoMapOptions& options) {
  const std::size_t images = std::max(truth.size(), detections.size());
  const auto k = std::size_t(std::max<std::int64_t>(0, classes));
  CocoMap out;
  out.ap.assign(k, -1);
  out.ap50.assign(k, -1);
  out.classRecall.assign(k, -1);
  out.precision50.assign(k, std::vector<double>(kRecalls, -1));
  // [range][threshold] per class: AP values; recall for range all.
  std::array<std::vector<double>, 4> apByRange;
  std::vector<double> ap50s, ap75s, recalls;
  static const std::vector<target::Box> kNone;
  static const std::vector<ScoredBox> kNoDetections;
  for (std::size_t c = 0; c < k; ++c) {
    std::array<std::vector<ImageResult>, 4> results;
    for (std::size_t i = 0; i < images; ++i) {
      const auto& gt = i < truth.size() ? truth[i] : kNone;
      const auto& dt = i < detections.size() ? detections[i] : kNoDetections;
      std::vector<const target::Box*> g;
      for (const auto& b : gt)
        if (b.cls == std::int64_t(c)) g.push_back(&b);
      std::vector<const ScoredBox*> d;
      for (const auto& s : dt)
        if (s.box.cls == std::int64_t(c)) d.push_back(&s);
      if (g.empty() && d.empty()) continue;
      std::stable_sort(d.begin(), d.end(),
                       [](const ScoredBox* a, const ScoredBox* b) { return a->score > b->score; });
      if (int(d.size()) > options.maxDetections) d.resize(std::size_t(options.maxDetections));
      for (std::size_t r = 0; r < kRanges.size(); ++r)
        results[r].push_back(evaluateImage(g, d, kRanges[r]));
    }
    for (std::size_t r = 0; r < kRanges.size(); ++r) {
      std::vector<double> perThreshold, recallPerThreshold;
      for (int t = 0; t < kThresholds; ++t) {
        std::array<double, kRecalls> q;
        double recall = -1;
        accumulate(results[r], t, q, recall);
        const double ap = q[0] > -1 ? std::accumulate(q.begin(), q.end(), 0.0) / kRecalls : -1.0;
        perThreshold.push_back(ap);
        recallPerThreshold.push_back(recall);
        if (r == 0 && t == 0) out.precision50[c].assign(q.begin(), q.end());
      }
      apByRange[r].insert(apByRange[r].end(), perThreshold.begin(), perThreshold.end());
      if (r != 0) continue;
      out.ap[c] = meanOfValid(perThreshold);
      out.ap50[c] = perThreshold[0];
      out.classRecall[c] = meanOfValid(recallPerThreshold);
      ap50s.push_back(perThreshold[0]);
      ap75s.push_back(perThreshold[5]);
      recalls.insert(recalls.end(), recallPerThreshold.begin(), recallPerThreshold.end());
    }
  }
  out.map = meanOfValid(apByRange[0]);
  out.mapSmall = meanOfValid(apByRange[1]);
  out.mapMedium = meanOfValid(apByRange[2]);
  out.mapLarge = meanOfValid(apByRange[3]);
  out.map50 = meanOfValid(ap50s);
  out.map75 = meanOfValid(ap75s);
  out.recall = meanOfValid(recalls);
  return out;
}

ImageMatch matchImage(const std::vector<target::Box>& truth,
                      const std::vector<target::Box>& detections, std::int64_t cls,
                      double threshold) {
  ImageMatch m;
  m.truthOf.assign(detections.size(), -1);
  m.onIgnored.assign(detections.size(), false);
  // The class's true boxes, the counted ones first (as evaluateImage orders them).
  std::vector<std::size_t> order;
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t t = 0; t < truth.size(); ++t) {
      const auto& b = truth[t];
      const bool ignored = b.crowd || b.difficult;
      if (b.cls != cls || ignored != (pass == 1)) continue;
      order.push_back(t);
      if (!ignored) ++m.positives;
    }
  std::vector<bool> taken(order.size(), false);
  for (std::size_t d = 0; d < detections.size(); ++d) {
    if (detections[d].cls != cls) continue;
    double best = std::min(threshold, 1 - 1e-10);
    int pick = -1;
    for (std::size_t k = 0; k < order.size(); ++k) {
      const auto& g = truth[order[k]];
      if (taken[k] && !g.crowd) continue;
      const bool ignored = g.crowd || g.difficult;
      if (pick > -1 &&
          !(truth[order[std::size_t(pick)]].crowd || truth[order[std::size_t(pick)]].difficult) &&
          ignored)
        break;
      const double iou = boxIou(detections[d], g, g.crowd);
      if (iou < best) continue;
      best = iou;
      pick = int(k);
    }
    if (pick < 0) continue;
    taken[std::size_t(pick)] = true;
    const auto& g = truth[order[std::size_t(pick)]];
    m.truthOf[d] = int(order[std::size_t(pick)]);
    m.onIgnored[d] = g.crowd || g.difficult;
  }
  for (std::size_t k = 0; k < order.size(); ++k) {
    const auto& g = truth[order[k]];
    if (!taken[k] && !(g.crowd || g.difficult)) ++m.missed;
  }
  return m;
}

DetectionErrors detectionErrors(const std::vector<target::Box>& truth,
                                const std::vector<target::Box>& detections,
                                const std::vector<float>& scores, float score) {
  DetectionErrors e;
  std::vector<target::Box> kept;
  for (std::size_t d = 0; d < detections.size(); ++d)
    if (d < scores.size() && scores[d] >= score) kept.push_back(detections[d]);
  std::vector<std::int64_t> classes;
  for (const std::vector<target::Box>* list : {&truth, static_cast<const decltype(kept)*>(&kept)})
    for (const auto& b : *list)
      if (std::find(classes.begin(), classes.end(), b.cls) == classes.end())
        classes.push_back(b.cls);
  for (const auto cls : classes) {
    const auto m = matchImage(truth, kept, cls, 0.5);
    e.missed += m.missed;
    for (std::size_t d = 0; d < kept.size(); ++d) {
      if (kept[d].cls != cls || m.onIgnored[d]) continue;
      if (m.truthOf[d] >= 0) {
        ++e.found;
        continue;
      }
      double sameClass = 0, otherClass = 0;
      for (const auto& g : truth) {
        const double iou = boxIou(kept[d], g);
        (g.cls == cls ? sameClass : otherClass) =
            std::max(g.cls == cls ? sameClass : otherClass, iou);
      }
      if (otherClass >= 0.5)
        ++e.wrongClass;
      else if (sameClass >= 0.1)
        ++e.poorBox;
      else
        ++e.falses;
    }
  }
  return e;
}

}  // namespace netsmith::task
