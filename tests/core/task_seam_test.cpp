// The Task seam, proven from outside: a second task written only in this file (a two-output
// regression: where the blob of the blob data set sits, as a row and a column) plugs into the
// trainer, validation, the run's records, eval and the data scan (its own target statistics)
// through the registries, without a line of core/train, core/data or the studio knowing it.
// Classification's own task is checked against sums computed here.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "checkpoint/checkpoint.h"
#include "common/file_util.h"
#include "data/data_module.h"
#include "data/data_scan.h"
#include "data/target_summary.h"
#include "eval/evaluation.h"
#include "experiment/sweep_schedule.h"
#include "experiment/sweep_spec.h"
#include "export/export_job.h"
#include "export/onnx_export.h"
#include "graph/graph_module.h"
#include "ops/op_registry.h"
#include "project/project.h"
#include "quadrant_task.h"
#include "registries/registries.h"
#include "resolve/resolved_project.h"
#include "run/run_records.h"
#include "task/classification.h"
#include "task/task.h"
#include "test_support.h"
#include "train/loop_state.h"
#include "train/trainability.h"
#include "train/trainer.h"
#include "train_fixtures.h"

using namespace netsmith;
using netsmith::testutil::Recorder;
using netsmith::testutil::TempDir;
namespace fs = std::filesystem;

namespace {

using netsmith::testutil::quadrantOf;
using netsmith::testutil::QuadrantRegression;
using netsmith::testutil::withQuadrants;

train::TrainerConfig quadrantConfig(const TempDir& dir, const Json& train, int outputs) {
  const auto path = testutil::writeTrainProject(dir, train);
  auto loaded = project::loadProject(path);
  EXPECT_TRUE(loaded.problems.empty()) << formatProblems(loaded.problems);
  train::TrainerConfig c;
  c.registries = withQuadrants();
  c.project = loaded.project;
  c.project.task = "quadrant_regression";
  for (auto& n : c.project.model.nodes)
    if (n.id == "fc") n.params["out_features"] = outputs;
  c.baseDir = loaded.baseDir();
  c.runsRoot = dir.file("runs");
  return c;
}

train::TrainResult trainWith(train::TrainerConfig config, std::shared_ptr<Recorder> sink) {
  train::Trainer trainer(std::move(config));
  trainer.addSink(sink);
  trainer.start();
  trainer.wait();
  return trainer.result();
}

}  // namespace

