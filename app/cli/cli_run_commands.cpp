// Commands that run the trainer: train, eval, lr-find.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <thread>

#include "augment/transform.h"
#include "checkpoint/checkpoint.h"
#include "cli/cli_args.h"
#include "cli/cli_commands.h"
#include "common/text_format.h"
#include "data/data_loader.h"
#include "data/project_data.h"
#include "distributed/dist_env.h"
#include "env/env_report.h"
#include "eval/embedding.h"
#include "eval/evaluation.h"
#include "export/run_deploy.h"
#include "graph/graph_module.h"
#include "ops/op_registry.h"
#include "project/project.h"
#include "registries/registries.h"
#include "run/run_layout.h"
#include "run/run_records.h"
#include "task/task_registry.h"
#include "train/dist_worker.h"
#include "train/train_options.h"
#include "train/trainer.h"

namespace netsmith::cli {

namespace {

volatile std::sig_atomic_t g_interrupts = 0;

extern "C" void onInterrupt(int) {
  g_interrupts = g_interrupts + 1;
  if (g_interrupts >= 2) std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends at once
}

/// " accuracy 91.05%", " mae 0.1234": the task's headline figure as the task shows it; nothing
/// for a batch without one (detection trains without figures).
std::string headlineText(const task::FigureSpec& headline, double v) {
  if (headline.name.empty() || !std::isfinite(v)) return {};
  return " " + headline.name + " " + (headline.percent ? percentText(v) : formatted("%.4g", v));
}

std::string clock(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  const long s = std::lround(seconds);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

/// Progress for people: a redrawn bar on a terminal, plain lines otherwise.
class ConsoleProgress : public run::EventSink {
 public:
  /// `headline`: the task's headline figure (task::headlineOf), shown beside the loss.
  ConsoleProgress(bool tty, std::int64_t epochs, task::FigureSpec headline)
      : m_tty(tty), m_epochs(epochs), m_headline(std::move(headline)) {}

  void onEvent(const run::TrainingEvent& e) override {
    using run::EventType;
    switch (e.type) {
      case EventType::Started:
        line(e.message + (e.path.empty() ? "" : "\nrun folder: " + e.path));
        break;
      case EventType::BatchEnd:
        batch(e);
        break;
      case EventType::EpochEnd:
        line(run::describeEpoch(e.epoch));
        break;
      case EventType::Checkpoint:
        break;
      case EventType::Log:
        line(e.message);
        break;
      case EventType::Warning:
        clearBar();
        std::cerr << "warning: " << e.message << '\n';
        break;
      case EventType::Finished:
        clearBar();
        break;
    }
  }

 private:
  static std::string number(double v, int digits = 4) {
    if (!std::isfinite(v)) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return buf;
  }

  void clearBar() {
    if (m_tty && m_barShown) {
      std::printf("\r\033[K");
      m_barShown = false;
    }
  }

  void line(const std::string& text) {
    clearBar();
    std::printf("%s\n", text.c_str());
    std::fflush(stdout);
  }

  void batch(const run::TrainingEvent& e) {
    const auto& b = e.batch;
    const auto now = std::chrono::steady_clock::now();
    if (m_firstBatchTime.time_since_epoch().count() == 0) {
      m_firstBatchTime = now;
      m_firstDone = b.epoch * b.batchesPerEpoch + b.batch;
    }
    const std::int64_t done = b.epoch * b.batchesPerEpoch + b.batch + 1;
    const std::int64_t total = m_epochs * b.batchesPerEpoch;
    const double elapsed = std::chrono::duration<double>(now - m_firstBatchTime).count();
    const double perBatch = done - m_firstDone > 1 ? elapsed / double(done - m_firstDone - 1) : 0;
    const double eta = perBatch * double(total - done);
    if (m_tty) {
      // Redraw at most ten times a second.
      if (std::chrono::duration<double>(now - m_lastDraw).count() < 0.1 &&
          b.batch + 1 != b.batchesPerEpoch)
        return;
      m_lastDraw = now;
      const int width = 24;
      const int filled =
          static_cast<int>(width * (b.batch + 1) / std::max<std::int64_t>(1, b.batchesPerEpoch));
      std::string bar(static_cast<std::size_t>(filled), '#');
      bar.resize(width, '.');
      std::printf("\r\033[Kepoch %lld [%s] %lld/%lld loss %s%s %.0f img/s ETA %s",
                  (long long)b.epoch + 1, bar.c_str(), (long long)b.batch + 1,
                  (long long)b.batchesPerEpoch, number(b.epochLoss).c_str(),
                  headlineText(m_headline, b.epochHeadlineValue).c_str(), b.imagesPerSecond,
                  clock(eta).c_str());
      std::fflush(stdout);
      m_barShown = true;
      return;
    }
    // Plain output: four lines an epoch.
    const std::int64_t every = std::max<std::int64_t>(1, b.batchesPerEpoch / 4);
    if ((b.batch + 1) % every != 0 || b.batch + 1 == b.batchesPerEpoch) return;
    std::printf("epoch %lld batch %lld/%lld: loss %s%s lr %.3g grad-norm %s %.0f img/s ETA %s\n",
                (long long)b.epoch + 1, (long long)b.batch + 1, (long long)b.batchesPerEpoch,
                number(b.epochLoss).c_str(), headlineText(m_headline, b.epochHeadlineValue).c_str(),
                b.lr, number(b.gradNorm, 3).c_str(), b.imagesPerSecond, clock(eta).c_str());
    std::fflush(stdout);
  }

 private:
  bool m_tty;
  std::int64_t m_epochs;
  task::FigureSpec m_headline;
  bool m_barShown = false;
  std::chrono::steady_clock::time_point m_firstBatchTime{};
  std::chrono::steady_clock::time_point m_lastDraw{};
  std::int64_t m_firstDone = 0;
};

/// --json: one object per event on stdout.
class JsonLines : public run::EventSink {
 public:
  void onEvent(const run::TrainingEvent& e) override {
    std::printf("%s\n", e.toJson().dump().c_str());
    std::fflush(stdout);
  }
};

}  // namespace

std::string selfExecutable() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : p.string();
}

/// Runs a trainer to its end on this thread's watch: Ctrl-C asks it to stop (it writes a
/// checkpoint first). Returns the result.
train::TrainResult runWithInterrupts(train::Trainer& trainer) {
  g_interrupts = 0;
  // SIGTERM too (a scheduler's preemption, a sweep that stops or dies): the same checkpoint.
  auto previous = std::signal(SIGINT, onInterrupt);
  auto previousTerm = std::signal(SIGTERM, onInterrupt);
  trainer.start();
  bool asked = false;
  while (trainer.state() != train::RunState::Finished) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (g_interrupts > 0 && !asked) {
      asked = true;
      std::cerr << "\ninterrupted: stopping after this batch and writing a checkpoint "
                   "(Ctrl-C again to quit at once)\n";
      trainer.stop();
    }
  }
  trainer.wait();
  std::signal(SIGINT, previous);
  std::signal(SIGTERM, previousTerm);
  return trainer.result();
}

