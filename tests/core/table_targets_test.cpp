// The tasks whose targets are a table (multi-label, regression): their manifests read over real
// files (both multi-label forms, the regression columns, every bad row named, skipped or fatal),
// their strata, and the tasks' figures against values worked out here by hand.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "augment/transform.h"
#include "data/data_module.h"
#include "data/preview_grid.h"
#include "data/project_data.h"
#include "data/source_formats.h"
#include "data_fixtures.h"
#include "project/project.h"
#include "task/multilabel.h"
#include "task/regression.h"
#include "task/task_registry.h"
#include "test_support.h"

using namespace netsmith;
using namespace netsmith::data;
using testutil::errorOf;
using testutil::TempDir;

namespace {

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)

SourceSpec spec(SourceFormat format, const std::string& manifest,
                std::vector<std::string> targets = {}) {
  SourceSpec s;
  s.format = format;
  s.path = "data.train";
  s.manifest = manifest;
  s.targets = std::move(targets);
  return s;
}

std::vector<float> row(const DatasetSource& s, std::int64_t i) {
  return s.targetValues(i);
}

}  // namespace

TEST(MultiLabelCsvSource, LabelListsAndColumnsGiveTheSameRows) {
  TempDir dir;
  testutil::writeImageFolder(dir.path() / "imgs", {"x"}, 4, 6, 6, 1);
  std::ofstream(dir.file("list.csv")) << "path,labels\nimgs/x/img_0.png,dog;cat\n"
                                         "imgs/x/img_1.png,\nimgs/x/img_2.png,\"car ; dog\"\n"
                                         "imgs/x/img_3.png,dog\n";
  const auto list =
      openSource(spec(SourceFormat::MultiLabelCsv, dir.file("list.csv")), {}, ErrorPolicy::Fail);
  EXPECT_EQ(list->classNames(), (std::vector<std::string>{"car", "cat", "dog"}));
  ASSERT_EQ(list->size(), 4);
  EXPECT_EQ(list->targetWidth(), 3);
  EXPECT_EQ(row(*list, 0), (std::vector<float>{0, 1, 1}));
  EXPECT_EQ(row(*list, 1), (std::vector<float>{0, 0, 0}));
  EXPECT_EQ(row(*list, 2), (std::vector<float>{1, 0, 1}));
  EXPECT_EQ(list->label(0), -1);
  // Strata: the rarest label present (car 1, cat 1, dog 3; ties to the first), none: 3.
  EXPECT_EQ(list->numStrata(), 4);
  EXPECT_EQ(list->stratum(0), 1);
  EXPECT_EQ(list->stratum(1), 3);
  EXPECT_EQ(list->stratum(2), 0);
  EXPECT_EQ(list->stratum(3), 2);

  std::ofstream(dir.file("cols.csv")) << "path,car,cat,dog\nimgs/x/img_0.png,0,1,1\n"
                                         "imgs/x/img_1.png,0,0,0\nimgs/x/img_2.png,1,0,1\n"
                                         "imgs/x/img_3.png,0,0,1\n";
  const auto cols =
      openSource(spec(SourceFormat::MultiLabelCsv, dir.file("cols.csv")), {}, ErrorPolicy::Fail);
  EXPECT_EQ(cols->classNames(), list->classNames());
  for (std::int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(row(*cols, i), row(*list, i)) << i;

  // Spaces separate labels when no row uses ";".
  std::ofstream(dir.file("spaces.csv")) << "path,labels\nimgs/x/img_0.png,dog cat\n";
  const auto spaces =
      openSource(spec(SourceFormat::MultiLabelCsv, dir.file("spaces.csv")), {}, ErrorPolicy::Fail);
  EXPECT_EQ(spaces->classNames(), (std::vector<std::string>{"cat", "dog"}));
}

/// This process's resident memory, in KiB (Linux).
long residentKiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

TEST(MultiLabelCsvSource, ARowCostsItsLabelsNotTheNumberOfClasses) {
  // 6,000 rows of two labels each among 6,001 classes: dense rows would take 6,000 x 6,001
  // floats (144 MB); sparse ones take their 12,000 labels.
  TempDir dir;
  testutil::writeImageFolder(dir.path() / "imgs", {"x"}, 1, 6, 6, 1);
  {
    std::ofstream csv(dir.file("wide.csv"));
    csv << "path,labels\n";
    for (int i = 0; i < 6000; ++i)
      csv << "imgs/x/img_0.png,l" << i << ";shared\n";
  }
  const long before = residentKiB();
  const auto src =
      openSource(spec(SourceFormat::MultiLabelCsv, dir.file("wide.csv")), {}, ErrorPolicy::Fail);
  const long grown = residentKiB() - before;
  ASSERT_EQ(src->size(), 6000);
  ASSERT_EQ(src->targetWidth(), 6001);
  EXPECT_LT(grown, 48 * 1024) << "KiB";
  // Classes sort by name: l0, l1, l10, ... and "shared" last.
  const auto& names = src->classNames();
  const auto at = [&](const std::string& name) {
    return std::int32_t(std::find(names.begin(), names.end(), name) - names.begin());
  };
  std::int64_t ones = 0;
  for (std::int64_t i = 0; i < src->size(); ++i) {
    const auto labels = src->positiveLabels(i);
    ASSERT_EQ(labels.size(), 2u) << i;
    EXPECT_EQ(*labels.begin(), at("l" + std::to_string(i))) << i;
    EXPECT_EQ(*(labels.begin() + 1), at("shared")) << i;
    if (i % 997 == 0) {
      const auto values = src->targetValues(i);
      for (const float v : values)
        ones += v == 1.0f ? 1 : 0;
      EXPECT_EQ(values[std::size_t(at("shared"))], 1.0f);
    }
  }
  EXPECT_EQ(ones, 2 * 7);  // rows 0, 997, ..., 5982
}

TEST(MultiLabelCsvSource, BadRowsAreNamedSkippedOrFatal) {
  TempDir dir;
  testutil::writeImageFolder(dir.path() / "imgs", {"x"}, 2, 6, 6, 1);
  const std::vector<std::string> classes{"cat", "dog"};
  std::ofstream(dir.file("bad.csv")) << "path,labels\nimgs/x/img_0.png,cat\n"
                                        "imgs/x/img_1.png,cat;horse\nimgs/x/none.png,dog\n";
  const auto src = openSource(spec(SourceFormat::MultiLabelCsv, dir.file("bad.csv")), classes,
                              ErrorPolicy::Skip);
  EXPECT_EQ(src->size(), 1);
  ASSERT_EQ(src->skippedAtScan().size(), 2u);
  EXPECT_CONTAINS(src->skippedAtScan()[0].item, "bad.csv line 3");
  EXPECT_CONTAINS(src->skippedAtScan()[0].reason, "unknown class \"horse\"");
  EXPECT_CONTAINS(src->skippedAtScan()[1].reason, "image not found");
  EXPECT_CONTAINS(
      errorOf([&] {
        openSource(spec(SourceFormat::MultiLabelCsv, dir.file("bad.csv")), classes,
                   ErrorPolicy::Fail);
      }),
      "data.train.manifest: " + dir.file("bad.csv") + ": line 3: unknown class \"horse\"");
  std::ofstream(dir.file("cols.csv")) << "path,cat,dog\nimgs/x/img_0.png,1,2\n";
  EXPECT_CONTAINS(errorOf([&] {
                    openSource(spec(SourceFormat::MultiLabelCsv, dir.file("cols.csv")), {},
                               ErrorPolicy::Fail);
                  }),
                  "line 2: dog is \"2\", not 0 or 1");
  EXPECT_CONTAINS(errorOf([&] {
                    openSource(spec(SourceFormat::MultiLabelCsv, dir.file("cols.csv")),
                               {"dog", "cat"}, ErrorPolicy::Fail);
                  }),
                  "differ from data.classes");
  std::ofstream(dir.file("short.csv")) << "path,cat,dog\nimgs/x/img_0.png,1\n";
  EXPECT_CONTAINS(errorOf([&] {
                    openSource(spec(SourceFormat::MultiLabelCsv, dir.file("short.csv")), {},
                               ErrorPolicy::Fail);
                  }),
                  "line 2: has 2 columns, the header has 3");
  std::ofstream(dir.file("empty.csv")) << "path,labels\nimgs/x/img_0.png,\n";
  EXPECT_CONTAINS(errorOf([&] {
                    openSource(spec(SourceFormat::MultiLabelCsv, dir.file("empty.csv")), {},
                               ErrorPolicy::Fail);
                  }),
                  "no row has a label");
}

TEST(MultiLabelCsvSource, AKnownClassWithASpaceIsOneLabel) {
  TempDir dir;
  testutil::writeImageFolder(dir.path() / "imgs", {"x"}, 2, 6, 6, 1);
  // No row uses ";": labels are separated by spaces, but a cell that is a class whole is it.
  std::ofstream(dir.file("m.csv")) << "path,labels\nimgs/x/img_0.png,Ankle boot\n"
                                      "imgs/x/img_1.png,Bag Sandal\n";
  const auto src = openSource(spec(SourceFormat::MultiLabelCsv, dir.file("m.csv")),
                              {"Ankle boot", "Bag", "Sandal"}, ErrorPolicy::Fail);
  EXPECT_EQ(row(*src, 0), (std::vector<float>{1, 0, 0}));
  EXPECT_EQ(row(*src, 1), (std::vector<float>{0, 1, 1}));
}

TEST(TableSources, HeadersAndHugeRowsAreRefusedNamingTheLine) {
  TempDir dir;
  std::ofstream(dir.file("trailing.csv")) << "path,a,b,\nx.png,1,0,\n";
  EXPECT_CONTAINS(errorOf([&] {
                    openSource(spec(SourceFormat::MultiLabelCsv, dir.file("trailing.csv")), {},
                               ErrorPolicy::Fail);
                  }),
                  "line 1: column 4 has no name (a trailing comma?)");
  std::ofstream(dir.file("twice.csv")) << "path,a,a\nx.png,1,2\n";
  EXPECT_CONTAINS(errorOf([&] {
                    openSource(spec(SourceFormat::RegressionCsv, dir.file("twice.csv")), {},
                               ErrorPolicy::Fail);
                  }),
                  "line 1: column 3: \"a\" is named twice");
  // A line of 20,000 columns is refused by its line, before its cells are kept.
  std::ofstream(dir.file("wide.csv")) << "path,v\nx.png,1\n" << std::string(20000, ',') << "\n";
  EXPECT_CONTAINS(errorOf([&] {
                    openSource(spec(SourceFormat::RegressionCsv, dir.file("wide.csv")), {},
                               ErrorPolicy::Skip);
                  }),
                  "wide.csv: line 3: more than 10000 columns");
  // A long cell is shown cut in a message.
  testutil::writeImageFolder(dir.path() / "imgs", {"x"}, 1, 6, 6, 1);
  std::ofstream(dir.file("long.csv"))
      << "path,v\nimgs/x/img_0.png," << std::string(5000, 'z') << "\n";
  const auto e = errorOf([&] {
    openSource(spec(SourceFormat::RegressionCsv, dir.file("long.csv")), {}, ErrorPolicy::Fail);
  });
  EXPECT_CONTAINS(e, "v is \"zzzz");
  EXPECT_LT(e.size(), 400u) << e;
}

TEST(TableSources, TheAugmentPreviewCaptionsLabelSetsAndTargets) {
  TempDir dir;
  testutil::writeImageFolder(dir.path() / "imgs", {"x"}, 3, 8, 8, 1);
  std::ofstream(dir.file("m.csv")) << "path,labels\nimgs/x/img_0.png,cat;dog\n"
                                      "imgs/x/img_1.png,\nimgs/x/img_2.png,dog\n";
  const auto path = testutil::writeClassifierProject(
      dir, R"({"train": {"format": "multilabel_csv", "manifest": "m.csv"}})", 2);
  const auto loaded = project::loadProject(path);
  const auto pd = openProjectData(loaded.project, loaded.baseDir(),
                                  augment::TransformRegistry::withBuiltins(), "");
  ASSERT_TRUE(pd);
  const auto rows = makePreview(*pd, 3, 1, 0);
  std::vector<std::string> captions;
  for (const auto& r : rows)
    captions.push_back(r.caption);
  std::sort(captions.begin(), captions.end());
  EXPECT_EQ(captions, (std::vector<std::string>{"cat, dog", "dog", "no label"}));
}

TEST(RegressionCsvSource, TargetColumnsInTheProjectsOrder) {
  TempDir dir;
  testutil::writeImageFolder(dir.path() / "imgs", {"x"}, 3, 6, 6, 1);
  std::ofstream(dir.file("r.csv")) << "path,a,b,note\nimgs/x/img_0.png,+1.5,-2,x\n"
                                      "imgs/x/img_1.png,2.5e1,0,y\nimgs/x/img_2.png,nan,1,z\n";
  const auto src = openSource(spec(SourceFormat::RegressionCsv, dir.file("r.csv"), {"b", "a"}), {},
                              ErrorPolicy::Skip);
  ASSERT_EQ(src->size(), 2);
  EXPECT_EQ(src->targetNames(), (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(row(*src, 0), (std::vector<float>{-2, 1.5f}));
  EXPECT_EQ(row(*src, 1), (std::vector<float>{0, 25}));
  ASSERT_EQ(src->skippedAtScan().size(), 1u);
  EXPECT_CONTAINS(src->skippedAtScan()[0].reason, "a is \"nan\", not a finite number");
  EXPECT_CONTAINS(errorOf([&] {
                    openSource(spec(SourceFormat::RegressionCsv, dir.file("r.csv"), {"c"}), {},
                               ErrorPolicy::Skip);
                  }),
                  "no column \"c\" (data.targets names it)");
  // Without data.targets every column but path is a target: "note" is not a number.
  EXPECT_CONTAINS(errorOf([&] {
                    openSource(spec(SourceFormat::RegressionCsv, dir.file("r.csv")), {},
                               ErrorPolicy::Fail);
                  }),
                  "line 2: note is \"x\", not a finite number");
}

TEST(TableTargets, StratifiedSplitsKeepEveryLabel) {
  // 40 samples; label "rare" on 4 of them: a 25% validation split takes one of them, at least.
  TempDir dir;
  testutil::writeImageFolder(dir.path() / "imgs", {"x"}, 40, 4, 4, 1);
  std::ofstream m(dir.file("m.csv"));
  m << "path,labels\n";
  for (int i = 0; i < 40; ++i)
    m << "imgs/x/img_" << i << ".png," << (i % 10 == 0 ? "common;rare" : "common") << "\n";
  m.close();
  DataConfig config;
  config.train = spec(SourceFormat::MultiLabelCsv, dir.file("m.csv"));
  config.split.fraction = 0.25;
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    config.split.seed = seed;
    const auto d = openDataModule(config);
    int rareVal = 0, rareTrain = 0;
    for (auto i : d.validation.indices)
      rareVal += d.train.source->targetValues(i)[1] > 0;
    for (auto i : d.train.indices)
      rareTrain += d.train.source->targetValues(i)[1] > 0;
    EXPECT_EQ(rareVal, 1) << seed;
    EXPECT_EQ(rareTrain, 3) << seed;
  }
}

TEST(TableTargets, ATaskRefusesSourcesOfAnotherKind) {
  const auto tasks = task::TaskRegistry::withBuiltins();
  DataConfig config;
  config.train = spec(SourceFormat::Csv, "m.csv");
  EXPECT_FALSE(task::dataTargetProblem(tasks.get("classification"), config));
  const auto p = task::dataTargetProblem(tasks.get("multilabel"), config);
  ASSERT_TRUE(p);
  EXPECT_CONTAINS(*p,
                  "data.train.format: csv gives one class per sample; the task multilabel "
                  "takes a set of labels per sample (formats: multilabel_csv)");
  config.train = spec(SourceFormat::RegressionCsv, "m.csv");
  EXPECT_FALSE(task::dataTargetProblem(tasks.get("regression"), config));
  EXPECT_TRUE(task::dataTargetProblem(tasks.get("classification"), config));
}

TEST(MultiLabelFigures, AveragePrecisionAsScikitLearnDefinesIt) {
  // Scores 0.9 (+), 0.8 (-), 0.7 (+), 0.6 (-): precision at each positive 1 and 2/3, recall
  // steps of 1/2: AP = 0.5 * 1 + 0.5 * 2/3 = 0.8333...
  EXPECT_NEAR(task::averagePrecision({0.9f, 0.8f, 0.7f, 0.6f}, {1, 0, 1, 0}), 5.0 / 6, 1e-12);
  // Ties are one threshold: 0.5 (+, -) then 0.4 (+). At 0.5: P 1/2, R 1/2; at 0.4: P 2/3, R 1:
  // AP = 0.5 * 0.5 + 0.5 * 2/3 = 0.58333...
  EXPECT_NEAR(task::averagePrecision({0.5f, 0.5f, 0.4f}, {1, 0, 1}), 0.5 * 0.5 + 0.5 * 2.0 / 3,
              1e-12);
  // No positive: 0, as scikit-learn's average_precision_score gives (and counts in its mean).
  EXPECT_EQ(task::averagePrecision({0.3f, 0.2f}, {0, 0}), 0.0);
}

TEST(MultiLabelFigures, SumsGiveTheFiguresWorkedOutHere) {
  task::TaskSetup setup;
  setup.dataClasses = 2;
  setup.classes = {"a", "b"};
  task::MultiLabelTask t(setup);
  const auto sums = t.evalSums();
  // Probabilities (through the logit) and truths of 4 samples x 2 labels.
  const std::vector<float> p{0.9f, 0.2f, 0.6f, 0.7f, 0.3f, 0.4f, 0.1f, 0.8f};
  const std::vector<float> y{1, 0, 0, 1, 1, 1, 0, 0};
  auto probs = torch::tensor(p).view({4, 2});
  sums->add(torch::log(probs / (1 - probs)), torch::tensor(y).view({4, 2}));
  const auto m = sums->finish();
  // Label a: predicted (>= 0.5) 1,1,0,0 vs 1,0,1,0: TP 1 FP 1 FN 1 -> F1 0.5.
  // Label b: predicted 0,1,0,1 vs 0,1,1,0: TP 1 FP 1 FN 1 -> F1 0.5.
  EXPECT_NEAR(m.perClass.at("f1")[0], 0.5, 1e-12);
  EXPECT_NEAR(m.perClass.at("f1")[1], 0.5, 1e-12);
  EXPECT_NEAR(m.figures.at("f1_micro"), 0.5, 1e-12);
  EXPECT_NEAR(m.figures.at("f1_macro"), 0.5, 1e-12);
  // Every label right: sample 0 only.
  EXPECT_NEAR(m.figures.at("subset_accuracy"), 0.25, 1e-12);
  // a: 0.9 (+) 0.6 (-) 0.3 (+) 0.1 (-): AP = 0.5 * 1 + 0.5 * 2/3; b: 0.8 (-) 0.7 (+) 0.4 (+)
  // 0.2 (-): AP = 0.5 * 1/2 + 0.5 * 2/3.
  const double apA = 0.5 + 0.5 * 2.0 / 3, apB = 0.25 + 0.5 * 2.0 / 3;
  EXPECT_NEAR(m.perClass.at("ap")[0], apA, 1e-6);
  EXPECT_NEAR(m.perClass.at("ap")[1], apB, 1e-6);
  EXPECT_NEAR(m.figures.at("map"), (apA + apB) / 2, 1e-6);
  // The Evaluation page's view: each sample's probabilities and labels, and its loss (the mean
  // binary cross-entropy over its labels: sample 0, -(ln 0.9 + ln 0.8) / 2).
  const auto views =
      t.describeSamples(torch::log(probs / (1 - probs)), torch::tensor(y).view({4, 2}));
  ASSERT_EQ(views.size(), 4u);
  EXPECT_NEAR(views[3].output[1], 0.8f, 1e-6);
  EXPECT_EQ(views[2].truth, (std::vector<float>{1, 1}));
  EXPECT_NEAR(views[0].score, -(std::log(0.9) + std::log(0.8)) / 2, 1e-6);
  // Once other processes' sums are added (here: the same again), AP comes from the score
  // histograms: the same ranks, the same AP.
  auto doubled = sums->sums();
  for (auto& v : doubled)
    v *= 2;
  sums->setSums(doubled);
  const auto merged = sums->finish();
  EXPECT_EQ(merged.samples, 8);
  EXPECT_NEAR(merged.perClass.at("ap")[0], apA, 1e-9);
  EXPECT_NEAR(merged.figures.at("f1_micro"), 0.5, 1e-12);
}

TEST(RegressionFigures, ScaledOutputsAndScikitLearnsDefinitions) {
  task::TaskSetup setup;
  setup.targets = {"t"};
  setup.state = Json{{"target_mean", {10.0}}, {"target_std", {2.0}}};
  task::RegressionTask t(setup);
  const auto sums = t.evalSums();
  // Outputs 0, 1, -1 mean 10, 12, 8; truths 10, 13, 9: errors 0, -1, -1.
  sums->add(torch::tensor({0.0f, 1.0f, -1.0f}).view({3, 1}),
            torch::tensor({10.0f, 13.0f, 9.0f}).view({3, 1}));
  const auto m = sums->finish();
  EXPECT_NEAR(m.figures.at("mae"), 2.0 / 3, 1e-9);
  EXPECT_NEAR(m.figures.at("rmse"), std::sqrt(2.0 / 3), 1e-9);
  // SS_tot: mean 32/3; (10-32/3)^2 + (13-32/3)^2 + (9-32/3)^2 = 4/9 + 49/9 + 25/9 = 78/9.
  EXPECT_NEAR(m.figures.at("r2"), 1 - 2.0 / (78.0 / 9), 1e-9);
  // The loss is on standardised values: errors 0, -0.5, -0.5 -> MSE 1/6.
  EXPECT_NEAR(m.loss, 1.0 / 6, 1e-6);
  // The Evaluation page's view: values in the targets' units, the sample's absolute error.
  const auto views = t.describeSamples(torch::tensor({0.0f, 1.0f, -1.0f}).view({3, 1}),
                                       torch::tensor({10.0f, 13.0f, 9.0f}).view({3, 1}));
  ASSERT_EQ(views.size(), 3u);
  EXPECT_EQ(views[1].output, std::vector<float>{12.0f});
  EXPECT_EQ(views[1].truth, std::vector<float>{13.0f});
  EXPECT_NEAR(views[0].score, 0.0, 1e-9);
  EXPECT_NEAR(views[2].score, 1.0, 1e-6);
  EXPECT_CONTAINS(errorOf([&] {
                    task::TaskSetup bad = setup;
                    bad.state = Json{{"target_mean", {1.0}}, {"target_std", {0.0}}};
                    task::RegressionTask{bad};
                  }),
                  "task_state: target_mean and target_std need 1 finite values");
  // The scaling belongs to the targets it was measured on.
  EXPECT_CONTAINS(errorOf([&] {
                    task::TaskSetup other = setup;
                    other.state["targets"] = {"u"};
                    task::RegressionTask{other};
                  }),
                  "are not the ones the model was trained on ([\"u\"])");
  // A target that is constant in the split: R² is scikit-learn's 1 (perfect) or 0, not the
  // rounding of Σy² - (Σy)²/n.
  const auto truth = torch::full({3, 1}, 10.1f);
  const auto constant = t.evalSums();
  constant->add((truth - 10) / 2, truth);  // predicts 10.1 exactly
  EXPECT_EQ(constant->finish().figures.at("r2"), 1.0);
  const auto constantMiss = t.evalSums();
  constantMiss->add(torch::tensor({0.0f, 0.05f, 0.1f}).view({3, 1}), truth);
  EXPECT_EQ(constantMiss->finish().figures.at("r2"), 0.0);
}

// Each label's threshold maximises its F1 (worked here: at 0.3, TP 3, FP 1, FN 0 give 6/7);
// a label without a positive keeps 0.5; equal scores are one threshold.
TEST(MultiLabelTask, ThresholdsMaximiseEachLabelsF1) {
  EXPECT_FLOAT_EQ(task::bestF1Threshold({0.9f, 0.8f, 0.7f, 0.3f, 0.2f}, {1, 0, 1, 1, 0}), 0.3f);
  EXPECT_EQ(task::bestF1Threshold({0.9f, 0.1f}, {0, 0}), 0.5);
  // Ties: 0.6 holds a positive and a negative; taking both (F1 0.5) beats 0.9 alone (a
  // negative only: F1 0).
  EXPECT_FLOAT_EQ(task::bestF1Threshold({0.9f, 0.6f, 0.6f}, {0, 1, 0}), 0.6f);
  // The task adopts the tuned thresholds, reports them, and its figures use them.
  task::TaskSetup setup;
  setup.dataClasses = 2;
  task::MultiLabelTask t(setup);
  const auto logits =
      torch::logit(torch::tensor({0.9f, 0.2f, 0.3f, 0.8f, 0.35f, 0.1f})).view({3, 2});
  const auto truth = torch::tensor({1.f, 0.f, 1.f, 1.f, 0.f, 0.f}).view({3, 2});
  auto sums = t.evalSums();
  sums->add(logits, truth);
  const auto first = sums->finish();
  EXPECT_EQ(first.perClass.at("threshold"), (std::vector<double>{0.5, 0.5}));
  // Label 0: scores 0.9 (1), 0.3 (1), 0.35 (0): best at 0.3 (TP 2, FP 1: F1 0.8).
  EXPECT_NEAR(first.perClass.at("tuned_threshold")[0], 0.3, 1e-6);
  t.adoptValidation(first);
  EXPECT_NEAR(t.thresholds()[0], 0.3, 1e-6);
  EXPECT_NEAR(t.state()["thresholds"][0].get<double>(), 0.3, 1e-6);
  auto again = t.evalSums();
  again->add(logits, truth);
  const auto tuned = again->finish();
  EXPECT_NEAR(tuned.perClass.at("f1")[0], 0.8, 1e-9);
  setup.state = t.state();
  task::MultiLabelTask restored(setup);
  EXPECT_EQ(restored.thresholds(), t.thresholds());
  setup.state = Json{{"thresholds", {0.5}}};
  EXPECT_NE(testutil::errorOf([&] { task::MultiLabelTask{setup}; }).find("task_state.thresholds"),
            std::string::npos);
}