TEST(TaskSeam, ARegressionWrittenInATestTrainsThroughTheSeam) {
  TempDir dir;
  auto config = quadrantConfig(dir, {{"epochs", 4}, {"monitor", "val_mae"}}, 2);
  const auto project = config.project;
  auto recorder = std::make_shared<Recorder>();
  const auto r = trainWith(config, recorder);
  ASSERT_EQ(r.state, run::FinishState::Completed) << r.reason;

  // Its figures, by name, in every epoch's validation and training figures.
  const auto epochs = recorder->ofType(run::EventType::EpochEnd);
  ASSERT_EQ(epochs.size(), 4u);
  for (const auto& e : epochs) {
    ASSERT_TRUE(e.epoch.hasValidation);
    ASSERT_TRUE(e.epoch.validation.figures.count("mae"));
    ASSERT_TRUE(e.epoch.validation.figures.count("rmse"));
    ASSERT_TRUE(e.epoch.trainFigures.count("mae"));
    EXPECT_TRUE(std::isnan(e.epoch.trainAccuracy));
  }
  // It learns: a constant guess of (0.5, 0.5) is off by 0.5; the model ends far closer.
  const double first = epochs.front().epoch.validation.figures.at("mae");
  const double last = epochs.back().epoch.validation.figures.at("mae");
  EXPECT_LT(last, first);
  EXPECT_LT(last, 0.25);
  // train.monitor names the task's figure: "best" is the epoch of the lowest val_mae (the task
  // says lower is better), as the events give it.
  std::size_t bestAt = 0;
  for (std::size_t i = 1; i < epochs.size(); ++i)
    if (epochs[i].epoch.validation.figures.at("mae") <
        epochs[bestAt].epoch.validation.figures.at("mae"))
      bestAt = i;
  const Json best = checkpoint::readCheckpoint(r.lastCheckpoint).meta["loop"]["best"];
  EXPECT_EQ(best["epoch"].get<std::int64_t>(), epochs[bestAt].epoch.epoch);
  EXPECT_EQ(best["value"].get<double>(), epochs[bestAt].epoch.validation.figures.at("mae"));
  // The log line names its figures instead of an accuracy.
  EXPECT_NE(run::describeEpoch(epochs.back().epoch).find(" mae "), std::string::npos)
      << run::describeEpoch(epochs.back().epoch);

  // The test figure is the one the weights give: computed here from the checkpoint the run
  // names, on the test images read again from the IDX file, with numpy-like plain tensors.
  ASSERT_TRUE(r.hasTest);
  ASSERT_EQ(r.test.samples, 64);
  const auto ckpt = r.testCheckpoint == "best" ? r.bestCheckpoint : r.lastCheckpoint;
  ASSERT_FALSE(ckpt.empty());
  const auto registry = ops::OpRegistry::withBuiltins();
  graph::GraphModule net(project.model, registry);
  checkpoint::loadModuleState(*net, checkpoint::readCheckpoint(ckpt).model);
  net->eval();
  const auto blobs = testutil::makeBlobData(64, 2);  // what writeTrainProject wrote as test
  auto images = torch::empty({64, 1, 16, 16});
  auto targets = torch::empty({64, 2});
  for (int i = 0; i < 64; ++i) {
    for (int p = 0; p < 256; ++p)
      images[i][0][p / 16][p % 16] =
          (float(blobs.images[std::size_t(i)][std::size_t(p)]) / 255.0f - 0.3f) / 0.3f;
    const auto [row, col] = quadrantOf(blobs.labels[std::size_t(i)]);
    targets[i][0] = row;
    targets[i][1] = col;
  }
  torch::NoGradGuard noGrad;
  const auto diff = net->forward(images) - targets;
  const double mae = diff.abs().mean().item<double>();
  const double rmse = std::sqrt(diff.pow(2).mean().item<double>());
  EXPECT_NEAR(r.test.figures.at("mae"), mae, 1e-5);
  EXPECT_NEAR(r.test.figures.at("rmse"), rmse, 1e-5);

  // The run's records carry the figures too, read back by core's reader.
  const auto record = run::readRunRecord(r.runDir);
  ASSERT_EQ(record.epochEvents.size(), 4u);
  EXPECT_NEAR(record.epochEvents.back()["validation"]["figures"]["mae"].get<double>(), last, 1e-9);
  // A sweep's objective reads the same figures from a trial's events.
  EXPECT_NEAR(experiment::objectiveFromEpochEvent(record.epochEvents.back(), "val_mae"), last,
              1e-9);
  EXPECT_NEAR(experiment::objectiveFromEpochEvent(record.epochEvents.back(), "train_mae"),
              epochs.back().epoch.trainFigures.at("mae"), 1e-9);
  // And the project the run recorded says which task it trained.
  auto recorded = project::loadProject((fs::path(r.runDir) / "project.json").string());
  EXPECT_EQ(recorded.project.task, "quadrant_regression");

  const auto registries = withQuadrants();
  // eval goes through the task: its figures on the test split, the same as computed above
  // from the weights; no class view.
  eval::EvaluationOptions eo;
  eo.registries = registries;
  eo.checkpoint = ckpt;
  eo.dataFromCheckpoint = true;
  const auto evaluated = eval::evaluateCheckpoint(eo);
  EXPECT_EQ(evaluated.task, "quadrant_regression");
  EXPECT_EQ(evaluated.topK, 0);  // the figures' evaluator: no class view
  EXPECT_EQ(evaluated.metrics.samples, 64);
  EXPECT_NEAR(evaluated.metrics.figures.at("mae"), mae, 1e-5);
  EXPECT_NEAR(evaluated.metrics.figures.at("rmse"), rmse, 1e-5);
  const Json evalJson = evaluated.toJson();
  EXPECT_NEAR(evalJson["figures"]["mae"].get<double>(), mae, 1e-5);
  // The JSON is what the task's schema requires, and where it came from: no class leftovers
  // (accuracy, confusion, per-class scores).
  std::set<std::string> allowed = {"checkpoint", "split", "task", "runtime"};
  const Json schema = QuadrantRegression().evaluationSchema();
  for (const auto& key : schema.at("required"))
    allowed.insert(key.get<std::string>());
  for (const auto& [key, value] : evalJson.items())
    EXPECT_TRUE(allowed.count(key)) << key << " is not the task's";
  for (const auto& key : allowed)
    EXPECT_TRUE(evalJson.contains(key)) << key;
  // A program that does not know the task refuses to evaluate it, by name.
  eo.registries = Registries::builtins();
  const auto evalError = testutil::errorOf([&] { eval::evaluateCheckpoint(eo); });
  EXPECT_NE(evalError.find("unknown task \"quadrant_regression\""), std::string::npos) << evalError;

  // The export says what the task's output is: its name in the ONNX file (run in OpenCV DNN
  // against LibTorch under that name), the task and how to read it in the metadata.
  exporting::ExportJob job;
  job.registries = registries;
  job.checkpoint = ckpt;
  job.targets = {{"onnx", dir.file("quadrants.onnx")}};
  const auto exported = exporting::runExportJob(job);
  ASSERT_EQ(exported.outcomes.size(), 1u);
  EXPECT_TRUE(exported.outcomes[0].verified) << exported.outcomes[0].message;
  EXPECT_NE(
      exported.outcomes[0].message.find("output \"position\": row and column of the blob, 0 to 1"),
      std::string::npos)
      << exported.outcomes[0].message;
  const auto info = exporting::inspectOnnx(netsmith::readTextFile(dir.file("quadrants.onnx")));
  EXPECT_EQ(info.outputs, std::vector<std::string>{"position"});
  const auto meta = [&info](const std::string& key) {
    for (const auto& [k, v] : info.metadata)
      if (k == key) return v;
    return std::string("(missing)");
  };
  EXPECT_EQ(meta("task"), "quadrant_regression");
  EXPECT_EQ(meta("output"), "position");
  EXPECT_EQ(meta("postprocessing"), "none: read the two numbers");
  // --softmax is for class scores: refused for this task, naming the checkpoint.
  job.softmax = true;
  const auto softmaxError = testutil::errorOf([&] { exporting::runExportJob(job); });
  EXPECT_NE(softmaxError.find(ckpt + ": --softmax adds probabilities over classes"),
            std::string::npos)
      << softmaxError;
  job.softmax = false;
  // A program that does not know the task refuses to export it, by name.
  job.registries = Registries::builtins();
  const auto exportError = testutil::errorOf([&] { exporting::runExportJob(job); });
  EXPECT_NE(exportError.find(ckpt + ": task: unknown task \"quadrant_regression\""),
            std::string::npos)
      << exportError;
}

