// LR schedules: each curve at key steps (one-cycle against values from PyTorch's OneCycleLR),
// warmup, ReduceLROnPlateau, and bad schedule settings.
#include "train/lr_schedule.h"

#include <gtest/gtest.h>

#include "train/train_options.h"

using namespace netsmith;
using namespace netsmith::train;

namespace {

LrSchedule make(const std::string& json, double lr = 0.1) {
  Problems problems;
  auto s = LrSchedule::fromJson(Json::parse(json), lr, ScheduleRegistry::withBuiltins(), problems);
  EXPECT_TRUE(problems.empty()) << formatProblems(problems);
  return s;
}

std::string problemsOf(const std::string& json) {
  Problems problems;
  LrSchedule::fromJson(Json::parse(json), 0.1, ScheduleRegistry::withBuiltins(), problems);
  return formatProblems(problems);
}

}  // namespace

TEST(LrSchedule, ConstantStepMultistepExponential) {
  const StepSpan plan{10, 10};
  EXPECT_DOUBLE_EQ(make(R"({"type": "constant"})").lrAt(57, plan), 0.1);
  const auto step = make(R"({"type": "step", "step_size": 2, "gamma": 0.5})");
  EXPECT_DOUBLE_EQ(step.lrAt(19, plan), 0.1);
  EXPECT_DOUBLE_EQ(step.lrAt(20, plan), 0.05);
  EXPECT_DOUBLE_EQ(step.lrAt(45, plan), 0.025);
  const auto multi = make(R"({"type": "multistep", "milestones": [1, 3], "gamma": 0.1})");
  EXPECT_DOUBLE_EQ(multi.lrAt(9, plan), 0.1);
  EXPECT_NEAR(multi.lrAt(10, plan), 0.01, 1e-15);
  EXPECT_NEAR(multi.lrAt(35, plan), 0.001, 1e-15);
  const auto expo = make(R"({"type": "exponential", "gamma": 0.9})");
  EXPECT_NEAR(expo.lrAt(25, plan), 0.1 * 0.81, 1e-15);
}

TEST(LrSchedule, CosineWithAndWithoutRestarts) {
  const StepSpan plan{10, 10};
  const auto cosine = make(R"({"type": "cosine", "min_lr": 0.01})");
  EXPECT_DOUBLE_EQ(cosine.lrAt(0, plan), 0.1);
  EXPECT_NEAR(cosine.lrAt(50, plan), 0.055, 1e-12);
  EXPECT_GT(cosine.lrAt(99, plan), 0.01);
  EXPECT_LT(cosine.lrAt(99, plan), 0.0101);
  const auto sgdr = make(R"({"type": "cosine", "restart_epochs": 1, "restart_mult": 2})");
  EXPECT_DOUBLE_EQ(sgdr.lrAt(10, plan), 0.1);     // second cycle starts (10 steps)
  EXPECT_NEAR(sgdr.lrAt(20, plan), 0.05, 1e-12);  // middle of the 20-step cycle
  EXPECT_DOUBLE_EQ(sgdr.lrAt(30, plan), 0.1);     // third cycle (40 steps)
}

TEST(LrSchedule, OneCycleMatchesPyTorch) {
  // torch.optim.lr_scheduler.OneCycleLR(max_lr=0.1, total_steps=100, pct_start=0.3,
  // div_factor=25, final_div_factor=1e4), read before each step.
  const StepSpan plan{10, 10};
  const auto cos = make(R"({"type": "one_cycle"})");
  EXPECT_NEAR(cos.lrAt(0, plan), 0.004, 1e-12);
  EXPECT_NEAR(cos.lrAt(10, plan), 0.029516394846410082, 1e-12);
  EXPECT_NEAR(cos.lrAt(29, plan), 0.1, 1e-12);
  EXPECT_NEAR(cos.lrAt(50, plan), 0.0793893450575732, 1e-12);
  EXPECT_NEAR(cos.lrAt(99, plan), 4e-07, 1e-12);
  const auto linear = make(R"({"type": "one_cycle", "anneal": "linear", "max_lr": 0.1})", 0.5);
  EXPECT_NEAR(linear.lrAt(10, plan), 0.037103448275862067, 1e-12);
  EXPECT_NEAR(linear.lrAt(50, plan), 0.07000012, 1e-12);
}

