// Detection figures by the COCO rules (task/coco_map.h): hand-worked cases (the AP of each
// worked out in the comments) and random cases against an independent implementation written
// here from the COCO definition in another form (each recall point's precision as the best
// precision at any recall at least as high, instead of an envelope and a search).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "task/coco_map.h"

using netsmith::target::Box;
using netsmith::task::cocoMap;
using netsmith::task::ScoredBox;

namespace {

target::Box box(float x0, float y0, float x1, float y1, std::int64_t cls = 0, bool crowd = false) {
  target::Box b;
  b.cls = cls;
  b.x0 = x0, b.y0 = y0, b.x1 = x1, b.y1 = y1;
  b.crowd = crowd;
  return b;
}

ScoredBox det(float x0, float y0, float x1, float y1, float score, std::int64_t cls = 0) {
  return ScoredBox{box(x0, y0, x1, y1, cls), score};
}

/// The independent implementation: per class and threshold, every detection of every image
/// with whether it counts and whether it is right, then AP as the mean over the 101 recalls of
/// the best precision reached at that recall or beyond.
double referenceAp(const std::vector<std::vector<target::Box>>& truth,
                   const std::vector<std::vector<ScoredBox>>& dets, std::int64_t cls,
                   double threshold, int maxDets, int* positivesOut = nullptr) {
  struct Outcome {
    float score;
    std::size_t order;
    bool right;
  };
  std::vector<Outcome> outcomes;
  int positives = 0;
  std::size_t order = 0;
  for (std::size_t i = 0; i < truth.size(); ++i) {
    std::vector<target::Box> counted, ignored;
    for (const auto& b : truth[i])
      if (b.cls == cls) (b.crowd || b.difficult ? ignored : counted).push_back(b);
    positives += int(counted.size());
    std::vector<ScoredBox> d;
    for (const auto& s : dets[i])
      if (s.box.cls == cls) d.push_back(s);
    std::stable_sort(d.begin(), d.end(),
                     [](const ScoredBox& a, const ScoredBox& b) { return a.score > b.score; });
    if (int(d.size()) > maxDets) d.resize(std::size_t(maxDets));
    std::vector<bool> used(counted.size(), false), usedIgnored(ignored.size(), false);
    for (const auto& s : d) {
      // The best free counted box at the threshold (the later one on a tie)...
      int best = -1;
      double bestIou = std::min(threshold, 1 - 1e-10);
      for (std::size_t k = 0; k < counted.size(); ++k) {
        const double iou = netsmith::task::boxIou(s.box, counted[k]);
        if (!used[k] && iou >= bestIou) best = int(k), bestIou = iou;
      }
      if (best >= 0) {
        used[std::size_t(best)] = true;
        outcomes.push_back({s.score, order++, true});
        continue;
      }
      // ...else the best ignored one it overlaps enough (a difficult box once, a crowd box any
      // number of times) leaves it out; else it is wrong.
      int left = -1;
      double leftIou = std::min(threshold, 1 - 1e-10);
      for (std::size_t k = 0; k < ignored.size(); ++k) {
        const double iou = netsmith::task::boxIou(s.box, ignored[k], ignored[k].crowd);
        if (!(usedIgnored[k] && !ignored[k].crowd) && iou >= leftIou) left = int(k), leftIou = iou;
      }
      if (left >= 0)
        usedIgnored[std::size_t(left)] = true;
      else
        outcomes.push_back({s.score, order++, false});
    }
  }
  if (positivesOut) *positivesOut = positives;
  if (positives == 0) return -1;
  std::stable_sort(outcomes.begin(), outcomes.end(), [](const Outcome& a, const Outcome& b) {
    return a.score > b.score || (a.score == b.score && a.order < b.order);
  });
  std::vector<std::pair<double, double>> points;  // recall, precision
  double tp = 0;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    tp += outcomes[i].right;
    points.emplace_back(tp / positives, tp / double(i + 1));
  }
  double sum = 0;
  for (int r = 0; r <= 100; ++r) {
    double best = 0;
    for (const auto& [recall, precision] : points)
      if (recall >= r / 100.0 - 1e-12) best = std::max(best, precision);
    sum += best;
  }
  return sum / 101;
}

}  // namespace