TEST(TaskSeam, TheTestTasksOwnTargetStatisticsComeOutOfTheDataScan) {
  // data-stats and the Data page scan the data through the project's task: the counts the test
  // task gives, against the labels the fixture wrote (no validation split: the whole file).
  TempDir dir;
  auto config = quadrantConfig(dir, Json::object(), 2);
  config.project.data.erase("validation");
  data::DataScanOptions options;
  options.targetStatistics = config.registries->tasks.statisticsOf(config.project.task);
  ASSERT_TRUE(options.targetStatistics);
  const auto scan =
      data::scanProjectData(config.project, config.baseDir, config.registries->transforms, options);
  ASSERT_TRUE(scan.targetSummary);
  std::array<std::int64_t, 2> rows{}, cols{};
  for (const auto label : testutil::makeBlobData(256, 1).labels) {
    ++rows[std::size_t(label / 2)];
    ++cols[std::size_t(label % 2)];
  }
  EXPECT_EQ(scan.targetSummary->jsonKey, "blob_positions");
  EXPECT_EQ(scan.targetSummary->json["rows"], Json(rows));
  EXPECT_EQ(scan.targetSummary->json["columns"], Json(cols));
  ASSERT_EQ(scan.targetSummary->table.rows.size(), 4u);
  EXPECT_EQ(scan.targetSummary->table.rows[3][1], std::to_string(cols[1]));
  // The class counts of its one-class-per-sample data stay beside it.
  EXPECT_TRUE(scan.oneClassPerSample);
  EXPECT_EQ(scan.train, 256);
}