int runTrain(const std::vector<std::string>& words, const RegistriesPtr& registries) {
  const Args args = commandArgs("train", words);
  resolve::ResolvedProject resolved;
  if (!loadTrainable(args, *registries, resolved)) return kExitInvalid;
  const auto& loaded = resolved.loaded;
  const auto& options = resolved.train;
  if (!resolved.hasDataSection())
    throw Error(args.one("PROJECT") + ": the project has no data section; nothing to train on");

  train::TrainerConfig config;
  config.registries = registries;
  config.project = loaded.project;
  config.options = options;
  config.data = resolved.data;
  config.baseDir = resolved.baseDir;
  config.runsRoot = args.option("--out", "runs");
  config.resumePath = args.option("--resume");
  config.initFromPath = args.option("--init-from");
  if (!config.resumePath.empty() && !config.initFromPath.empty())
    throw UsageError{"--resume and --init-from exclude each other"};
  if (!config.resumePath.empty()) config.runDir = run::resumeRunFolder(config.resumePath);
  config.cacheDir = data::userCacheDir();
  config.limitTrain = args.integer("--limit-train", 0, 1, 1LL << 40);
  config.limitVal = args.integer("--limit-val", 0, 1, 1LL << 40);
  config.limitTest = args.integer("--limit-test", 0, 1, 1LL << 40);
  config.stopAfterBatches = args.integer("--max-batches", 0, 1, 1LL << 40);
  config.stopAtEpoch = args.integer("--stop-at-epoch", 0, 1, 100000);
  config.skipTest = args.has("--no-test");
  config.dist = distributed::distEnvFromEnvironment();
  config.workerProgram = selfExecutable();

  train::Trainer trainer(config);
  const bool json = args.has("--json");
  if (config.dist.rank != 0) {
    // Another rank under torchrun/srun: rank 0 speaks for the job; this one only complains.
    trainer.addSink(train::makeRankConsole(config.dist.rank));
    const auto result = runWithInterrupts(trainer);
    if (result.state == run::FinishState::Failed) return kExitFailure;
    return kExitOk;
  }
  if (json)
    trainer.addSink(std::make_shared<JsonLines>(), run::Overflow::Wait);  // every line
  else
    trainer.addSink(std::make_shared<ConsoleProgress>(
        ::isatty(STDOUT_FILENO) != 0, options.fastDevRun ? 1 : options.epochs,
        registries->tasks.figureSpec(config.project.task)));
  const auto result = runWithInterrupts(trainer);

  if (result.state == run::FinishState::Failed) {
    std::cerr << "netsmith-cli: training failed: " << result.reason << '\n';
    if (!result.runDir.empty()) std::cerr << "run folder: " << result.runDir << '\n';
    using Failure = train::TrainResult::Failure;
    if (result.failure == Failure::Io) return kExitIo;
    if (result.failure == Failure::Input) return kExitInvalid;
    // A library failure before the first step is the project's (a shape LibTorch refused).
    return result.runDir.empty() && result.steps == 0 ? kExitInvalid : kExitFailure;
  }
  const int exitCode =
      result.state == run::FinishState::Stopped && g_interrupts > 0 ? kExitInterrupted : kExitOk;
  // On request, what the model costs deployed, kept in the run folder (a sweep with a latency
  // limit asks its trials for it). A failure to measure is said; the run stands.
  std::string deployLine;
  if (args.has("--deploy-bench") && !result.runDir.empty() && g_interrupts == 0) {
    try {
      exporting::DeployBenchOptions o;
      o.seconds = 1.0;
      const Json record = exporting::measureRunDeploy(result.runDir, registries, o);
      std::string runtime;
      const double ms = run::deployLatencyMs(record, &runtime);
      deployLine = formatted("deployed: batch-1 latency %.3f ms in %s, %.2f MiB (%s)", ms,
                             runtime.c_str(), double(run::deployBytes(record)) / 1048576.0,
                             run_layout::runFile(result.runDir, run_layout::kDeploy).c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "netsmith-cli: the deploy benchmark failed: %s\n",
                   printable(e.what()).c_str());
    }
  }
  if (json) return exitCode;
  std::printf("%s\n", result.reason.c_str());
  if (!result.lastCheckpoint.empty())
    std::printf("checkpoint: %s\n", result.lastCheckpoint.c_str());
  std::string last = train::describeTestFigure(result);
  // Here the project has no test split (a skipped one is described above); say why there is
  // no validation figure either instead of claiming there is no validation split.
  if (last.empty() && result.hasValidation) {
    last = "validation" + run::figuresText(result.lastValidation) + " on " +
           std::to_string(result.lastValidation.samples) + " images (no test split)";
  } else if (last.empty()) {
    last = std::string("no accuracy measured: no test split, and no validation pass ran") +
           (result.state == run::FinishState::Completed ? "" : " before the run stopped");
  }
  std::printf("%s; run folder %s\n", last.c_str(),
              result.runDir.empty() ? "(none)" : result.runDir.c_str());
  if (!deployLine.empty()) std::printf("%s\n", deployLine.c_str());
  return exitCode;
}

