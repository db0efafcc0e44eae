// The data doctor: confident learning on hand-worked probabilities, duplicates planted among
// images that have none, and the whole doctor on a small project with flipped labels and a
// sample leaked into the test split, stopped and resumed.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>
#include <random>
#include <set>
#include <sstream>

#include "common/file_util.h"
#include "data_fixtures.h"
#include "doctor/confident_learning.h"
#include "doctor/doctor.h"
#include "doctor/image_hash.h"
#include "project/project.h"
#include "registries/registries.h"
#include "test_support.h"
#include "train_fixtures.h"

namespace netsmith {
namespace {

using testutil::TempDir;
namespace fs = std::filesystem;

TEST(ConfidentLearning, HandWorkedJointAndTheFlaggedSample) {
  // Two classes. t0 = (0.9 + 0.8 + 0.2) / 3, t1 = (0.9 + 0.7 + 0.8) / 3 = 0.8. Sample 2 is
  // labelled 0 but confidently 1; sample 4 reaches neither threshold.
  const std::vector<std::int64_t> labels{0, 0, 0, 1, 1, 1};
  doctor::ClassProbabilities p;
  p.classes = 2;
  p.values = {0.9f, 0.1f, 0.8f, 0.2f, 0.2f, 0.8f, 0.1f, 0.9f, 0.3f, 0.7f, 0.2f, 0.8f};
  const auto cj = doctor::confidentJoint(labels, p);
  EXPECT_NEAR(cj.thresholds[0], 1.9 / 3, 1e-6);
  EXPECT_NEAR(cj.thresholds[1], 0.8, 1e-6);
  EXPECT_EQ(cj.counts, (std::vector<std::vector<std::int64_t>>{{2, 1}, {0, 2}}));
  // Rows calibrated to 3 samples each ({2, 1}; {0, 3}), then to 1 over all six.
  EXPECT_NEAR(cj.joint[0][1], 1.0 / 6, 1e-9);
  EXPECT_NEAR(cj.joint[1][1], 3.0 / 6, 1e-9);
  EXPECT_NEAR(cj.joint[1][0], 0.0, 1e-12);

  const auto ranked = doctor::rankLabelIssues(labels, p);
  ASSERT_EQ(ranked.size(), 6u);
  // round(6 * 1/6) = 1 sample labelled 0 is pruned towards 1: the one with the largest margin.
  EXPECT_EQ(ranked[0].sample, 2);
  EXPECT_TRUE(ranked[0].flagged);
  EXPECT_EQ(ranked[0].suggested, 1);
  EXPECT_NEAR(ranked[0].selfConfidence, 0.2, 1e-6);
  for (std::size_t i = 1; i < ranked.size(); ++i)
    EXPECT_FALSE(ranked[i].flagged) << i;
  // The rest by self-confidence, lowest first: sample 4 (0.7) next.
  EXPECT_EQ(ranked[1].sample, 4);
  for (std::size_t i = 2; i < ranked.size(); ++i)
    EXPECT_LE(ranked[i - 1].selfConfidence, ranked[i].selfConfidence);

  // Inputs that disagree are refused by name.
  EXPECT_NE(testutil::errorOf([&] {
              doctor::rankLabelIssues({0, 1}, p);
            }).find("2 labels"),
            std::string::npos);
  EXPECT_NE(testutil::errorOf([&] {
              doctor::rankLabelIssues({0, 0, 0, 1, 1, 7}, p);
            }).find("label 7"),
            std::string::npos);
}

/// Smooth random pictures (a few blurred blobs), all different.
cv::Mat blobPicture(std::mt19937& rng, int size) {
  cv::Mat m(size, size, CV_8UC3, cv::Scalar(20, 20, 20));
  std::uniform_int_distribution<int> pos(0, size - 1), radius(size / 10, size / 3), colour(40, 250);
  for (int b = 0; b < 4; ++b)
    cv::circle(m, {pos(rng), pos(rng)}, radius(rng),
               cv::Scalar(colour(rng), colour(rng), colour(rng)), cv::FILLED);
  cv::GaussianBlur(m, m, cv::Size(0, 0), 1.2);
  return m;
}

/// The near copy the issue plants: resized, re-encoded as JPEG, slightly brightened.
cv::Mat nearCopy(const cv::Mat& image) {
  cv::Mat big, back;
  cv::resize(image, big, cv::Size(), 1.5, 1.5, cv::INTER_LINEAR);
  std::vector<unsigned char> jpeg;
  cv::imencode(".jpg", big, jpeg, {cv::IMWRITE_JPEG_QUALITY, 85});
  back = cv::imdecode(jpeg, cv::IMREAD_COLOR);
  back.convertTo(back, -1, 1.0, 12);
  return back;
}

TEST(Duplicates, PlantedExactAndNearPairsAreFoundAndNoneElse) {
  std::mt19937 rng(5);
  std::vector<cv::Mat> train, test;
  for (int i = 0; i < 150; ++i)
    train.push_back(blobPicture(rng, 48));
  for (int i = 0; i < 50; ++i)
    test.push_back(blobPicture(rng, 48));
  auto find = [&] {
    std::vector<doctor::ImageRef> refs;
    std::vector<doctor::ImageFingerprint> prints;
    for (std::size_t i = 0; i < train.size(); ++i) {
      refs.push_back({0, std::int64_t(i)});
      prints.push_back(doctor::fingerprint(train[i]));
    }
    for (std::size_t i = 0; i < test.size(); ++i) {
      refs.push_back({1, std::int64_t(i)});
      prints.push_back(doctor::fingerprint(test[i]));
    }
    return doctor::findDuplicates(refs, prints, {});
  };
  // None on data with none.
  const auto clean = find();
  EXPECT_TRUE(clean.pairs.empty()) << clean.pairs.size() << " pairs, the first "
                                   << (clean.pairs.empty() ? 0 : clean.pairs[0].similarity);

  // Planted: an exact copy across splits, three near copies across splits, one near copy
  // within the training data.
  test[3] = train[10].clone();
  test[7] = nearCopy(train[20]);
  test[8] = nearCopy(train[30]);
  test[9] = nearCopy(train[40]);
  train[100] = nearCopy(train[50]);
  const auto found = find();
  std::set<std::tuple<int, std::int64_t, int, std::int64_t, bool>> pairs;
  for (const auto& p : found.pairs)
    pairs.insert({p.a.split, p.a.index, p.b.split, p.b.index, p.exact});
  const std::set<std::tuple<int, std::int64_t, int, std::int64_t, bool>> planted = {
      {0, 10, 1, 3, true},
      {0, 20, 1, 7, false},
      {0, 30, 1, 8, false},
      {0, 40, 1, 9, false},
      {0, 50, 0, 100, false}};
  EXPECT_EQ(pairs, planted);
  EXPECT_EQ(found.exactFound, 1);
  EXPECT_EQ(found.nearFound, 4);
  EXPECT_TRUE(found.pairs.front().exact);  // exact first
  for (const auto& p : found.pairs)
    if (!p.exact) {
      EXPECT_GE(p.similarity, 0.99);
    }
}

/// The blob project (4 classes) with `flips` training labels moved to another class, one
/// training image copied into the test split and another brightened into it.
struct NoisyProject {
  std::string path;
  std::set<std::int64_t> flipped;
};

NoisyProject noisyBlobs(const TempDir& dir) {
  NoisyProject out;
  out.path = testutil::writeTrainProject(dir, Json{{"batch_size", 16}}, 240);
  auto train = testutil::makeBlobData(240, 1);
  auto test = testutil::makeBlobData(60, 2);
  std::mt19937 rng(11);
  while (out.flipped.size() < 12) {
    const auto i = std::int64_t(rng() % 240);
    if (!out.flipped.insert(i).second) continue;
    auto& label = train.labels[std::size_t(i)];
    label = static_cast<unsigned char>((label + 1 + rng() % 3) % 4);
  }
  test.images[0] = train.images[5];
  test.labels[0] = train.labels[5];
  test.images[1] = train.images[9];
  for (auto& v : test.images[1])
    v = static_cast<unsigned char>(std::min(255, v + 10));
  test.labels[1] = train.labels[9];
  testutil::writeIdx(train, 16, 16, dir.file("train-images.idx"), dir.file("train-labels.idx"),
                     false);
  testutil::writeIdx(test, 16, 16, dir.file("test-images.idx"), dir.file("test-labels.idx"), false);
  return out;
}

std::vector<std::int64_t> rankedIndices(const std::string& csvPath) {
  std::ifstream in(csvPath);
  std::string line;
  std::getline(in, line);
  std::vector<std::int64_t> out;
  while (std::getline(in, line)) {
    // rank,split,index,...
    const auto a = line.find(','), b = line.find(',', a + 1), c = line.find(',', b + 1);
    out.push_back(std::stoll(line.substr(b + 1, c - b - 1)));
  }
  return out;
}

// 110 copies of one training image (5,995 exact pairs) and one train/test copy of another: the
// one leak is counted and kept first, however few pairs are kept.
TEST(Duplicates, ALeakIsCountedAndKeptAmongThousandsOfPairsInsideASplit) {
  std::mt19937 rng(7);
  const cv::Mat same = blobPicture(rng, 48), leaked = blobPicture(rng, 48);
  std::vector<doctor::ImageRef> refs;
  std::vector<doctor::ImageFingerprint> prints;
  for (int i = 0; i < 110; ++i) {
    refs.push_back({0, i});
    prints.push_back(doctor::fingerprint(same));
  }
  refs.push_back({0, 110});
  prints.push_back(doctor::fingerprint(leaked));
  refs.push_back({1, 0});
  prints.push_back(doctor::fingerprint(leaked));
  doctor::DuplicateOptions options;
  options.keep = 50;
  const auto found = doctor::findDuplicates(refs, prints, options);
  EXPECT_EQ(found.exactFound, 110 * 109 / 2 + 1);
  EXPECT_EQ(found.crossSplitFound, 1);
  ASSERT_EQ(found.pairs.size(), 50u);
  EXPECT_EQ(found.pairs[0].a.index, 110);
  EXPECT_EQ(found.pairs[0].b.split, 1);
}

TEST(Doctor, FindsFlippedLabelsAndLeakageAndGoesOnAfterAStop) {
  TempDir dir;
  const auto noisy = noisyBlobs(dir);
  const auto loaded = project::loadProject(noisy.path);
  ASSERT_TRUE(loaded.problems.empty());

  doctor::DoctorOptions o;
  o.registries = ::netsmith::Registries::builtins();
  o.folder = dir.file("doctor");
  o.folds = 3;
  o.epochs = 4;
  std::vector<std::string> logs;
  o.log = [&](const std::string& line) { logs.push_back(line); };
  // Stopped as the second fold starts.
  std::vector<std::string> stages;
  o.progress = [&](const doctor::DoctorProgress& p) {
    if (stages.empty() || stages.back() != p.stage) stages.push_back(p.stage);
    EXPECT_GE(p.fraction, 0.0);
    EXPECT_LE(p.fraction, 1.0);
    return p.stage != "fold 2/3";
  };
  const auto stopped = doctor::runDoctor(loaded, o);
  EXPECT_TRUE(stopped.stopped);
  EXPECT_TRUE(fs::exists(fs::path(o.folder) / "fold-1" / "held_out.json"));
  EXPECT_FALSE(fs::exists(fs::path(o.folder) / "fold-3"));
  EXPECT_TRUE(fs::exists(fs::path(o.folder) / "doctor.json"));  // what was found so far

  // Again with the same settings: fold 1 is not trained again.
  logs.clear();
  stages.clear();
  o.progress = [&](const doctor::DoctorProgress& p) {
    if (stages.empty() || stages.back() != p.stage) stages.push_back(p.stage);
    return true;
  };
  const auto report = doctor::runDoctor(loaded, o);
  EXPECT_FALSE(report.stopped);
  for (const auto& line : logs)
    EXPECT_EQ(line.find("fold 1/3"), std::string::npos) << line;
  EXPECT_EQ(stages.back(), "done");

  // The whole training source (validation cut from it included) was examined.
  EXPECT_EQ(report.examined, 240);
  EXPECT_EQ(report.testSamples, 60);
  // The flipped labels lead the ranking: the 12 most suspicious hold at least 10 of them.
  const auto ranked = rankedIndices((fs::path(o.folder) / "label_ranking.csv").string());
  ASSERT_EQ(ranked.size(), 240u);
  int found = 0;
  for (std::size_t i = 0; i < 12; ++i)
    found += noisy.flipped.count(ranked[i]);
  EXPECT_GE(found, 10) << "of the 12 flipped labels";
  // What confident learning flags is mostly the flipped ones.
  EXPECT_GE(report.labelIssuesFlagged, 6);
  int flaggedRight = 0;
  for (const auto& issue : report.labelIssues)
    flaggedRight += noisy.flipped.count(issue.sample.index);
  EXPECT_GE(flaggedRight, 0.8 * double(report.labelIssues.size()));
  // Leakage: the copied and the brightened image, each against its training original.
  EXPECT_EQ(report.leaks, 2);
  EXPECT_EQ(report.exactDuplicates, 1);
  EXPECT_EQ(report.nearDuplicates, 1);
  ASSERT_GE(report.duplicates.size(), 2u);
  std::set<std::pair<std::int64_t, std::int64_t>> leaks;
  for (const auto& d : report.duplicates) {
    EXPECT_TRUE(d.leak());
    leaks.insert({d.a.index, d.b.index});
  }
  EXPECT_EQ(leaks, (std::set<std::pair<std::int64_t, std::int64_t>>{{5, 0}, {9, 1}}));
  EXPECT_EQ(report.balance.counts.size(), 4u);

  // The JSON holds what its schema requires; the page is bounded and names what it shows.
  const Json json = Json::parse(readTextFile((fs::path(o.folder) / "doctor.json").string()));
  const Json schema = doctor::doctorReportSchema();
  for (const auto& key : schema.at("required"))
    EXPECT_TRUE(json.contains(key.get<std::string>())) << key;
  EXPECT_EQ(json["duplicates"]["leaks"], 2);
  const std::string html = readTextFile((fs::path(o.folder) / "report.html").string());
  EXPECT_LT(html.size(), 2u << 20);
  EXPECT_NE(html.find("data:image/png;base64,"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);

  // Fold models this good raise no doubt about their ranking, and no list was cut.
  for (const auto& w : report.warnings) {
    EXPECT_EQ(w.find("too weak"), std::string::npos) << w;
    EXPECT_EQ(w.find("lists the first"), std::string::npos) << w;
  }

  // The resumed doctor ranks as one that ran without a stop.
  doctor::DoctorOptions whole = o;
  whole.folder = dir.file("doctor-whole");
  whole.progress = {};
  doctor::runDoctor(loaded, whole);
  EXPECT_EQ(rankedIndices((fs::path(whole.folder) / "label_ranking.csv").string()), ranked);

  // Other settings in the same folder are refused by name.
  o.epochs = 5;
  const auto error = testutil::errorOf([&] { doctor::runDoctor(loaded, o); });
  EXPECT_NE(error.find("other settings (epochs)"), std::string::npos) << error;
}

// Fold models that learnt nothing (a learning rate of 1e-9) are right on about a quarter of
// four classes: the report says their ranking means little, with the held-out accuracy, which
// equals the one counted here from the folds' own held-out probabilities.
TEST(Doctor, FoldModelsTooWeakToRankLabelsAreSaidToBe) {
  TempDir dir;
  const auto noisy = noisyBlobs(dir);
  auto loaded = project::loadProject(noisy.path);
  ASSERT_TRUE(loaded.problems.empty());
  loaded.project.train["optimizer"] = Json{{"type", "sgd"}, {"lr", 1e-9}};
  doctor::DoctorOptions o;
  o.registries = ::netsmith::Registries::builtins();
  o.folder = dir.file("doctor");
  o.folds = 2;
  o.epochs = 1;
  const auto report = doctor::runDoctor(loaded, o);
  std::string weak;
  for (const auto& w : report.warnings)
    if (w.find("too weak") != std::string::npos) weak = w;
  ASSERT_FALSE(weak.empty()) << "no warning among " << report.warnings.size();
  // The held-out accuracy, from each fold's probabilities and the labels the ranking lists.
  std::map<std::int64_t, std::int64_t> given;  // position in the examined set -> label
  {
    std::ifstream csv(fs::path(o.folder) / "label_ranking.csv");
    std::string line;
    std::getline(csv, line);
    std::int64_t row = 0;
    while (std::getline(csv, line)) {
      std::vector<std::string> cells;
      std::stringstream cellStream(line);
      for (std::string c; std::getline(cellStream, c, ',');)
        cells.push_back(c);
      // rank,split,index,item,given,given_name,suggested,suggested_name,self_confidence,
      // suggested_probability,flagged: `given` counted from the end (an item may hold a comma).
      ASSERT_GE(cells.size(), 11u) << line;
      given[std::stoll(cells[2])] = std::stoll(cells[cells.size() - 7]);
      ++row;
    }
    ASSERT_EQ(row, report.examined);
  }
  std::int64_t right = 0, total = 0;
  for (int f = 1; f <= 2; ++f) {
    const Json held = Json::parse(readTextFile(
        (fs::path(o.folder) / ("fold-" + std::to_string(f)) / "held_out.json").string()));
    const auto& probs = held["probs"];
    for (std::size_t r = 0; r < held["positions"].size(); ++r) {
      std::size_t best = 0;
      for (std::size_t c = 1; c < 4; ++c)
        if (probs[r * 4 + c].get<double>() > probs[r * 4 + best].get<double>()) best = c;
      // Positions are the examined set's; the ranking names the source's index, equal here
      // (the training source examined whole, in order).
      const auto position = held["positions"][r].get<std::int64_t>();
      ASSERT_TRUE(given.count(position)) << position;
      right += std::int64_t(best) == given[position];
      ++total;
    }
  }
  ASSERT_EQ(total, report.examined);
  std::ostringstream percent;
  percent.setf(std::ios::fixed);
  percent.precision(1);
  percent << 100.0 * double(right) / double(total) << "% of their held-out samples right";
  EXPECT_NE(weak.find(percent.str()), std::string::npos) << weak << " / " << percent.str();
  EXPECT_LT(double(right) / double(total), 0.6);
}

TEST(Doctor, DefaultFolderIsDoctorSlashTheProjectsStem) {
  EXPECT_EQ(doctor::defaultDoctorFolder("/a/b/fashion_mnist.netsmith.json"),
            "doctor/fashion_mnist");
  EXPECT_EQ(doctor::defaultDoctorFolder("scenes.json"), "doctor/scenes");
  EXPECT_EQ(doctor::defaultDoctorFolder("/x/.netsmith.json"),
            "doctor/_netsmith");  // no hidden folder
}

TEST(Doctor, RefusesALinkedFolderAndRunsWithoutLabelChecks) {
  TempDir dir;
  const auto path = testutil::writeTrainProject(dir);
  const auto loaded = project::loadProject(path);
  doctor::DoctorOptions o;
  o.registries = ::netsmith::Registries::builtins();
  // A folder that is a link someone planted: refused, nothing written through it.
  fs::create_directories(dir.path() / "elsewhere");
  fs::create_symlink(dir.path() / "elsewhere", dir.path() / "linked");
  o.folder = dir.file("linked");
  o.labels = false;
  const auto error = testutil::errorOf([&] { doctor::runDoctor(loaded, o); });
  EXPECT_FALSE(error.empty());
  EXPECT_TRUE(fs::is_empty(dir.path() / "elsewhere"));
  // Without label checks: no training, duplicates and balance only.
  o.folder = dir.file("plain");
  const auto report = doctor::runDoctor(loaded, o);
  EXPECT_TRUE(report.probabilitiesFrom.empty());
  EXPECT_FALSE(fs::exists(fs::path(o.folder) / "fold-1"));
  EXPECT_EQ(report.examined, 256);
}

TEST(Doctor, AOnePixelWideImageGetsItsThumbnailAndTheReportIsWritten) {
  // Two copies of a 1 x 400 picture among ordinary ones: a duplicate pair, so both are listed
  // and drawn; scaled by 64/400 the picture would be 0 pixels wide without the floor of one.
  TempDir dir;
  for (const char* cls : {"a", "b"}) {
    fs::create_directories(dir.path() / "images" / cls);
    for (int i = 0; i < 4; ++i) {
      cv::Mat image(12, 12, CV_8UC1, cv::Scalar(30 * i + (cls[0] == 'a' ? 0 : 15)));
      cv::circle(image, {3 + i, 6}, 2 + i % 2, cv::Scalar(250), -1);
      cv::imwrite((dir.path() / "images" / cls / ("p" + std::to_string(i) + ".png")).string(),
                  image);
    }
  }
  cv::Mat thin(400, 1, CV_8UC1);
  for (int y = 0; y < 400; ++y)
    thin.at<unsigned char>(y, 0) = static_cast<unsigned char>(y % 256);
  cv::imwrite((dir.path() / "images" / "a" / "thin1.png").string(), thin);
  cv::imwrite((dir.path() / "images" / "b" / "thin2.png").string(), thin);
  const std::string path = dir.file("thin.netsmith.json");
  std::ofstream(path) << R"({"format": "netsmith-project", "version": 1, "name": "thin",
    "model": {"input": {"channels": 1, "height": 12, "width": 12}, "nodes": [
      {"id": "input", "op": "Input"},
      {"id": "flat", "op": "Flatten", "inputs": ["input"]},
      {"id": "fc", "op": "Linear", "params": {"out_features": 2}, "inputs": ["flat"]}]},
    "data": {"train": {"format": "image_folder", "root": "images"}, "fit": "resize"},
    "train": {"epochs": 1, "batch_size": 4, "threads": 1, "workers": 1}})";
  const auto loaded = project::loadProject(path);
  doctor::DoctorOptions o;
  o.registries = ::netsmith::Registries::builtins();
  o.folder = dir.file("doctor");
  o.labels = false;
  std::vector<cv::Size> drawn;
  o.thumbnail = [&](const doctor::SampleRef&, const cv::Mat& small) {
    drawn.push_back(small.size());
  };
  const auto report = doctor::runDoctor(loaded, o);
  ASSERT_FALSE(report.duplicates.empty());
  EXPECT_TRUE(fs::is_regular_file(fs::path(o.folder) / "report.html"));
  // The thin pair's thumbnails: 1 wide, 64 high.
  EXPECT_NE(std::find(drawn.begin(), drawn.end(), cv::Size(1, 64)), drawn.end());
}

}  // namespace
}  // namespace netsmith