TEST(TaskSeam, ValidationChecksTheTasksHeadRuleAndNamesAnUnknownTask) {
  TempDir dir;
  const auto registry = ops::OpRegistry::withBuiltins();
  // The blob model ends in 4 scores: right for classification, wrong for the regression.
  auto config = quadrantConfig(dir, Json::object(), 4);
  auto problems = resolve::checkTrainable(config.project, config.baseDir, *config.registries);
  ASSERT_EQ(problems.size(), 1u) << formatProblems(problems);
  EXPECT_EQ(problems[0].nodeId, "fc");
  EXPECT_NE(problems[0].message.find("2 outputs"), std::string::npos) << problems[0].message;
  // Training refuses it the same way, before a run folder exists.
  {
    auto recorder = std::make_shared<Recorder>();
    const auto r = trainWith(config, recorder);
    EXPECT_EQ(r.state, run::FinishState::Failed);
    EXPECT_NE(r.reason.find("2 outputs"), std::string::npos) << r.reason;
    EXPECT_FALSE(fs::exists(dir.file("runs")));
  }
  // A program without the task names it and what it knows.
  problems = resolve::checkTrainable(config.project, config.baseDir, *Registries::builtins());
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].path, "task");
  EXPECT_NE(problems[0].message.find("unknown task \"quadrant_regression\""), std::string::npos);
  EXPECT_NE(problems[0].message.find("classification"), std::string::npos);
  // With 2 outputs the project is trainable.
  config = quadrantConfig(dir, Json::object(), 2);
  EXPECT_TRUE(resolve::checkTrainable(config.project, config.baseDir, *config.registries).empty());
}

