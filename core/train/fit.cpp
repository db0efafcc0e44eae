#include "train/fit.h"

#include <cmath>
#include <set>

#include "augment/sample_rng.h"
#include "common/error.h"
#include "run/run_layout.h"
#include "task/task.h"
#include "train/bench_run.h"
#include "train/checkpoint_callback.h"
#include "train/device.h"
#include "train/early_stopping.h"
#include "train/lr_finder.h"
#include "train/test_pass.h"
#include "train/unfreeze_callback.h"

namespace netsmith::train {

namespace {
constexpr std::uint64_t kDropoutStream = 0xD409ull << 40;

/// The figure called `name` among a task's figures (NaN when it is not there): the events'
/// and metrics.csv's headline columns, and classification's accuracy.
double figureIn(const std::map<std::string, double>& figures, const std::string& name) {
  const auto it = figures.find(name);
  return it == figures.end() ? std::nan("") : it->second;
}
}  // namespace

Fit::Fit(RunContext& ctx) : m_ctx(ctx), m_watchdog("stop") {}

Fit::~Fit() = default;

double Fit::elapsed() const {
  return secondsSince(m_t0) - m_pausedSeconds;
}

double Fit::currentLr() const {
  return m_plateau->apply(m_setup.plan.lrAt(m_state.step));
}

TrainResult Fit::result() const {
  TrainResult r = m_result;
  r.steps = m_state.step;
  r.runDir = m_runDir;
  r.seconds = elapsed();
  r.initReport = m_setup.initReport;
  if (m_setup.group) {
    r.rank = m_setup.group->rank();
    r.worldSize = m_setup.group->worldSize();
  }
  if (m_checkpoints) {
    r.lastCheckpoint = m_checkpoints->last();
    r.bestCheckpoint = m_checkpoints->best();
  }
  return r;
}

void Fit::addCallbacks() {
  const auto& opt = m_setup.opt;
  m_watchdog = NumericWatchdog(opt.nanPolicy);
  m_plateau = std::make_shared<PlateauCallback>(
      opt.plateau, [this] { return m_setup.plan.lrAt(m_state.step); },
      [this](const std::string& message) { m_ctx.log(message); });
  m_best = std::make_shared<BestMetric>(opt.monitor);
  m_callbacks.add(m_plateau);
  m_callbacks.add(m_best);
  m_callbacks.add(std::make_shared<EarlyStopping>(opt.earlyStopping));
}

void Fit::prepare() {
  prepareRun(m_ctx, m_setup);
  addCallbacks();
  m_checkpoints = std::make_unique<RunCheckpoints>(m_ctx, m_setup, m_state, m_callbacks, "");
  if (!m_ctx.config.resumePath.empty()) m_checkpoints->resume(m_ctx.config.resumePath);
  m_setup.group->prepareModel(m_setup.net, m_setup.params, m_setup.opt);
}

void Fit::findLr() {
  auto& r = m_result;
  r.lrFind = findLearningRate(m_ctx, m_setup, m_ctx.config.lrFindOptions);
  r.reason = r.lrFind.lrs.empty()
                 ? "lr-find: no batch could be trained"
                 : "lr-find: " + std::to_string(r.lrFind.lrs.size()) +
                       " steps, suggested learning rate " + brief(r.lrFind.suggestedLr);
  if (r.lrFind.lrs.empty()) r.state = run::FinishState::Failed;
}

void Fit::bench() {
  auto& s = m_setup;
  startTraining();
  BenchRun bench(s, m_state, *m_runner, m_ctx.config.benchOptions);
  m_result.bench = bench.run([this](const data::Batch& batch, bool& groupHasBadBatch) {
    return trainBatch(batch, groupHasBadBatch);
  });
  m_result.state = run::FinishState::Completed;
  m_result.reason = "bench: " + std::to_string(m_result.bench.synthetic.steps) + " + " +
                    std::to_string(m_result.bench.real.steps) + " timed batches";
  s.group->finish(s.opt.distTimeout);
}

void Fit::startTraining() {
  auto& s = m_setup;
  // The run folder comes after everything that can reject the input.
  m_headline = task::headlineOf(s.task->figures());
  m_runDir = openRunFolder(m_ctx, s, m_lock);
  const std::string dir = m_runDir.empty() ? "" : run_layout::checkpointIn(m_runDir);
  m_checkpoints = std::make_unique<RunCheckpoints>(m_ctx, s, m_state, m_callbacks, dir);
  CheckpointCallback::Options co{dir, s.opt.checkpointEvery, s.opt.keepCheckpoints};
  m_callbacks.add(std::make_shared<CheckpointCallback>(
      co, [this](const std::string& tag, const Json& m) { return m_checkpoints->write(tag, m); },
      m_best));
  m_runner = std::make_unique<StepRunner>(s.net, *s.optimizer, s.opt, s.device, *s.group, m_state,
                                          s.params, s.paramNodes, *s.task);
  m_runner->setLrScales(s.lrScales);
  if (!s.opt.unfreeze.empty()) {
    m_callbacks.add(std::make_shared<UnfreezeCallback>(
        s.opt.unfreeze, s.project.model,
        [this](const std::vector<std::string>& ids) {
          auto& setup = m_setup;
          const auto made = setup.net->unfreeze(ids);
          m_runner->addTrainable(made);
          std::set<std::string> nodes;
          UnfreezeCallback::Unfrozen done;
          for (const auto& [node, t] : made) {
            nodes.insert(node);
            done.parameters += t.numel();
            setup.params.push_back(t);
            setup.paramNodes.push_back(node);
          }
          done.nodes = nodes.size();
          return done;
        },
        [this](const std::string& message) { m_ctx.log(message); }));
  }
  m_eval = std::make_unique<EvalLoop>(s, m_ctx.controls);
  if (s.testLoader) {
    m_testPass = std::make_shared<TestPass>(s, m_best);
    m_callbacks.add(m_testPass);
  }
  run::TrainingEvent started;
  started.type = run::EventType::Started;
  started.path = m_runDir;
  started.message = m_ctx.config.project.name + ": " + s.plan.describe() + ", " +
                    s.opt.optimizer.type + ", " + s.opt.schedule.type() + " schedule";
  started.monitor = s.opt.monitor.name;
  started.monitorMaximize = s.opt.monitor.maximize;
  m_ctx.publish(std::move(started));
  m_ctx.state = RunState::Running;
  m_callbacks.runStart();
  if (s.testLoader) m_result.testSplitSize = s.pd->data.test.size();
}

void Fit::run() {
  prepare();
  if (m_ctx.config.lrFind) {
    findLr();
    return;
  }
  if (m_ctx.config.bench) {
    bench();
    return;
  }
  startTraining();
  auto& s = m_setup;
  std::string endReason;
  run::FinishState endState = run::FinishState::Completed;
  while (m_state.epoch < s.plan.epochs()) {
    if (!trainEpoch()) {
      m_checkpoints->write("last", Json::object());
      endState = run::FinishState::Stopped;
      endReason = !m_callbackStop.empty()
                      ? m_callbackStop
                      : "stopped at epoch " + std::to_string(m_state.epoch + 1) + ", batch " +
                            std::to_string(m_state.nextBatch) + " (step " +
                            std::to_string(m_state.step) + ")";
      break;
    }
    endReason = endEpoch();
    if (!endReason.empty()) break;
    const auto stopAt = m_ctx.config.stopAtEpoch;
    const bool asked = m_ctx.controls.stopAfterEpoch || m_ctx.controls.stopNow ||
                       (stopAt > 0 && m_state.epoch >= stopAt && m_state.epoch < s.plan.epochs());
    if (s.group->anyRank(asked, "the stop-after-epoch flag")) {
      endState = run::FinishState::Stopped;
      endReason = "stopped after epoch " + std::to_string(m_state.epoch);
      break;
    }
  }
  if (endReason.empty()) {
    endReason = "trained " + std::to_string(s.plan.epochs()) +
                (s.plan.epochs() == 1 ? " epoch" : " epochs");
  }
  m_result.state = endState;
  m_result.reason = endReason;
  if (endState == run::FinishState::Completed && !m_ctx.config.skipTest) evaluateTest();
  s.group->finish(s.opt.distTimeout);
  m_callbacks.runEnd(endState, endReason);
}

bool Fit::trainEpoch() {
  auto& s = m_setup;
  m_callbacks.epochStart(m_state.epoch);
  s.net->train();
  const auto epochStart = std::chrono::steady_clock::now();
  const double secondsBefore = m_state.epochSeconds;
  s.trainLoader->startEpoch(m_state.epoch, m_state.nextBatch);
  m_throughput.restart();
  bool groupHasBadBatch = false;
  bool finished = true;
  while (m_state.nextBatch < s.plan.batchesPerEpoch()) {
    auto batch = s.trainLoader->next();
    if (!batch) break;
    for (const auto& w : s.trainLoader->takeWarnings())
      m_ctx.log("skipped " + w.item + ": " + w.reason, "warning");
    if (!trainBatch(*batch, groupHasBadBatch)) {
      finished = false;
      break;
    }
  }
  s.trainLoader->stop();
  m_state.epochSeconds = secondsBefore + secondsSince(epochStart);
  return finished;
}

bool Fit::trainBatch(const data::Batch& batch, bool& groupHasBadBatch) {
  auto& s = m_setup;
  const std::int64_t b = m_state.nextBatch;
  const BatchGroup group = s.plan.groupOf(b);
  const double lr = currentLr();
  // The optimizer step this batch belongs to, from 1 (the batches of a group share it):
  // lr-schedule numbers its steps the same way, so the two join on `step`.
  const std::int64_t step = m_state.step + 1;
  // Dropout draws from (seed, epoch, batch), and from the rank in a data-parallel job.
  torch::manual_seed(
      augment::mixSeed(s.opt.seed ^ kDropoutStream ^ (std::uint64_t(s.group->rank()) << 32),
                       static_cast<std::uint64_t>(m_state.epoch), static_cast<std::uint64_t>(b)));
  const auto stopAfter = m_ctx.config.stopAfterBatches;
  const bool stopAsked = m_ctx.controls.stopNow || !m_callbackStop.empty() ||
                         (stopAfter > 0 && m_batchesThisSession + 1 >= stopAfter);
  const bool sync = group.boundary && !groupHasBadBatch;
  const BatchFigures f =
      m_runner->forwardBackward(batch, group, sync, stopAsked, m_ctx.controls.paused);
  bool skipped = false;
  if (f.nonFinite) {
    onNonFinite("loss", std::isfinite(f.localLoss) ? std::nan("") : f.localLoss, lr, b);
    skipped = groupHasBadBatch = true;
    ++m_state.skippedSteps;
  } else {
    m_state.lossSum += f.lossSum;
    auto& sums = m_state.figureSums;
    if (sums.size() < f.figureSums.size()) sums.resize(f.figureSums.size(), 0.0);
    for (std::size_t i = 0; i < f.figureSums.size(); ++i)
      sums[i] += f.figureSums[i];
    m_state.seen += f.seen;
    warnDivergence(m_watchdog.checkLoss(f.loss, {m_state.step, m_state.epoch, b, lr}));
  }
  if (group.boundary) {
    if (groupHasBadBatch) {  // nan_policy "skip": no step on a group with a bad batch
      m_runner->discardGradients();
      skipped = true;
    } else {
      takeStep(lr, b, skipped);
    }
    groupHasBadBatch = false;
  }
  m_state.nextBatch = b + 1;
  ++m_batchesThisSession;
  publishBatch(b, step, f, lr, skipped);
  if (const auto failed = m_ctx.recordsFailure ? m_ctx.recordsFailure() : std::string();
      !failed.empty()) {
    failRecords(failed);
  }
  if (!group.boundary) return true;
  const PauseOutcome o = s.group->holdOrStop(f.pauseAgreed, f.stopAgreed);
  if (o.pausedSeconds > 0) {
    m_pausedSeconds += o.pausedSeconds;
    m_throughput.restart();
  }
  return !o.stop;
}

void Fit::takeStep(double lr, std::int64_t batch, bool& skipped) {
  switch (m_runner->optimizerStep(lr)) {
    case StepResult::Stepped: {
      const double norm = m_runner->lastGradNorm();
      warnDivergence(m_watchdog.checkGradNorm(norm, {m_state.step - 1, m_state.epoch, batch, lr}));
      m_watchdog.recordGradNorm(norm);
      break;
    }
    case StepResult::ScalerSkipped:
      skipped = true;
      break;
    case StepResult::NonFinite:
      onNonFinite("gradient norm", m_runner->lastGradNorm(), lr, batch);
      ++m_state.skippedSteps;
      skipped = true;
      break;
  }
}

void Fit::onNonFinite(const std::string& what, double value, double lr, std::int64_t batch) {
  const NumericWatchdog::Position at{m_state.step, m_state.epoch, batch, lr};
  const auto verdict = m_watchdog.onNonFinite(what, value, at);
  if (verdict.stop) failNonFinite(verdict.message);
  const bool onAProcess = what == "loss" && m_setup.group->worldSize() > 1;
  m_ctx.log(verdict.message + (onAProcess ? " on a process" : "") + " (lr " + brief(lr) + ")",
            "warning");
}

void Fit::failRecords(const std::string& failure) {
  std::string where;
  try {
    where = m_checkpoints->write("last", Json::object());
  } catch (const Error& e) {
    m_ctx.log(std::string("could not write the checkpoint either: ") + e.what(), "warning");
  }
  throw RunEnd{run::FinishState::Failed,
               "the run's records could not be written (" + failure + "); stopped at epoch " +
                   std::to_string(m_state.epoch + 1) + ", batch " +
                   std::to_string(m_state.nextBatch) +
                   (where.empty() ? "" : ", the position is in " + where),
               /*ioFailure=*/true};
}

void Fit::warnDivergence(const std::string& message) {
  if (message.empty()) return;
  run::TrainingEvent e;
  e.type = run::EventType::Warning;
  e.level = "warning";
  e.tag = "divergence";  // the dashboard marks it on the loss chart
  e.message = message;
  e.batch.epoch = m_state.epoch;
  e.batch.batch = m_state.nextBatch;
  e.batch.step = m_state.step;
  m_ctx.publish(std::move(e));
}

void Fit::failNonFinite(const std::string& message) {
  m_setup.optimizer->zero_grad();
  std::string where;
  try {
    where = m_checkpoints->write("last", Json::object());
  } catch (const Error& e) {
    m_ctx.log(std::string("could not write the checkpoint before stopping: ") + e.what(),
              "warning");
  }
  throw RunEnd{run::FinishState::Failed,
               message + (where.empty() ? "" : "; the state before this step is in " + where)};
}

void Fit::publishBatch(std::int64_t batch, std::int64_t step, const BatchFigures& f, double lr,
                       bool skipped) {
  run::TrainingEvent e;
  e.type = run::EventType::BatchEnd;
  auto& m = e.batch;
  m.epoch = m_state.epoch;
  m.batch = batch;
  m.batchesPerEpoch = m_setup.plan.batchesPerEpoch();
  m.step = step;
  m.totalSteps = m_setup.plan.totalSteps();
  m.loss = f.loss;
  const auto& task = *m_setup.task;
  m.headline = m_headline;
  m.headlineValue = f.seen ? figureIn(task.trainFigures(f.figureSums, f.seen), m_headline) : 0;
  m.epochLoss = m_state.seen ? m_state.lossSum / double(m_state.seen) : std::nan("");
  m.epochHeadlineValue =
      m_state.seen ? figureIn(task.trainFigures(m_state.figureSums, m_state.seen), m_headline)
                   : std::nan("");
  m.lr = lr;
  m.gradNorm = m_runner->lastGradNorm();
  m.imagesPerSecond = m_throughput.add(f.seen);
  m.lossScale = m_setup.opt.amp == "fp16" ? m_state.lossScale : 0;
  m.skipped = skipped;
  m.memory = memoryFigure(m_setup.device);
  m.runSeconds = elapsed();
  std::string stop = m_callbacks.batchEnd(m);
  if (m_callbackStop.empty()) m_callbackStop = std::move(stop);
  m_ctx.publish(std::move(e));
}

std::string Fit::endEpoch() {
  auto& s = m_setup;
  const auto evalStart = std::chrono::steady_clock::now();
  run::EpochMetrics e;
  e.epoch = m_state.epoch;
  e.epochs = s.plan.epochs();
  e.trainLoss = m_state.seen ? m_state.lossSum / double(m_state.seen) : std::nan("");
  e.trainLabelSmoothing = s.opt.labelSmoothing;
  if (m_state.seen) e.trainFigures = s.task->trainFigures(m_state.figureSums, m_state.seen);
  e.trainAccuracy = m_state.seen ? figureIn(e.trainFigures, "accuracy") : std::nan("");
  // The LR the epoch ended with: its last optimizer step's (not the next epoch's first).
  e.lr = m_plateau->apply(s.plan.lrAt(std::max<std::int64_t>(0, m_state.step - 1)));
  for (const auto& [node, sum] : m_state.normSums)
    e.layerGradNorms[node] = m_state.normSteps ? sum / double(m_state.normSteps) : 0.0;
  if (s.valLoader) {
    e.validation = m_eval->validation();
    // What the task tunes on validation (multi-label thresholds) goes into this epoch's
    // checkpoints and the next epoch's figures.
    s.task->adoptValidation(e.validation);
    if (m_ctx.controls.stopNow && s.group->stopsAlone()) {
      m_checkpoints->write("last", Json::object());  // the epoch's batches are all done
      throw RunEnd{run::FinishState::Stopped,
                   "stopped at epoch " + std::to_string(m_state.epoch + 1) + ", batch " +
                       std::to_string(m_state.nextBatch) + " (step " +
                       std::to_string(m_state.step) + "), during validation"};
    }
    e.hasValidation = true;
    m_result.hasValidation = true;
    m_result.lastValidation = e.validation;
  }
  e.seconds = m_state.epochSeconds + secondsSince(evalStart);
  run::TrainingEvent ev;
  ev.type = run::EventType::EpochEnd;
  ev.epoch = e;
  m_ctx.publish(std::move(ev));
  // The position moves to the next epoch before the callbacks write checkpoints.
  m_state.nextEpoch();
  m_result.epochsDone = m_state.epoch;
  return m_callbacks.epochEnd(e);
}

void Fit::evaluateTest() {
  auto& s = m_setup;
  if (!m_testPass) return;
  // Tagged "test": the studio's status bar says the run is testing, not training.
  const auto pass = m_testPass->run(*m_eval, [this](const std::string& m) {
    run::TrainingEvent e;
    e.type = run::EventType::Log;
    e.message = m;
    e.tag = "test";
    m_ctx.publish(std::move(e));
  });
  m_result.testCheckpoint = pass.weights;
  m_result.test = pass.metrics;
  m_result.hasTest = !s.group->stopsAlone() || !m_ctx.controls.stopNow;
}

}  // namespace netsmith::train