TEST(LrSchedule, PolynomialAndWarmup) {
  const StepSpan plan{4, 25};
  const auto poly = make(R"({"type": "polynomial", "power": 2, "end_lr": 0})");
  EXPECT_NEAR(poly.lrAt(50, plan), 0.1 * 0.25, 1e-15);
  const auto warm = make(R"({"type": "constant", "warmup_steps": 10, "warmup_start_factor": 0.1})");
  EXPECT_NEAR(warm.lrAt(0, plan), 0.01, 1e-15);
  EXPECT_NEAR(warm.lrAt(5, plan), 0.055, 1e-15);
  EXPECT_DOUBLE_EQ(warm.lrAt(10, plan), 0.1);
  const auto warmEpochs = make(R"({"type": "cosine", "warmup_epochs": 0.4})");
  EXPECT_LT(warmEpochs.lrAt(0, plan), warmEpochs.lrAt(9, plan));
  EXPECT_EQ(warmEpochs.curve(plan).size(), 100u);
}

TEST(LrSchedule, ReduceOnPlateau) {
  PlateauController::Options o;
  o.patience = 2;
  o.factor = 0.5;
  PlateauController c(o);
  double lr = 0.1;
  for (double loss : {1.0, 0.9, 0.95, 0.93})
    lr = c.update(loss, lr);
  EXPECT_DOUBLE_EQ(lr, 0.1);  // two bad epochs: still patient
  lr = c.update(0.92, lr);
  EXPECT_DOUBLE_EQ(lr, 0.05);  // the third
  PlateauController restored(o);
  restored.restore(c.state());
  EXPECT_EQ(restored.state(), c.state());
}

TEST(LrSchedule, BadSettingsNameTheirPath) {
  EXPECT_NE(problemsOf(R"({"type": "cosinus"})")
                .find(R"(train.schedule.type: unknown schedule "cosinus")"),
            std::string::npos);
  EXPECT_NE(problemsOf(R"({"type": "step", "gamma": 0})").find("train.schedule.gamma: must be > 0"),
            std::string::npos);
  EXPECT_NE(problemsOf(R"({"type": "step", "step_size": 0})")
                .find("train.schedule.step_size: must be >= 1"),
            std::string::npos);
  EXPECT_NE(problemsOf(R"({"type": "one_cycle", "pct_start": 1.5})")
                .find("train.schedule.pct_start: must be <= 0.99"),
            std::string::npos);
  EXPECT_NE(problemsOf(R"({"type": "cosine", "warmup_epochs": -1})")
                .find("train.schedule.warmup_epochs: must be >= 0"),
            std::string::npos);
  EXPECT_NE(problemsOf(R"({"type": "cosine", "min_lrr": 0})")
                .find(R"(train.schedule.min_lrr: is not known; did you mean "min_lr"?)"),
            std::string::npos);
}

TEST(TrainOptions, BadTrainSettings) {
  auto problemsOfTrain = [](const std::string& json) {
    Problems problems;
    parseTrainOptions(Json::parse(json), ScheduleRegistry::withBuiltins(), problems);
    return formatProblems(problems);
  };
  EXPECT_NE(problemsOfTrain(R"({"optimizer": {"type": "adam", "lr": 0}})")
                .find("train.optimizer.lr: must be > 0"),
            std::string::npos);
  EXPECT_NE(problemsOfTrain(R"({"optimizer": {"type": "adam", "lr": -1}})")
                .find("train.optimizer.lr: must be > 0"),
            std::string::npos);
  EXPECT_NE(problemsOfTrain(R"({"optimizer": {"type": "adam", "lr": "nan"}})")
                .find("train.optimizer.lr: expects a number"),
            std::string::npos);
  EXPECT_NE(problemsOfTrain(R"({"optimizer": {"type": "adamm"}})")
                .find(R"(train.optimizer.type: unknown optimizer "adamm")"),
            std::string::npos);
  EXPECT_NE(
      problemsOfTrain(R"({"epochs": 0})").find("train.epochs: must be a whole number between 1"),
      std::string::npos);
  EXPECT_NE(problemsOfTrain(R"({"batch_size": 0})")
                .find("train.batch_size: must be a whole number between 1"),
            std::string::npos);
  EXPECT_NE(problemsOfTrain(R"({"optimizer": {"type": "sgd", "nesterov": true, "momentum": 0}})")
                .find("train.optimizer.nesterov: needs momentum > 0"),
            std::string::npos);
  Problems none;
  const auto o = parseTrainOptions(
      Json::parse(R"({"epochs": 3, "batch_size": 32, "optimizer": {"type": "SGD", "lr": 0.05},
                                                   "schedule": {"type": "step", "step_size": 1}})"),
      ScheduleRegistry::withBuiltins(), none);
  ASSERT_TRUE(none.empty()) << formatProblems(none);
  EXPECT_EQ(o.optimizer.type, "sgd");
  EXPECT_DOUBLE_EQ(o.optimizer.lr(), 0.05);
  EXPECT_DOUBLE_EQ(o.schedule.lrAt(10, {3, 10}), 0.005);
}
