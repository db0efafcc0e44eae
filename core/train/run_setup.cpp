#include "train/run_setup.h"

#include "graph/model_edits.h"
#include "registries/registries.h"
#include "run/run_layout.h"
#include "schema/param_schema.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <sstream>

#include "augment/sample_rng.h"
#include "checkpoint/checkpoint.h"
#include "checkpoint/checkpoint_model.h"
#include "checkpoint/safetensors.h"
#include "common/error.h"
#include "common/file_util.h"
#include "env/env_report.h"
#include "run/run_writer.h"
#include "train/device.h"
#include "train/optimizer_factory.h"
#include "train/trainability.h"
#include "train/trainer.h"

namespace netsmith::train {

namespace fs = std::filesystem;

namespace {

constexpr std::uint64_t kSubsetStream = 0x5B5Eull << 40;

/// Loader threads first (a quarter of the cores, 1 to 8), compute threads on the cores they
/// leave. With two cores or fewer the loader shares them: it is idle most of the time (one
/// worker prepares ~75,000 Fashion-MNIST images/s against ~1,000 trained). Local ranks share
/// the machine's cores.
int configureRunThreads(RunContext& ctx, RunSetup& s) {
  const int hw = std::max(1, static_cast<int>(std::max(1u, std::thread::hardware_concurrency())) /
                                 s.group->localProcesses());
  const int workers = s.opt.workers > 0 ? s.opt.workers : std::clamp(hw / 4, 1, 8);
  int threads = s.opt.threads > 0 ? s.opt.threads : (hw <= 2 ? hw : std::max(1, hw - workers));
  if (threads > env::maxThreads()) {
    ctx.log("train.threads " + std::to_string(threads) + " is more than 4x this machine's " +
                std::to_string(env::maxThreads() / 4) + " hardware threads; using " +
                std::to_string(env::maxThreads()),
            "warning");
    threads = env::maxThreads();
  }
  env::configureThreads(threads);
  s.threads = threads;
  s.workers = workers;
  if (s.opt.deterministic) at::globalContext().setDeterministicAlgorithms(true, false);
  ctx.log("device " + s.device.str() + ", " + std::to_string(threads) + " compute thread" +
          (threads == 1 ? "" : "s") + ", " + std::to_string(workers) + " loader thread" +
          (workers == 1 ? "" : "s") + (s.opt.deterministic ? ", deterministic" : ""));
  return workers;
}

/// A seeded, stratified subset of `limit` samples (every class keeps its share), in source
/// order; said in the log.
void limitSet(RunContext& ctx, data::SampleSet& set, std::int64_t limit, std::uint64_t seed,
              const char* flag) {
  if (limit <= 0 || set.size() <= limit) return;
  const auto before = set.size();
  const auto& source = *set.source;
  set.indices = data::stratifiedSubset(
      set.indices, [&](std::int64_t i) { return source.stratum(i); }, source.numStrata(), limit,
      augment::mixSeed(seed ^ kSubsetStream, 0, 0));
  ctx.log(std::string(flag) + ": " + std::to_string(limit) + " of the " + std::to_string(before) +
          " " + set.name + " samples, a stratified random subset (seed " + std::to_string(seed) +
          ")");
}

void openData(RunContext& ctx, RunSetup& s) {
  const auto& config = ctx.config;
  ctx.log("opening data");
  const auto go = [&ctx](std::int64_t, std::int64_t) { return !ctx.controls.stopNow; };
  const auto& transforms = config.registries->transforms;
  s.pd =
      config.data
          ? data::openProjectData(config.project, *config.data, transforms, config.cacheDir, go)
          : data::openProjectData(config.project, config.baseDir, transforms, config.cacheDir, go);
  if (!s.pd) throw RunEnd{run::FinishState::Stopped, "stopped while computing data statistics"};
  for (const auto& item : s.pd->data.skippedAtScan())
    ctx.log("skipped " + item.item + ": " + item.reason, "warning");
  auto& d = s.pd->data;
  s.numClasses = d.numClasses();
  limitSet(ctx, d.train, config.limitTrain, s.opt.seed, "--limit-train");
  limitSet(ctx, d.validation, config.limitVal, s.opt.seed, "--limit-val");
  limitSet(ctx, d.test, config.limitTest, s.opt.seed, "--limit-test");
  if (!config.trainIndices.empty()) {
    const auto n = d.train.source->size();
    for (const auto i : config.trainIndices)
      if (i < 0 || i >= n)
        throw Error("training sample " + std::to_string(i) + " is outside the " +
                    std::to_string(n) + " samples of the training data");
    d.train.indices = config.trainIndices;
    d.validation.indices.clear();
    d.test.indices.clear();
    ctx.log("training on " + std::to_string(d.train.size()) +
            " chosen samples, without "
            "validation or test");
  }
  if (d.train.empty()) throw Error("data.train: no training samples");
  const int world = s.group->worldSize();
  s.plan = RunPlan::make(s.opt, d.train.size(), 0, world);
  if (s.opt.overfitBatches > 0) {
    d.train.indices.resize(static_cast<std::size_t>(s.plan.trainSamples()));
    d.validation = d.train;
    d.validation.name = "validation";
    ctx.log("overfit_batches: training and validating on the same " +
            std::to_string(d.train.size()) + " samples");
  }
  if (s.opt.dropLast && s.plan.batchesPerEpoch() == 0) {
    throw Error("train.batch_size " + std::to_string(s.opt.batchSize) +
                (world > 1 ? " x " + std::to_string(world) + " processes" : "") +
                " is larger than the " + std::to_string(d.train.size()) +
                " training samples and train.drop_last is true: no batch would be trained; "
                "lower the batch size or turn drop_last off");
  }
}

std::string formatMultiplier(double m) {
  std::ostringstream os;
  os << m;
  return os.str();
}

/// train.unfreeze names nodes of this model and runs in one process.
void checkUnfreeze(const RunSetup& s) {
  std::vector<std::string> ids;
  for (const auto& n : s.project.model.nodes)
    ids.push_back(n.id);
  for (std::size_t i = 0; i < s.opt.unfreeze.size(); ++i) {
    const auto& from = s.opt.unfreeze[i].from;
    if (from.empty() || s.project.model.find(from)) continue;
    const std::string guess = schema::closestName(from, ids);
    throw Error("train.unfreeze[" + std::to_string(i) + "].from: no node \"" + from +
                "\" in the model" + (guess.empty() ? "" : "; did you mean \"" + guess + "\"?"));
  }
  if (!s.opt.unfreeze.empty() && s.group->worldSize() > 1) {
    throw Error(
        "train.unfreeze: gradual unfreezing runs in one process for now; train without "
        "--nproc, or unfreeze in the project between runs");
  }
}

/// The weights to start from: --init-from, else the project's init_from (relative to the
/// project file); none when resuming (the checkpoint has them).
std::string initFromPathOf(const TrainerConfig& config) {
  if (!config.resumePath.empty()) return {};
  if (!config.initFromPath.empty()) return config.initFromPath;
  const std::string& f = config.project.initFrom;
  if (f.empty()) return {};
  const std::filesystem::path p(f);
  return p.is_absolute() || config.baseDir.empty()
             ? f
             : (std::filesystem::path(config.baseDir) / p).string();
}

void initFrom(RunContext& ctx, RunSetup& s, const std::string& path) {
  const checkpoint::NamedTensors tensors = checkpoint::readWeights(path);
  torch::NoGradGuard noGrad;
  const auto report = checkpoint::loadModuleState(*s.net, tensors);
  s.initReport = report.summary();
  ctx.log("initialised from " + path + ": " + report.summary());
  if (report.loaded.empty())
    throw Error(path +
                ": no tensor matches this model by name and shape; nothing to initialise from");
}

}  // namespace

TaskFacts taskFacts(const data::DataModule& d) {
  return TaskFacts{d.numClasses(), d.classes, d.targets};
}

namespace {

/// The project's task, made for this data and model: its head rule checked, its loss's class
/// weights counted on the training split, on the run's device.
void makeTask(RunContext& ctx, RunSetup& s) {
  const auto& d = s.pd->data;
  auto facts = taskFacts(d);
  facts.dataClasses = s.numClasses;
  task::TaskSetup ts = taskSetupFor(s.opt, s.net->analysis(), facts);
  ts.train = &d.train;
  const auto& def = ctx.config.registries->tasks.get(s.project.task);
  if (const auto p = task::dataTargetProblem(def, d.config)) throw Error(*p);
  if (const auto p = task::samplerProblem(def, s.opt.balancedSampler)) throw Error(*p);
  if (s.opt.balancedSampler) {
    ctx.log("train.sampler balanced: each epoch draws " + std::to_string(d.train.size()) +
            " samples with replacement, every class equally likely");
    if (s.opt.classWeights != "none")
      ctx.log(
          "train.sampler balanced and train.class_weights both even out the classes: the "
          "rare ones now weigh more than the common ones; keep one of the two",
          "warning");
  }
  s.task = def.make(ts);
  if (const auto p = s.task->headProblem(s.net->analysis())) throw Error(p->toString());
  // train.monitor and the callbacks' metrics name the task's figures (and take their way).
  if (const auto p = resolveMetrics(s.opt, s.task->figures(), s.task->name()); !p.empty()) {
    std::string text;
    for (const auto& problem : p)
      text += (text.empty() ? "" : "; ") + problem.toString();
    throw Error(text);
  }
  // Detection's figures keep every image's boxes (task/detection.h), which the processes do
  // not gather yet.
  if (!s.task->target().figuresSum && s.group->worldSize() > 1)
    throw Error("train.processes: the task \"" + s.task->name() +
                "\" trains in one process (its evaluation keeps each image's boxes, which "
                "processes do not gather yet); set it to 1");
  s.numClasses = s.task->numClasses();
  s.task->to(s.device);
  const auto mixes = s.pd->pipeline.batchMixes();
  // Masks: the loader pastes CutMix's box into the mask (MixUp is refused by the augment list);
  // boxes have no such paste, but Mosaic moves them.
  const auto target = s.task->target();
  bool blends = false, mosaic = false;
  for (const auto& mix : mixes)
    (mix.kind == augment::BatchMix::Kind::Mosaic ? mosaic : blends) = true;
  if (mosaic && !target.mosaic)
    throw Error("augment: Mosaic moves boxes with the images, and the task \"" + s.task->name() +
                "\" has none; remove it from the augment list");
  if (blends && !target.mixable && !target.pastesCut) {
    throw Error("augment: MixUp and CutMix blend class scores, and the task \"" + s.task->name() +
                "\" has none to blend; remove them from the augment list");
  }
}

void buildModel(RunContext& ctx, RunSetup& s) {
  torch::manual_seed(s.opt.seed);
  s.net = graph::GraphModule(s.project.model, ctx.config.registries->ops);
  makeTask(ctx, s);
  s.net->to(s.device);
  if (s.opt.channelsLast) {
    for (auto& p : s.net->parameters()) {
      if (p.dim() == 4) p.set_data(p.contiguous(torch::MemoryFormat::ChannelsLast));
    }
  }
  if (const auto path = initFromPathOf(ctx.config); !path.empty()) initFrom(ctx, s, path);
  if (const int n = s.net->keepFrozenBatchNormInEval(s.opt.frozenBatchNormEval); n > 0)
    ctx.log(std::to_string(n) +
            " BatchNorm layers of frozen nodes keep their statistics "
            "(train.frozen_batchnorm: eval)");
  for (const auto& item : s.net->named_parameters()) {
    if (!item.value().requires_grad()) continue;
    s.params.push_back(item.value());
    s.paramNodes.push_back(item.key().substr(0, item.key().find('.')));
  }
  s.lrMult = lrMultipliers(s.project.model);
  checkUnfreeze(s);
  s.optimizer = makeOptimizer(s.opt.optimizer, s.net->named_parameters(), s.lrMult, &s.lrScales,
                              /*includeFrozen=*/!s.opt.unfreeze.empty());
  if (!s.lrMult.empty()) {
    std::map<double, int> count;
    for (const auto& [id, m] : s.lrMult)
      ++count[m];
    std::string text;
    for (const auto& [m, n] : count)
      text += (text.empty() ? "" : ", ") + std::to_string(n) + " nodes at x" + formatMultiplier(m);
    ctx.log("learning-rate multipliers: " + text + " (the others x1)");
  }
  s.signature = modelSignature(s.project.model);
}

void makeLoaders(RunSetup& s, int workers) {
  auto& d = s.pd->data;
  data::LoaderOptions lo;
  lo.batchSize = s.opt.batchSize;
  lo.workers = workers;
  lo.seed = s.opt.seed;
  lo.onError = d.config.onError;
  lo.numClasses = s.numClasses;
  lo.channelsLast = s.opt.channelsLast;
  lo.pinMemory = s.device.is_cuda();
  lo.dropLast = s.opt.dropLast;
  lo.shuffle = s.opt.overfitBatches == 0;
  lo.balanced = s.opt.balancedSampler;
  lo.mixes = s.pd->pipeline.batchMixes();
  lo.collator = s.task;
  lo.rank = s.group->rank();
  lo.worldSize = s.group->worldSize();
  s.trainLoader = std::make_unique<data::DataLoader>(d.train, *s.pd->processor, lo);
  data::LoaderOptions eo = lo;
  eo.training = false;
  eo.shuffle = false;
  eo.dropLast = false;
  eo.mixes.clear();
  if (!d.validation.empty())
    s.valLoader = std::make_unique<data::DataLoader>(d.validation, *s.pd->processor, eo);
  if (!d.test.empty() && s.opt.evalTest && !s.opt.fastDevRun)
    s.testLoader = std::make_unique<data::DataLoader>(d.test, *s.pd->processor, eo);
  // The loader walks the epoch the plan counted.
  if (!s.opt.fastDevRun && s.trainLoader->batchesPerEpoch() != s.plan.batchesPerEpoch()) {
    throw Error("internal: the loader has " + std::to_string(s.trainLoader->batchesPerEpoch()) +
                " batches per epoch but the plan " + std::to_string(s.plan.batchesPerEpoch()));
  }
}

}  // namespace

std::string modelSignature(const graph::ModelGraph& model) {
  Json j = graph::modelToJson(model);
  if (j.contains("nodes")) {
    for (auto& n : j["nodes"])
      n.erase("pos");
  }
  const std::string text = j.dump();
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

void prepareRun(RunContext& ctx, RunSetup& s) {
  Problems problems;
  // Every later step reads ctx.config.registries: checked here, before the first of them.
  const auto& registries = needRegistries(ctx.config.registries, "TrainerConfig");
  s.opt = ctx.config.options
              ? *ctx.config.options
              : parseTrainOptions(ctx.config.project.train, registries.schedules, problems);
  if (!problems.empty())
    throw Error("the train section has problems:\n" + formatProblems(problems));
  s.device = resolveDevice(s.opt.device);
  s.group = makeProcessGroup(ctx, s.opt, s.device);
  if (s.opt.amp == "fp16" && !s.device.is_cuda()) {
    throw Error("train.amp is \"fp16\", which needs a CUDA device (train.device is \"" +
                s.opt.device + "\"); use \"bf16\" on CPU, or \"off\"");
  }
  const int workers = configureRunThreads(ctx, s);
  openData(ctx, s);
  s.project = ctx.config.project;
  if (s.opt.replaceHead) {
    const auto head = graph::replaceHead(s.project.model, s.numClasses);
    ctx.log("train.replace_head: \"" + head + "\" now has " + std::to_string(s.numClasses) +
            " outputs, one per class, and new weights");
  }
  buildModel(ctx, s);
  makeLoaders(s, workers);
}

std::string openRunFolder(RunContext& ctx, const RunSetup& s,
                          std::unique_ptr<run::RunFolderLock>& lock) {
  const auto& config = ctx.config;
  if (!config.writeRun || config.lrFind || s.group->rank() != 0) return {};
  std::string runDir = config.runDir;
  if (runDir.empty()) {
    runDir = run::createRunFolder(config.runsRoot, config.project.name,
                                  project::projectToJson(s.project));
  } else {
    std::error_code ec;
    fs::create_directories(runDir, ec);
    if (ec) throw IoError(runDir + ": cannot create the run folder (" + ec.message() + ")");
    // A run folder from elsewhere: what is written in it stays in it (no folder links).
    for (const char* sub : {run_layout::kCheckpoints, run_layout::kExports})
      makeRealFolder(run_layout::runFile(runDir, sub));
  }
  lock = std::make_unique<run::RunFolderLock>(runDir);
  if (const int n = run::removeStaleTemporaries(run_layout::checkpointIn(runDir)))
    ctx.log("removed " + std::to_string(n) + " unfinished checkpoint file" + (n == 1 ? "" : "s") +
            " left by an interrupted write");
  ctx.attachRunWriter(runDir, task::headlineOf(s.task->figures()));
  return runDir;
}

}  // namespace netsmith::train