// Two objects, three detections: D1 overlaps the first with IoU 0.725 (10 x 7.25 inside
// 10 x 10), D2 hits nothing, D3 is the second exactly.
//   thresholds 0.50 .. 0.70 (5): D1 right (P 1, R 1/2), D2 wrong (P 1/2), D3 right (P 2/3,
//     R 1); monotone precision 1, 2/3, 2/3: recalls 0 .. 0.5 (51 points) read 1, the 50 above
//     2/3: AP = (51 + 100/3) / 101 = 253/303
//   thresholds 0.75 .. 0.95 (5): D1 and D2 wrong, D3 right (P 1/3, R 1/2): the 51 recalls to
//     0.5 read 1/3, the rest 0: AP = 17/101 = 51/303
//   mAP = (253 + 51) / 606 = 152/303; AP50 = 253/303; AP75 = 51/303.
TEST(CocoMap, TwoObjectsThreeDetectionsWorkedByHand) {
  const std::vector<std::vector<target::Box>> truth{{box(0, 0, 10, 10), box(20, 0, 30, 10)}};
  const std::vector<std::vector<ScoredBox>> dets{
      {det(0, 0, 10, 7.25f, 0.9f), det(50, 50, 60, 60, 0.8f), det(20, 0, 30, 10, 0.7f)}};
  const auto m = cocoMap(truth, dets, 1);
  EXPECT_NEAR(m.map50, 253.0 / 303, 1e-12);
  EXPECT_NEAR(m.map75, 51.0 / 303, 1e-12);
  EXPECT_NEAR(m.map, 152.0 / 303, 1e-12);
  EXPECT_NEAR(m.ap[0], 152.0 / 303, 1e-12);
  // Recall: 1 at the five low thresholds, 1/2 at the five high ones.
  EXPECT_NEAR(m.recall, 0.75, 1e-12);
  // All boxes are small (100 px², under 32²): no medium or large truth.
  EXPECT_NEAR(m.mapSmall, m.map, 1e-12);
  EXPECT_EQ(m.mapMedium, -1);
  EXPECT_EQ(m.mapLarge, -1);
  EXPECT_NEAR(m.precision50[0][50], 1.0, 1e-12);
  EXPECT_NEAR(m.precision50[0][51], 2.0 / 3, 1e-12);
  // One detection per image: D1 only. Right at the five low thresholds (R 1/2: 51 points of 1),
  // wrong at the others: mAP = (5 x 51/101) / 10 = 51/202.
  netsmith::task::CocoMapOptions one;
  one.maxDetections = 1;
  EXPECT_NEAR(cocoMap(truth, dets, 1, one).map, 51.0 / 202, 1e-12);
}

// A crowd box takes any number of detections, its IoU the overlap over the detection's area,
// and those detections count neither way: E1 and E2 inside the crowd, E3 on the object give
// AP 1 at every threshold. Without the crowd flag the big box is an object to find: E1 and E2
// are wrong (IoU 25/400 each), E3 comes third, P 1/3 at R 1/2 (the big box is never found): the
// 51 recalls to 0.5 read 1/3, AP = 17/101.
TEST(CocoMap, CrowdBoxesTakeDetectionsThatCountNeitherWay) {
  const std::vector<std::vector<ScoredBox>> dets{
      {det(0, 0, 5, 5, 0.9f), det(2, 2, 7, 7, 0.8f), det(40, 40, 50, 50, 0.7f)}};
  const auto crowd = cocoMap({{box(0, 0, 20, 20, 0, true), box(40, 40, 50, 50)}}, dets, 1);
  EXPECT_NEAR(crowd.map, 1.0, 1e-12);
  const auto plain = cocoMap({{box(0, 0, 20, 20), box(40, 40, 50, 50)}}, dets, 1);
  EXPECT_NEAR(plain.ap50[0], 17.0 / 101, 1e-12);
  // A class with no truth box has no AP (-1) and is left out of the means.
  const auto other =
      cocoMap({{box(40, 40, 50, 50)}}, {{det(40, 40, 50, 50, 0.9f), det(0, 0, 9, 9, 0.5f, 1)}}, 2);
  EXPECT_EQ(other.ap[1], -1);
  EXPECT_NEAR(other.map, 1.0, 1e-12);
}