int runDistWorker(const std::vector<std::string>& words, const RegistriesPtr& registries) {
  const Args args = commandArgs("dist-worker", words);
  return train::runDistWorker(args.one("SPEC"), registries);
}

/// eval --embedding FILE: the evaluated samples' penultimate features laid out by t-SNE, with
/// progress on stderr.
void writeEmbedding(const std::string& path, const eval::Evaluation& e, bool quiet) {
  if (e.featureWidth <= 0)
    throw Error("--embedding: the evaluation kept no penultimate features (the task \"" + e.task +
                "\" is evaluated without a class view, or its model has no layer before the "
                "output)");
  const auto rows = eval::embeddingRows(e);
  eval::EmbeddingOptions options;
  // Called again and again with 0 during the neighbour search: each count printed once.
  options.progress = [quiet, last = -1](int done, int total) mutable {
    if (!quiet && done != last && (done % 100 == 0 || done == total))
      std::fprintf(stderr, "t-SNE: iteration %d/%d\n", done, total);
    last = done;
    return true;  // Ctrl-C ends eval at once: it writes nothing until the end
  };
  const auto layout =
      eval::embedFeatures(rows.features, std::int64_t(rows.samples.size()), rows.width, options);
  eval::writeEmbeddingCsv(path, e, rows, layout);
  if (!quiet)
    std::fprintf(stderr,
                 "embedding: %zu samples, %lld features from node %s, KL divergence %.4f: %s\n",
                 rows.samples.size(), (long long)rows.width, e.featureNode.c_str(),
                 layout.divergence, path.c_str());
}