// train.monitor, the callbacks' metrics and a sweep's objective name a task's figures: without
// train.monitor "best" is the task's first figure; a figure the task lacks is a problem naming
// what it has, in validation and before a run folder; "auto" takes the figure's way.
TEST(TaskSeam, MetricsNameTheTasksFigures) {
  TempDir dir;
  const auto registry = ops::OpRegistry::withBuiltins();
  const QuadrantRegression quadrant;
  Problems problems;
  auto options =
      train::parseTrainOptions(Json::object(), train::ScheduleRegistry::withBuiltins(), problems);
  ASSERT_TRUE(problems.empty());
  EXPECT_TRUE(train::resolveMetrics(options, quadrant.figures(), quadrant.name()).empty());
  EXPECT_EQ(options.monitor.name, "val_mae");
  EXPECT_FALSE(options.monitor.maximize);
  // The plateau counts a lower MAE as better too (its controller takes the metric's way), and
  // train_rmse is a figure, not a typo of train_loss.
  options = train::parseTrainOptions(Json{{"plateau", Json{{"metric", "val_mae"}}},
                                          {"early_stopping", Json{{"metric", "train_rmse"}}}},
                                     train::ScheduleRegistry::withBuiltins(), problems);
  ASSERT_TRUE(problems.empty()) << formatProblems(problems);
  EXPECT_TRUE(train::resolveMetrics(options, quadrant.figures(), quadrant.name()).empty());
  EXPECT_FALSE(options.plateau.metric.maximize);
  EXPECT_FALSE(options.plateau.controller.maximize);
  EXPECT_FALSE(options.earlyStopping.metric.maximize);
  // Classification keeps its default, val_accuracy, maximised; a loss is minimised; a mode
  // given stands.
  task::TaskSetup setup;
  setup.dataClasses = 4;
  const auto classification = task::ClassificationTask(setup).figures();
  options = train::parseTrainOptions(
      Json{{"early_stopping", Json{{"metric", "val_loss"}, {"mode", "max"}}},
           {"plateau", Json{{"metric", "train_loss"}}}},
      train::ScheduleRegistry::withBuiltins(), problems);
  ASSERT_TRUE(problems.empty()) << formatProblems(problems);
  EXPECT_TRUE(train::resolveMetrics(options, classification, "classification").empty());
  EXPECT_EQ(options.monitor.name, "val_accuracy");
  EXPECT_TRUE(options.monitor.maximize);
  EXPECT_TRUE(options.earlyStopping.metric.maximize);
  EXPECT_FALSE(options.plateau.metric.maximize);

  // A figure the task does not report, named with what it reports.
  auto config = quadrantConfig(dir, {{"monitor", "val_accuracy"}}, 2);
  problems = resolve::checkTrainable(config.project, config.baseDir, *config.registries);
  ASSERT_EQ(problems.size(), 1u) << formatProblems(problems);
  EXPECT_EQ(problems[0].path, "train.monitor");
  EXPECT_EQ(problems[0].message,
            "the task \"quadrant_regression\" has no figure \"accuracy\" (it reports loss, mae, "
            "rmse, each as val_ or train_)");
  {
    auto recorder = std::make_shared<Recorder>();
    const auto r = trainWith(config, recorder);
    EXPECT_EQ(r.state, run::FinishState::Failed);
    EXPECT_NE(r.reason.find("train.monitor: the task \"quadrant_regression\" has no figure"),
              std::string::npos)
        << r.reason;
    EXPECT_FALSE(fs::exists(dir.file("runs")));
  }
  // A sweep's objective is checked against the task too.
  config.project.train = Json::object();
  config.project.extra["sweep"] =
      Json{{"params", Json::array({Json{{"path", "train.seed"}, {"choice", {1, 2}}}})},
           {"objective", "val_accuracy"}};
  problems = resolve::checkTrainable(config.project, config.baseDir, *config.registries);
  ASSERT_EQ(problems.size(), 1u) << formatProblems(problems);
  EXPECT_EQ(problems[0].path, "sweep.objective");
  EXPECT_NE(problems[0].message.find("no figure \"accuracy\""), std::string::npos);
  config.project.extra.erase("sweep");
  // Not a metric at all: the split is missing, or the name is not one.
  problems.clear();
  train::parseTrainOptions(Json{{"monitor", "accuracy"}}, train::ScheduleRegistry::withBuiltins(),
                           problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].path, "train.monitor");
  problems.clear();
  train::parseTrainOptions(Json{{"plateau", Json{{"metric", "Val MAE"}}}},
                           train::ScheduleRegistry::withBuiltins(), problems);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].toString().find("train.plateau.metric"), std::string::npos)
      << problems[0].toString();

  // A sweep's objective: a task's figure needs its way said.
  project::Project project;
  const Json sweep{{"params", Json::array({Json{{"path", "train.seed"}, {"choice", {1, 2}}}})},
                   {"objective", "val_mae"}};
  problems.clear();
  experiment::parseSweep(sweep, project, problems, *::netsmith::Registries::builtins());
  ASSERT_EQ(problems.size(), 1u) << formatProblems(problems);
  EXPECT_EQ(problems[0].path, "sweep.mode");
  Json withMode = sweep;
  withMode["mode"] = "min";
  problems.clear();
  const auto spec =
      experiment::parseSweep(withMode, project, problems, *::netsmith::Registries::builtins());
  EXPECT_TRUE(problems.empty()) << formatProblems(problems);
  EXPECT_EQ(spec.objective, "val_mae");
  EXPECT_FALSE(spec.maximize);

  // The project's task knows its own figures' way, and names the objective when none is given.
  project.task = "detection";
  problems.clear();
  const auto detector =
      experiment::parseSweep(Json{{"params", sweep["params"]}, {"objective", "val_map50"}}, project,
                             problems, *::netsmith::Registries::builtins());
  EXPECT_TRUE(problems.empty()) << formatProblems(problems);
  EXPECT_TRUE(detector.maximize);
  const auto unnamed = experiment::parseSweep(Json{{"params", sweep["params"]}}, project, problems,
                                              *::netsmith::Registries::builtins());
  EXPECT_TRUE(problems.empty()) << formatProblems(problems);
  EXPECT_EQ(unnamed.objective, "val_map");
  EXPECT_TRUE(unnamed.maximize);
  project.task = "regression";
  const auto regression =
      experiment::parseSweep(Json{{"params", sweep["params"]}, {"objective", "train_nmae"}},
                             project, problems, *::netsmith::Registries::builtins());
  EXPECT_TRUE(problems.empty()) << formatProblems(problems);
  EXPECT_FALSE(regression.maximize);
  const auto tasks = task::TaskRegistry::withBuiltins();
  EXPECT_EQ(experiment::objectiveChoices(&tasks.get("regression")),
            (std::vector<std::string>{"val_nmae", "val_mae", "val_rmse", "val_r2", "val_loss",
                                      "train_nmae", "train_mae", "train_rmse", "train_r2",
                                      "train_loss"}));
}