// Random scenes (several classes, overlapping detections, equal scores, crowd and difficult
// boxes, images without truth or without detections): every class's AP at every threshold
// agrees with the implementation above to 1e-6, and so do the means.
TEST(CocoMap, AgreesWithAnIndependentImplementationOnRandomScenes) {
  std::mt19937 rng(11);
  int between = 0;  // APs neither 0 nor 1: the cases are not all trivial
  std::uniform_real_distribution<float> place(0, 80), size(4, 40), jitter(-6, 6);
  std::uniform_int_distribution<int> count(0, 5), cls(0, 2), coin(0, 9);
  for (int trial = 0; trial < 25; ++trial) {
    SCOPED_TRACE(trial);
    std::vector<std::vector<target::Box>> truth(6);
    std::vector<std::vector<ScoredBox>> dets(6);
    for (std::size_t i = 0; i < truth.size(); ++i) {
      const int n = count(rng);
      for (int k = 0; k < n; ++k) {
        const float x = place(rng), y = place(rng), w = size(rng), h = size(rng);
        target::Box b = box(x, y, x + w, y + h, cls(rng));
        b.difficult = coin(rng) == 0;
        b.crowd = !b.difficult && coin(rng) == 1;
        truth[i].push_back(b);
        // Near it, sometimes: a detection of the same or another class.
        for (int d = coin(rng) % 3; d > 0; --d) {
          const float dx = jitter(rng), dy = jitter(rng);
          const float score = float(coin(rng)) / 10;  // ties happen
          dets[i].push_back(det(x + dx, y + dy, x + w + dx + jitter(rng), y + h + dy, score,
                                coin(rng) < 8 ? b.cls : cls(rng)));
        }
      }
      for (int k = count(rng) / 2; k > 0; --k) {
        const float x = place(rng), y = place(rng);
        dets[i].push_back(det(x, y, x + size(rng), y + size(rng), float(coin(rng)) / 10, cls(rng)));
      }
    }
    const int maxDets = trial % 2 ? 100 : 2;
    netsmith::task::CocoMapOptions options;
    options.maxDetections = maxDets;
    const auto m = cocoMap(truth, dets, 3, options);
    double sum = 0;
    int n = 0;
    for (std::int64_t c = 0; c < 3; ++c) {
      double classSum = 0;
      for (int t = 0; t < 10; ++t) {
        const double ref = referenceAp(truth, dets, c, 0.5 + 0.05 * t, maxDets);
        if (t == 0) {
          EXPECT_NEAR(m.ap50[std::size_t(c)], ref, 1e-6);
        }
        if (ref < 0) continue;
        between += ref > 0.01 && ref < 0.99;
        classSum += ref;
        sum += ref;
        ++n;
      }
      if (m.ap[std::size_t(c)] > -1) {
        EXPECT_NEAR(m.ap[std::size_t(c)], classSum / 10, 1e-6);
      }
    }
    if (n > 0) {
      EXPECT_NEAR(m.map, sum / n, 1e-6);
    }
  }
  EXPECT_GT(between, 200);
}

// One image's errors at a score, worked by hand: true boxes A (class 0), B (class 1) and a
// difficult D (class 0); detections best first:
//   d6 on D, 0.95        matches the difficult box: counts neither way
//   d7 on D again, 0.94  D is taken (not crowd), IoU 1 with a class-0 box: poor box (COCO: FP)
//   d1 on A, 0.9         found
//   d2 near A, 0.8       A taken; IoU 81/100 with A: poor box
//   d3 class 0 on B, 0.7 IoU 1 with B of class 1: wrong class
//   d4 class 1 off everything, 0.6: false
//   d5 class 1 on B, 0.3 below the score 0.5: not counted, so B is missed
TEST(CocoMap, ImageErrorsAtAScoreFollowTheMatchingRules) {
  const auto box = [](std::int64_t cls, float x0, float y0, float x1, float y1,
                      bool difficult = false) {
    return target::Box{cls, x0, y0, x1, y1, false, difficult};
  };
  const std::vector<target::Box> truth = {box(0, 0, 0, 10, 10), box(1, 20, 20, 30, 30),
                                          box(0, 40, 0, 50, 10, true)};
  const std::vector<target::Box> dets = {
      box(0, 40, 0, 50, 10),  box(0, 40, 0, 50, 10),  box(0, 0, 0, 10, 10),  box(0, 1, 1, 10, 10),
      box(0, 20, 20, 30, 30), box(1, 50, 50, 60, 60), box(1, 20, 20, 30, 30)};
  const std::vector<float> scores = {0.95f, 0.94f, 0.9f, 0.8f, 0.7f, 0.6f, 0.3f};
  auto e = netsmith::task::detectionErrors(truth, dets, scores, 0.5f);
  EXPECT_EQ(e.found, 1);
  EXPECT_EQ(e.poorBox, 2);
  EXPECT_EQ(e.wrongClass, 1);
  EXPECT_EQ(e.falses, 1);
  EXPECT_EQ(e.missed, 1);
  EXPECT_EQ(e.total(), 5);
  // From 0.2, d5 finds B.
  e = netsmith::task::detectionErrors(truth, dets, scores, 0.2f);
  EXPECT_EQ(e.found, 2);
  EXPECT_EQ(e.missed, 0);
  // The class-0 match: d6 on the ignored box, d1 found, A and D's class has one positive.
  const auto m = netsmith::task::matchImage(truth, dets, 0, 0.5);
  EXPECT_EQ(m.positives, 1);
  EXPECT_EQ(m.missed, 0);
  EXPECT_TRUE(m.onIgnored[0]);
  EXPECT_EQ(m.truthOf[1], -1);
  EXPECT_EQ(m.truthOf[2], 0);
  EXPECT_EQ(m.truthOf[3], -1);
}