int runEval(const std::vector<std::string>& words, const RegistriesPtr& registries) {
  const Args args = commandArgs("eval", words);
  env::configureThreads(static_cast<int>(args.integer("--threads", 0, 0, 4096)));
  if (!args.option("--gradcam").empty()) return runGradCam(args, registries);
  if (!args.option("--out").empty()) throw UsageError{"--out goes with --gradcam IMAGE"};
  eval::EvaluationOptions o;
  o.registries = registries;
  o.checkpoint = args.one("CHECKPOINT");
  o.data = args.option("--data");
  o.dataFromCheckpoint = args.has("--data-from-checkpoint");
  o.split = args.option("--split");
  if (!o.split.empty() && o.split != "train" && o.split != "test" && o.split != "validation")
    throw UsageError{"--split must be test, validation or train"};
  o.limit = args.integer("--limit", 0, 1, 1LL << 40);
  o.batchSize = args.integer("--batch-size", 256, 1, 1 << 16);
  o.topK = static_cast<int>(args.integer("--top-k", 5, 1, 1000));
  o.predictions = args.option("--predictions");
  o.fitTemperature = args.has("--fit-temperature");
  o.tta = args.option("--tta");
  if (!o.tta.empty() && o.tta != "flip" && o.tta != "crops")
    throw UsageError{"--tta must be flip or crops, not \"" + o.tta + "\""};
  if (!args.option("--temperature").empty()) {
    if (o.fitTemperature) throw UsageError{"--temperature and --fit-temperature: give one"};
    o.temperature = eval::readTemperature(args.option("--temperature"));
  }
  o.onnx = args.option("--onnx");
  if (!o.onnx.empty() && o.fitTemperature)
    throw UsageError{
        "--onnx evaluates an exported file, whose temperature is in it: no --fit-temperature"};
  const std::string embeddingFile = args.option("--embedding");
  if (!embeddingFile.empty()) {
    o.features = true;
    o.keepSamples = true;
    o.thumbnail = 1;  // the samples' labels are what the file needs, not their pictures
  }
  const auto e = eval::evaluateCheckpoint(o);
  if (!embeddingFile.empty()) writeEmbedding(embeddingFile, e, args.has("--json"));
  std::string recorded;
  if (e.temperatureFitted) recorded = eval::writeCalibrationFile(o.checkpoint, e.temperatureFit);
  if (args.has("--json")) {
    std::cout << e.toJson().dump(2) << '\n';
    return kExitOk;
  }
  if (o.onnx.empty())
    std::printf("%s: %s split\n", printable(o.checkpoint).c_str(), e.split.c_str());
  else
    std::printf("%s (exported from %s, run in %s): %s split\n", printable(o.onnx).c_str(),
                printable(o.checkpoint).c_str(), e.runtime.c_str(), e.split.c_str());
  std::cout << e.report(eval::EvaluationFiles{o.predictions, recorded});
  return kExitOk;
}