TEST(TaskSeam, BatchMixesAreRefusedForATaskWithoutClassScores) {
  TempDir dir;
  const auto path = testutil::writeTrainProject(dir, Json::object(), 256,
                                                R"([{"transform": "MixUp", "alpha": 0.4}])");
  auto loaded = project::loadProject(path);
  ASSERT_TRUE(loaded.problems.empty()) << formatProblems(loaded.problems);
  auto config = quadrantConfig(dir, Json::object(), 2);
  config.project.augment = loaded.project.augment;
  auto recorder = std::make_shared<Recorder>();
  const auto r = trainWith(config, recorder);
  EXPECT_EQ(r.state, run::FinishState::Failed);
  EXPECT_NE(r.reason.find("MixUp and CutMix blend class scores"), std::string::npos) << r.reason;
}

// The balanced sampler draws by class: every task whose samples have one class takes it; the
// others are refused by name, with what to use instead.
TEST(TaskSeam, TheBalancedSamplerNeedsOneClassPerSample) {
  const auto tasks = task::TaskRegistry::withBuiltins();
  EXPECT_FALSE(task::samplerProblem(tasks.get("classification"), true));
  EXPECT_FALSE(task::samplerProblem(withQuadrants()->tasks.get("quadrant_regression"), true));
  for (const std::string name : {"multilabel", "regression", "segmentation", "detection"}) {
    EXPECT_FALSE(task::samplerProblem(tasks.get(name), false));
    const auto why = task::samplerProblem(tasks.get(name), true);
    ASSERT_TRUE(why) << name;
    EXPECT_EQ(why->rfind("train.sampler: ", 0), 0u) << *why;
    EXPECT_NE(why->find(name), std::string::npos) << *why;
    EXPECT_NE(why->find("use \"shuffle\""), std::string::npos) << *why;
  }
}

TEST(TaskSeam, TheProjectsTaskKeyIsWrittenOnlyWhenItIsAnotherTask) {
  const std::string base = R"({"format": "netsmith-project", "version": 1, "name": "p",
    "model": {"input": {"channels": 1, "height": 4, "width": 4}, "nodes": [
      {"id": "input", "op": "Input"}]})";
  auto loaded = project::parseProject(base + "}", "p");
  ASSERT_TRUE(loaded.problems.empty());
  EXPECT_EQ(loaded.project.task, "classification");
  EXPECT_FALSE(project::projectToJson(loaded.project).contains("task"));
  loaded = project::parseProject(base + R"(, "task": "quadrant_regression"})", "p");
  ASSERT_TRUE(loaded.problems.empty());
  EXPECT_EQ(project::projectToJson(loaded.project).at("task"), "quadrant_regression");
  for (const char* bad : {R"(5)", R"("")", R"("Has Spaces")", R"("a\nb")"}) {
    loaded = project::parseProject(base + R"(, "task": )" + bad + "}", "p");
    ASSERT_EQ(loaded.problems.size(), 1u) << bad;
    EXPECT_EQ(loaded.problems[0].path, "task");
    EXPECT_EQ(loaded.project.task, "classification") << bad;
  }
  // A long name is refused without being echoed whole.
  loaded = project::parseProject(base + R"(, "task": ")" + std::string(100000, 'a') + "\"}", "p");
  ASSERT_EQ(loaded.problems.size(), 1u);
  EXPECT_LT(loaded.problems[0].message.size(), 300u);
}

TEST(TaskSeam, ClassificationSumsAddOverProcessesAndFollowTheirSchema) {
  // Two "processes" each sum a share; the element-wise total finishes into the figures of the
  // whole, counted here by hand.
  task::TaskSetup setup;
  setup.dataClasses = 3;
  task::ClassificationTask task(setup);
  const auto logits = torch::tensor({{2.0f, 0.0f, 0.0f},
                                     {0.0f, 3.0f, 0.0f},
                                     {0.0f, 0.0f, 1.0f},
                                     {4.0f, 0.0f, 0.0f},
                                     {0.0f, 1.0f, 0.0f}});
  const auto labels = torch::tensor({0, 1, 0, 0, 2}, torch::kLong);
  auto a = task.evalSums(), b = task.evalSums();
  a->add(logits.narrow(0, 0, 2), labels.narrow(0, 0, 2));
  b->add(logits.narrow(0, 2, 3), labels.narrow(0, 2, 3));
  auto total = a->sums();
  const auto other = b->sums();
  ASSERT_EQ(total.size(), other.size());
  for (std::size_t i = 0; i < total.size(); ++i)
    total[i] += other[i];
  auto whole = task.evalSums();
  whole->setSums(total);
  const auto m = whole->finish();
  EXPECT_EQ(m.samples, 5);
  EXPECT_DOUBLE_EQ(m.accuracy, 3.0 / 5.0);  // rows 0, 1 and 3 are right
  EXPECT_DOUBLE_EQ(m.figures.at("accuracy"), 3.0 / 5.0);
  const double ce = torch::nn::functional::cross_entropy(logits, labels).item<double>();
  EXPECT_NEAR(m.loss, ce, 1e-6);
  EXPECT_EQ(m.confusion[0], (std::vector<std::int64_t>{2, 0, 1}));
  EXPECT_EQ(m.confusion[2], (std::vector<std::int64_t>{0, 1, 0}));
  // Training figures: correct predictions over the samples seen.
  const auto sums = task.trainSums(logits, labels);
  ASSERT_EQ(sums.size(), task.trainSumCount());
  EXPECT_DOUBLE_EQ(task.trainFigures(sums, 5).at("accuracy"), 0.6);
  // The events' JSON of these figures has every key the task's schema requires.
  const auto json = run::evalMetricsToJson(m);
  const auto schema = task.evaluationSchema();
  for (const auto& key : schema.at("required"))
    EXPECT_TRUE(json.contains(key.get<std::string>())) << key;
  for (const auto& key : schema.at("properties").at("figures").at("required"))
    EXPECT_TRUE(json.at("figures").contains(key.get<std::string>())) << key;
}

TEST(TaskSeam, ALoopStateWrittenBeforeTheSeamKeepsItsCorrectCount) {
  // Checkpoints before the seam kept classification's one training sum as "epoch_correct".
  const Json old{{"epoch", 3},
                 {"next_batch", 17},
                 {"step", 300},
                 {"epoch_loss_sum", 12.5},
                 {"epoch_correct", 1234},
                 {"epoch_seen", 2176},
                 {"epoch_seconds", 4.0},
                 {"epoch_grad_norm_sums", Json::object()},
                 {"epoch_grad_norm_steps", 0},
                 {"loss_scaler", {{"scale", 65536.0}, {"growth_tracker", 0}}}};
  train::LoopState s;
  s.fromJson(old);
  ASSERT_EQ(s.figureSums, std::vector<double>{1234.0});
  task::TaskSetup setup;
  setup.dataClasses = 10;
  task::ClassificationTask classification(setup);
  EXPECT_DOUBLE_EQ(classification.trainFigures(s.figureSums, s.seen).at("accuracy"),
                   1234.0 / 2176.0);
  // Written again, it keeps the task's sums under their own key and reads back the same.
  train::LoopState again;
  again.fromJson(s.toJson());
  EXPECT_EQ(again.figureSums, s.figureSums);
  EXPECT_FALSE(s.toJson().contains("epoch_correct"));
}