train::TrainerConfig folderlessConfig(const resolve::ResolvedProject& resolved,
                                      const RegistriesPtr& registries) {
  train::TrainerConfig config;
  config.registries = registries;
  config.project = resolved.project();
  config.options = resolved.train;
  config.data = resolved.data;
  config.baseDir = resolved.baseDir;
  config.cacheDir = data::userCacheDir();
  config.writeRun = false;
  return config;
}

int runLrFind(const std::vector<std::string>& words, const RegistriesPtr& registries) {
  const Args args = commandArgs("lr-find", words);
  resolve::ResolvedProject resolved;
  if (!loadTrainable(args, *registries, resolved)) return kExitInvalid;
  auto config = folderlessConfig(resolved, registries);
  config.lrFind = true;
  config.limitTrain = args.integer("--limit-train", 0, 1, 1LL << 40);
  auto& o = config.lrFindOptions;
  o.startLr = args.real("--start", o.startLr, 0);
  o.endLr = args.real("--end", o.endLr, 0);
  o.steps = args.integer("--steps", o.steps, 2, 100000);
  if (!(o.endLr > o.startLr)) {
    throw UsageError{"lr-find: --end (" + std::to_string(o.endLr) + ") must be above --start (" +
                     std::to_string(o.startLr) + ")"};
  }
  if (o.endLr <= o.startLr) throw UsageError{"--end must be greater than --start"};
  train::Trainer trainer(config);
  const auto result = runWithInterrupts(trainer);
  if (result.state == run::FinishState::Failed) {
    std::cerr << "netsmith-cli: lr-find failed: " << result.reason << '\n';
    return kExitFailure;
  }
  const auto& r = result.lrFind;
  if (args.has("--json")) {
    Json j{{"lr", r.lrs},
           {"loss", r.losses},
           {"smoothed_loss", r.smoothed},
           {"suggested_lr", r.suggestedLr},
           {"min_loss_lr", r.minLossLr},
           {"diverged", r.diverged},
           {"weights_restored", r.weightsRestored}};
    std::cout << j.dump() << '\n';
    return kExitOk;
  }
  std::printf("# step lr loss smoothed\n");
  for (std::size_t i = 0; i < r.lrs.size(); ++i)
    std::printf("%zu %.4g %.5f %.5f\n", i, r.lrs[i], r.losses[i], r.smoothed[i]);
  std::printf("%s after %zu steps; lowest smoothed loss at lr %.3g\n",
              r.diverged ? "loss diverged" : "sweep complete", r.lrs.size(), r.minLossLr);
  std::printf("suggested learning rate: %.3g (steepest fall of the loss); weights %s\n",
              r.suggestedLr, r.weightsRestored ? "restored" : "NOT restored");
  return kExitOk;
}

}  // namespace netsmith::cli