TEST(TaskSeam, ATaskWhoseExportOutputClashesIsRefusedWhenAdded) {
  for (const std::string name : {"", "input", "probabilities"}) {
    task::TaskRegistry tasks;
    task::TaskDef def{
        "clashing", "a task whose output name clashes",
        "tasks",    [](const task::TaskSetup&) { return std::make_shared<QuadrantRegression>(); },
        {},         data::TargetKind::ClassIndex,
        {}};
    def.exportNotes.output = name;
    const auto error = testutil::errorOf([&] { tasks.add(def); });
    EXPECT_NE(error.find("task \"clashing\": the export's output cannot be named \"" + name + "\""),
              std::string::npos)
        << error;
    EXPECT_EQ(tasks.find("clashing"), nullptr);
  }
}

TEST(TaskSeam, ATaskWithoutFiguresIsRefusedWhenAdded) {
  // train.monitor and a sweep's objective are checked against TaskDef::figures before any
  // task is made: a definition that lists none could not be checked.
  task::TaskRegistry tasks;
  task::TaskDef def{"figureless",
                    "a task that lists no figures",
                    "tasks",
                    [](const task::TaskSetup&) { return std::make_shared<QuadrantRegression>(); },
                    {},
                    data::TargetKind::ClassIndex,
                    {}};
  const auto error = testutil::errorOf([&] { tasks.add(def); });
  EXPECT_NE(error.find("task \"figureless\": lists no figures"), std::string::npos) << error;
  EXPECT_EQ(tasks.find("figureless"), nullptr);
  def.figures = QuadrantRegression::figureSpecs();
  tasks.add(def);
  EXPECT_NE(tasks.find("figureless"), nullptr);
}

TEST(TaskSeam, AProjectIsResolvedOnceWithItsTasksFigures) {
  // The train section, the data section and the sweep read into their typed forms once; the
  // monitor's default and its way come from the task's figures.
  TempDir dir;
  auto config = quadrantConfig(dir, Json{{"epochs", 3}, {"batch_size", 16}}, 2);
  config.project.extra["sweep"] =
      Json{{"params", Json::array({Json{{"path", "train.seed"}, {"choice", {1, 2}}}})},
           {"objective", "val_rmse"}};
  project::LoadedProject loaded;
  loaded.project = config.project;
  resolve::ResolveOptions how;
  how.baseDir = config.baseDir;
  const auto resolved = resolve::resolveProject(loaded, *config.registries, how);
  EXPECT_TRUE(resolved.problems().empty()) << formatProblems(resolved.problems());
  EXPECT_TRUE(resolved.metricProblems.empty()) << formatProblems(resolved.metricProblems);
  ASSERT_NE(resolved.task, nullptr);
  EXPECT_EQ(resolved.task->name, "quadrant_regression");
  EXPECT_EQ(resolved.train.epochs, 3);
  EXPECT_EQ(resolved.train.batchSize, 16);
  EXPECT_EQ(resolved.train.monitor.name, "val_mae");
  EXPECT_FALSE(resolved.train.monitor.maximize);
  ASSERT_TRUE(resolved.sweep.has_value());
  EXPECT_EQ(resolved.sweep->objective, "val_rmse");
  EXPECT_FALSE(resolved.sweep->maximize);
  ASSERT_TRUE(resolved.data.has_value());
  EXPECT_EQ(resolved.data->train.path, "data.train");
  EXPECT_FALSE(resolved.data->validation.has_value() && resolved.data->validation->path.empty());
  // A train section with problems keeps them in its own list, and the metrics are not
  // resolved against a section that did not read.
  loaded.project.train = Json{{"epochs", -1}};
  const auto bad = resolve::resolveProject(loaded, *config.registries, how);
  ASSERT_EQ(bad.trainProblems.size(), 1u) << formatProblems(bad.trainProblems);
  EXPECT_EQ(bad.trainProblems[0].path, "train.epochs");
  EXPECT_TRUE(bad.metricProblems.empty());
  EXPECT_TRUE(bad.dataProblems.empty());
}
