#include "cli/cli_commands.h"

#include <iostream>
#include <stdexcept>

#include "augment/transform.h"
#include "cli/cli_args.h"
#include "data/project_data.h"
#include "env/env_report.h"
#include "experiment/sweep_spec.h"
#include "graph/graph_analysis.h"
#include "graph/model_summary.h"
#include "ops/op_registry.h"
#include "project/project.h"
#include "registries/registries.h"
#include "resolve/resolved_project.h"
#include "train/train_options.h"

namespace netsmith::cli {

// arch: table of data (one entry per command).
const std::vector<Command>& commands() {
  // Each command's usage block (its synopsis lines and the description under them, as
  // `--help` prints them), and an example run.
  static const std::vector<Command> kCommands{
      {"validate",
       runValidate,
       R"(  validate PROJECT                    check a project; problems on stderr, one per line
)",
       "netsmith-cli validate resources/examples/fashion_mnist.netsmith.json",
       {},
       {}},
      {"summary",
       runSummary,
       R"(  summary PROJECT [--batch-size N] [--json]
                                      layers, output shapes, parameters, MACs, memory
)",
       "netsmith-cli summary resources/examples/fashion_mnist.netsmith.json",
       {"--json"},
       {"--batch-size"}},
      {"env",
       runEnv,
       R"(  env [--json] [--threads N]          LibTorch, CUDA, BLAS and thread report
)",
       "netsmith-cli env --json",
       {"--json"},
       {"--threads"}},
      {"ops",
       runOps,
       R"(  ops [--json]                        the layer types and their parameters
)",
       "netsmith-cli ops",
       {"--json"},
       {}},
      {"transforms",
       runTransforms,
       R"(  transforms [--json]                 the augmentations and their parameters
)",
       "netsmith-cli transforms",
       {"--json"},
       {}},
      {"formats",
       runFormats,
       R"(  formats [--json]                    the data source formats and their keys
)",
       "netsmith-cli formats",
       {"--json"},
       {}},
      {"data-stats",
       runDataStats,
       R"(  data-stats PROJECT [--json] [--sizes]
                                      split sizes, class counts, mean/std, skipped files
)",
       "netsmith-cli data-stats resources/examples/fashion_mnist.netsmith.json",
       {"--json", "--sizes"},
       {}},
      {"init",
       runInit,
       R"(  init DATA [--out PROJECT.netsmith.json] [--task T] [--template NAME] [--name NAME]
       [--channels C] [--height H --width W] [--validation FRACTION] [--explicit-normalization]
       [--dry-run] [--force]
                                      a project from your data: recognises a folder of class
                                      folders, a CSV manifest (path,label / path,labels / path
                                      and numbers), images with masks, a YOLO, COCO or VOC set
                                      (each whole, or in train/ val/ test/), prints what it
                                      found and chose (task, template sized to the images and
                                      classes, validation split, normalisation) and writes the
                                      project beside the data (DATA.netsmith.json)
)",
       "netsmith-cli init scenes --task detection",
       {"--force", "--explicit-normalization", "--dry-run"},
       {"--out", "--task", "--template", "--name", "--channels", "--height", "--width",
        "--validation"}},
      {"make-dataset",
       runMakeDataset,
       R"(  make-dataset NAME --out DIR [--seed S] [--train N] [--test N] [--source FOLDER]
                                      example data built from Fashion-MNIST (FOLDER: its IDX
                                      files, default /usr/share/datasets/fashion-mnist): mosaics
                                      (multi-label), rotations (regression), scenes
                                      (segmentation masks, and the same objects' boxes for
                                      detection as YOLO labels and COCO files)
)",
       "netsmith-cli make-dataset mosaics --out resources/examples/mosaics",
       {},
       {"--out", "--seed", "--train", "--test", "--source"}},
      {"preview-aug",
       runPreviewAug,
       R"(  preview-aug PROJECT --out FILE.png [--samples K] [--draws N] [--seed S]
                                      a grid of training samples and augmented draws
)",
       "netsmith-cli preview-aug resources/examples/fashion_mnist.netsmith.json --out grid.png",
       {},
       {"--out", "--samples", "--draws", "--seed"}},
      {"lr-schedule",
       runLrSchedule,
       R"(  lr-schedule PROJECT [--json] [--epochs N] [--batch-size N] [--lr X] [--nproc N]
        [--limit-train N] [--steps-per-epoch N] [--seed N]
                                      the learning rate at every step of the planned run (the
                                      flags change the plan as they would change train's)
)",
       "netsmith-cli lr-schedule resources/examples/fashion_mnist.netsmith.json --json",
       {"--json"},
       {"--steps-per-epoch", "--epochs", "--batch-size", "--lr", "--nproc", "--limit-train",
        "--seed"}},
      {"bench",
       runBench,
       R"(  bench PROJECT [--steps N] [--batch-size N] [--threads N] [--profile FILE] [--json]
                                      training images/s on synthetic input and with the real loader;
                                      --profile FILE: one more pass under LibTorch's profiler, its
                                      chrome://tracing file and the ops by time per batch
  bench MODEL.onnx... [--batch-size N] [--threads N] [--runs N] [--seconds S] [--json]
                                      what a model costs deployed: file size, parameters, MACs;
                                      batch-1 latency (median, 95th percentile), images/s at
                                      --batch-size (32) and memory in ONNX Runtime and OpenCV
                                      DNN, at --threads (1) each
  bench RUN_DIR... [--threads N] [--runs N] [--seconds S] [--json]
                                      a run's best checkpoint (else its last) exported as
                                      export writes it and measured so, the figures kept in
                                      RUN_DIR/deploy.json for the Runs and Experiments pages
)",
       "netsmith-cli bench resources/examples/fashion_mnist.netsmith.json --steps 50",
       {"--json"},
       {"--steps", "--threads", "--batch-size", "--profile", "--runs", "--seconds"}},
      {"train",
       runTrain,
       R"(  train PROJECT [--epochs N] [--batch-size N] [--lr X] [--device cpu|cuda[:N]] [--threads N]
        [--seed N] [--limit-train N] [--limit-val N] [--limit-test N] [--out DIR] [--resume CKPT]
        [--init-from CKPT] [--max-batches N] [--stop-at-epoch N] [--no-test] [--nproc N]
        [--dist-timeout S] [--deploy-bench] [--json]
                                      train; progress on the terminal (--json: one event a line);
                                      Ctrl-C stops after writing a checkpoint; the last line gives
                                      the test accuracy and the run folder. --stop-at-epoch N:
                                      stop with a checkpoint after epoch N of the planned run
                                      (--resume goes on exactly); --no-test: skip the test split. --nproc N: N local
                                      data-parallel processes (torch.distributed, Gloo on CPU,
                                      NCCL on CUDA; --batch-size is per process). Under torchrun,
                                      srun or mpirun each process runs this same command.
                                      --deploy-bench: at the end, what the best checkpoint
                                      costs deployed (as bench RUN_DIR), in RUN/deploy.json
)",
       "netsmith-cli train resources/examples/fashion_mnist.netsmith.json --epochs 1 "
       "--limit-train 6000",
       {"--json", "--no-test", "--deploy-bench"},
       {"--epochs", "--batch-size", "--lr", "--device", "--threads", "--seed", "--limit-train",
        "--limit-val", "--limit-test", "--out", "--resume", "--init-from", "--max-batches",
        "--stop-at-epoch", "--nproc", "--dist-timeout"}},
      {"eval",
       runEval,
       R"(  eval CHECKPOINT [--data PROJECT|FOLDER] [--split test|validation|train] [--limit N] [--top-k K] [--json]
       [--batch-size N] [--threads N] [--data-from-checkpoint] [--gradcam IMAGE] [--gradcam-node ID] [--gradcam-class N]
       [--out FILE] [--predictions FILE|DIR] [--temperature T|FILE] [--fit-temperature]
       [--embedding FILE] [--tta flip|crops] [--onnx MODEL.onnx]
                                      the task's figures (classification: accuracy, top-k, per-class accuracy, precision, recall
                                      and F1, and the confusion matrix). --predictions: every
                                      sample's output to recompute them from, checked before
                                      the evaluation: classification, multi-label and
                                      regression a CSV FILE (path, truth, scores or values);
                                      segmentation a folder DIR (masks/ and truth/ PNGs and
                                      predictions.csv; new, empty, or an earlier evaluation's,
                                      never a data set's own); detection FILE.json in COCO
                                      results format and FILE.truth.json, the truth as a COCO
                                      data set. Without --data, the
                                      checkpoint's own data, read only where a project file
                                      next to it or its run names it (--data-from-checkpoint:
                                      read it anyway). --gradcam IMAGE: the Grad-CAM map of
                                      the predicted class (--gradcam-class N: of class N) at
                                      the last convolution (--gradcam-node ID), written over
                                      the image to --out (IMAGE-gradcam.png). Classifiers:
                                      ECE and MCE (15 bins); --fit-temperature fits temperature
                                      scaling on the validation split, evaluates with it and
                                      records it (CHECKPOINT-STEM.calibration.json);
                                      --temperature T|FILE divides the logits by T.
                                      --embedding FILE: the samples' penultimate features
                                      laid out in 2-D (PCA, Barnes-Hut t-SNE) as CSV
                                      (position,sample,label,predicted,confidence,x,y,f0..).
                                      --onnx MODEL.onnx: evaluate that export of the
                                      checkpoint (float or int8) in ONNX Runtime instead, on
                                      the same data and preprocessing.
                                      --tta flip|crops: test-time augmentation (the mean
                                      probabilities of the picture and its mirror, and with
                                      crops of four shifted copies), with the accuracy gain
)",
       "netsmith-cli eval runs/RUN/checkpoints/best.safetensors",
       {"--json", "--data-from-checkpoint", "--fit-temperature"},
       {"--data", "--split", "--limit", "--batch-size", "--threads", "--top-k", "--gradcam",
        "--gradcam-node", "--gradcam-class", "--out", "--predictions", "--temperature",
        "--embedding", "--tta", "--onnx"}},
      {"predict",
       runPredict,
       R"(  predict MODEL INPUT... [--out PATH] [--batch-size N] [--threads N] [--json]
                                      the model's predictions on images without labels: MODEL
                                      a checkpoint (or a project whose model has its
                                      init_from's weights, or an ONNX file exported by
                                      netsmith-cli export, float or int8, run in ONNX
                                      Runtime), INPUT image files or folders (searched
                                      recursively). Each image is preprocessed as
                                      eval preprocesses its split; outputs as eval writes its
                                      predictions files, without truth: classification
                                      a CSV (path, prediction, probability, one probability
                                      per class), multi-label per-label probabilities,
                                      regression values in the data's units, segmentation a
                                      folder of mask PNGs, overlays (each image with its mask)
                                      and predictions.csv, detection COCO results JSON,
                                      FILE.images.json naming the images and FILE.drawn/ (each
                                      image with its boxes scoring 0.25 or more).
                                      Unreadable images are named and skipped; --out (default:
                                      the task's predictions.csv, predictions/ or
                                      predictions.json) is refused when it is an input or
                                      holds one
)",
       "netsmith-cli predict runs/RUN/checkpoints/best.safetensors photos/ --out predictions.csv",
       {"--json"},
       {"--out", "--batch-size", "--threads"}},
      {"doctor",
       runDoctor,
       R"(  doctor PROJECT [--out DIR] [--folds K] [--epochs N] [--limit N] [--checkpoint CKPT]
         [--no-labels] [--seed S] [--json] [--schema]
                                      the data doctor: likely label errors (confident learning
                                      on out-of-sample probabilities from K-fold cross-training,
                                      3 folds of N=2 epochs by default; --checkpoint CKPT: that
                                      model's in-sample outputs instead), exact and near
                                      duplicates within and across splits (leakage), class
                                      balance and outliers. Writes doctor.json, report.html and
                                      label_ranking.csv to --out (doctor/PROJECT). Ctrl-C stops;
                                      the same command goes on from the finished folds.
                                      --no-labels: no training (duplicates, balance, image
                                      outliers). --schema: the report's JSON schema
)",
       "netsmith-cli doctor resources/examples/fashion_mnist.netsmith.json --limit 6000",
       {"--json", "--no-labels", "--schema"},
       {"--out", "--folds", "--epochs", "--limit", "--checkpoint", "--seed"}},
      {"lr-find",
       runLrFind,
       R"(  lr-find PROJECT [--start LR] [--end LR] [--steps N] [--limit-train N] [--batch-size N]
          [--threads N] [--json]
                                      the LR range test; prints a suggested learning rate
)",
       "netsmith-cli lr-find resources/examples/fashion_mnist.netsmith.json --limit-train 6000",
       {"--json"},
       {"--start", "--end", "--steps", "--limit-train", "--threads", "--batch-size"}},
      {"export",
       runExport,
       R"(  export CHECKPOINT [--onnx FILE] [--opset N] [--softmax] [--decoder] [--nms]
         [--safetensors FILE] [--pytorch FILE] [--samples N] [--keep-failed]
         [--int8] [--calibration N]
         [--data-from-checkpoint] [--temperature T|FILE] [--json]
                                      ONNX (checked, and run in OpenCV DNN and ONNX Runtime
                                      against LibTorch),
                                      safetensors weights, PyTorch code; none named: all three
                                      into the run's exports/ folder; exit 1 if parity fails.
                                      A detector: --decoder adds the outputs "boxes" (N x L x 4,
                                      input pixels) and "scores" (N x K x L); --nms (implies
                                      --decoder) also "selected" from a NonMaxSuppression node
                                      (run in ONNX Runtime; OpenCV DNN cannot run it).
                                      --temperature T|FILE: the logits divided by T, before
                                      --softmax (FILE: the CHECKPOINT-STEM.calibration.json
                                      that eval writes when it fits a temperature)
                                      --int8: also STEM-int8.onnx, quantised (QDQ: int8
                                      weights per channel, uint8 activations) from
                                      --calibration N (256) training images, checked in ONNX
                                      Runtime against the float model
)",
       "netsmith-cli export runs/RUN/checkpoints/best.safetensors --onnx model.onnx",
       {"--json", "--softmax", "--decoder", "--nms", "--keep-failed", "--data-from-checkpoint",
        "--int8"},
       {"--onnx", "--opset", "--safetensors", "--pytorch", "--samples", "--temperature",
        "--calibration"}},
      {"import",
       runImport,
       R"(  import MODEL.onnx --out PROJECT.netsmith.json [--weights FILE] [--input CxHxW] [--classes N]
         [--replace-head N] [--freeze-to NODE] [--lr-mult NODE=X] [--force] [--json]
                                      an ONNX classifier as a Netsmith project: its graph as
                                      nodes, its weights as a safetensors file the project
                                      starts from (init_from); unsupported ops are each listed
                                      by name and nothing is written. --replace-head N: the
                                      last Linear gets N outputs and new weights; --freeze-to
                                      NODE: that node and all before it are frozen;
                                      --lr-mult NODE=X: they train at X times the rate
)",
       "netsmith-cli import resnet18.onnx --out resnet18.netsmith.json",
       {"--json", "--force"},
       {"--out", "--weights", "--input", "--classes", "--replace-head", "--freeze-to",
        "--lr-mult"}},
      {"sweep",
       runSweep,
       R"(  sweep PROJECT [--parallel N] [--threads N] [--out DIR] [--limit-train N] [--limit-val N]
        [--apply-best OUT.netsmith.json] [--force] [--json]
  sweep --resume DIR [--parallel N] [--apply-best OUT.netsmith.json] [--force] [--json]
                                      the project's sweep section: each trial a train run of its
                                      own project under DIR (sweeps/NAME-TIME/trials/tNNNN), N at
                                      once with cores/N threads each; ASHA stops poor trials at
                                      its rungs; sweep.json records every trial and decision.
                                      Ctrl-C (or a kill) stops; --resume DIR goes on exactly.
                                      --apply-best: the best trial's project, written to OUT
)",
       "netsmith-cli sweep resources/examples/fashion_mnist_lr_sweep.netsmith.json --parallel 2",
       {"--json", "--force"},
       {"--parallel", "--threads", "--out", "--limit-train", "--limit-val", "--resume",
        "--apply-best"}},
      // One rank of a local data-parallel job, started by `train --nproc N` (not for people:
      // no usage).
      {"dist-worker", runDistWorker, "", "", {}, {}}};
  return kCommands;
}

const Command* findCommand(const std::string& name) {
  for (const auto& c : commands())
    if (c.name == name) return &c;
  return nullptr;
}

namespace {

constexpr const char* kExitStatus =
    R"(exit status: 0 success, 1 runtime failure (training diverged, a check failed), 2 invalid input
(flags, project, data, checkpoint, a folder or model from elsewhere), 3 input/output failure
(disk full, permission denied), 130 stopped by Ctrl-C
)";

}  // namespace

std::string usageText() {
  std::string text = R"(usage: netsmith-cli <command> [arguments]

commands:
)";
  for (const auto& c : commands())
    text += c.usage;
  return text + R"(
options:
  --help [--markdown]                 this text (--markdown: the whole reference, docs/cli.md)
  --version                           the Netsmith version

)" + kExitStatus;
}

Args commandArgs(const std::string& command, const std::vector<std::string>& words) {
  const auto* c = findCommand(command);
  if (!c) throw std::logic_error("no command " + command + " in the table");
  return Args(words, c->flags, c->options);
}

std::string referenceMarkdown() {
  std::string md =
      "# netsmith-cli reference\n\n"
      "<!-- Written by `netsmith-cli help --markdown` (tools/update_docs.sh); the docs test fails "
      "when this file and the program differ. -->\n\n"
      "`netsmith-cli` is the headless twin of the studio: it runs the same project files "
      "(`*.netsmith.json`). Each command prints its own usage with `--help`; `man netsmith-cli` "
      "holds the same text where the package is installed. The guide "
      "([docs/guide/](guide/README.md)) explains each task step by step.\n\n";
  for (const auto& c : commands())
    if (!c.usage.empty()) md += "- [`" + c.name + "`](#" + c.name + ")\n";
  for (const auto& c : commands()) {
    if (c.usage.empty()) continue;
    md += "\n## " + c.name + "\n\n```text\n" + c.usage + "```\n\n";
    const auto list = [](const std::set<std::string>& names) {
      std::string text;
      for (const auto& n : names)
        text += (text.empty() ? "`" : ", `") + n + "`";
      return text;
    };
    if (!c.flags.empty()) md += "Switches: " + list(c.flags) + ".\n";
    if (!c.options.empty()) md += "Options with a value: " + list(c.options) + ".\n";
    if (c.flags.empty() && c.options.empty()) md += "No options.\n";
    md += "\nExample:\n\n```sh\n" + c.example + "\n```\n";
  }
  return md + "\n## Exit status\n\n```text\n" + kExitStatus + "```\n";
}

std::vector<std::string> commandNames() {
  std::vector<std::string> names;
  for (const auto& c : commands())
    if (!c.usage.empty()) names.push_back(c.name);
  return names;
}

std::string commandHelp(const std::string& command) {
  const auto* c = findCommand(command);
  if (!c || c->example.empty()) return {};
  return "usage: netsmith-cli\n" + c->usage + "\nexample:\n  " + c->example + "\n";
}

namespace {

/// Prints `problems` of the project at `path` to stderr; true when there are none.
bool noProblems(const std::string& path, const Problems& problems) {
  if (problems.empty()) return true;
  std::cerr << path << ": " << problems.size() << (problems.size() == 1 ? " problem" : " problems")
            << ":\n";
  for (const auto& p : problems)
    std::cerr << p.toString() << '\n';
  return false;
}

/// The problems every command refuses: the file, the model, and the data, augment and sweep
/// sections (the train section's are loadTrainable's).
Problems validityProblems(const resolve::ResolvedProject& resolved) {
  Problems problems = resolved.structure;
  for (const auto* part : {&resolved.dataProblems, &resolved.sweepProblems})
    problems.insert(problems.end(), part->begin(), part->end());
  return problems;
}

}  // namespace

bool loadValid(const std::string& path, const Registries& registries,
               resolve::ResolvedProject& out) {
  out = resolve::resolveProject(project::loadProject(path), registries);
  return noProblems(path, validityProblems(out));
}

namespace {

/// Resolves `loaded` and prints what train would refuse (the file, the model, every section).
bool resolveTrainable(const std::string& path, project::LoadedProject loaded,
                      const Registries& registries, resolve::ResolvedProject& out) {
  out = resolve::resolveProject(std::move(loaded), registries);
  if (!noProblems(path, validityProblems(out))) return false;
  if (out.trainProblems.empty()) return true;
  std::cerr << path << ":\n" << formatProblems(out.trainProblems);
  return false;
}

/// Applies --epochs, --batch-size, --lr, --device, --threads, --seed, --nproc and
/// --dist-timeout (those given) to a project's train section.
void applyTrainOverrides(const Args& args, Json& train) {
  if (!train.is_object()) train = Json::object();
  if (args.option("--epochs") != "") train["epochs"] = args.integer("--epochs", 0, 1, 100000);
  if (args.option("--batch-size") != "")
    train["batch_size"] = args.integer("--batch-size", 0, 1, 1 << 20);
  if (args.option("--seed") != "") train["seed"] = args.integer("--seed", 0, 0, 1LL << 62);
  if (args.option("--threads") != "") train["threads"] = args.integer("--threads", 0, 0, 4096);
  if (args.option("--device") != "") train["device"] = args.option("--device");
  if (args.option("--nproc") != "") train["local_processes"] = args.integer("--nproc", 1, 1, 256);
  if (args.option("--dist-timeout") != "")
    train["dist_timeout"] = args.real("--dist-timeout", 60, 1);
  if (args.option("--lr") != "") {
    const double lr = args.real("--lr", 0, 0);
    if (!train.contains("optimizer") || train["optimizer"].is_string()) {
      const std::string type =
          train.contains("optimizer") ? train["optimizer"].get<std::string>() : "adam";
      train["optimizer"] = Json{{"type", type}};
    }
    if (!train["optimizer"].is_object())
      throw Error(
          "train.optimizer: expected an object such as {\"type\": \"adam\"} or a name, "
          "found " +
          jsonBrief(train["optimizer"]) + "; --lr sets its lr");
    train["optimizer"]["lr"] = lr;
  }
}

}  // namespace

bool loadTrainable(const std::string& path, const Registries& registries,
                   resolve::ResolvedProject& out) {
  return resolveTrainable(path, project::loadProject(path), registries, out);
}

bool loadTrainable(const Args& args, const Registries& registries, resolve::ResolvedProject& out) {
  const std::string& path = args.one("PROJECT");
  auto loaded = project::loadProject(path);
  applyTrainOverrides(args, loaded.project.train);
  return resolveTrainable(path, std::move(loaded), registries, out);
}

int runValidate(const std::vector<std::string>& words, const RegistriesPtr& registries) {
  const Args args = commandArgs("validate", words);
  const std::string& path = args.one("PROJECT");
  resolve::ResolvedProject resolved;
  if (!loadTrainable(path, *registries, resolved)) return kExitInvalid;
  // What train would refuse before its first batch: the data, the splits, output vs classes.
  const auto problems = resolve::trainableProblems(resolved, *registries);
  if (!problems.empty()) {
    std::cerr << path << ": " << problems.size()
              << (problems.size() == 1 ? " problem" : " problems") << ":\n"
              << formatProblems(problems);
    return kExitInvalid;
  }
  const auto& analysis = resolved.analysis;
  std::cout << path << ": valid (" << analysis.nodes.size() << " nodes, "
            << graph::formatCount(analysis.totalParams) << " parameters, output "
            << formatShape(analysis.outputShape) << ")\n";
  return kExitOk;
}

int runSummary(const std::vector<std::string>& words, const RegistriesPtr& registries) {
  const Args args = commandArgs("summary", words);
  const std::string& path = args.one("PROJECT");
  resolve::ResolvedProject resolved;
  if (!loadValid(path, *registries, resolved)) return kExitInvalid;
  // The batch, optimizer and momentum a run of the project uses (the train section's defaults
  // where it names none).
  const auto& train = resolved.train;
  const auto batch = args.integer("--batch-size", train.batchSize, 1, 1 << 20);
  const auto& optimizer = train.optimizer;
  const double momentum = optimizer.params.has("momentum") ? optimizer.params.real("momentum") : 0;
  const auto summary = graph::makeSummary(resolved.analysis, batch, optimizer.type, momentum);
  if (args.has("--json")) {
    std::cout << graph::summaryToJson(summary).dump(2) << '\n';
  } else {
    std::cout << "Project: " << printable(resolved.project().name) << '\n'
              << graph::formatSummaryTable(summary);
  }
  return kExitOk;
}

int runEnv(const std::vector<std::string>& words, const RegistriesPtr& /*registries*/) {
  const Args args = commandArgs("env", words);
  if (!args.positional().empty()) throw UsageError{"env takes no arguments"};
  env::configureThreads(static_cast<int>(args.integer("--threads", 0, 0, 4096)));
  const auto report = env::collectEnvReport();
  if (args.has("--json")) {
    std::cout << env::envReportToJson(report).dump(2) << '\n';
  } else {
    std::cout << env::formatEnvReport(report);
  }
  return kExitOk;
}

int runOps(const std::vector<std::string>& words, const RegistriesPtr& registries) {
  const Args args = commandArgs("ops", words);
  if (!args.positional().empty()) throw UsageError{"ops takes no arguments"};
  const auto& registry = registries->ops;
  Json all = Json::array();
  for (const auto& op : registry.all()) {
    Json inputs{{"min", op.minInputs}, {"max", op.maxInputs < 0 ? Json() : Json(op.maxInputs)}};
    std::vector<std::string> inits;
    for (auto s : op.initSchemes)
      inits.push_back(ops::initSchemeName(s));
    all.push_back(Json{{"op", op.name},
                       {"group", op.group},
                       {"help", op.help},
                       {"inputs", inputs},
                       {"init", inits},
                       {"params", schema::schemaToJson(op.schema)}});
  }
  if (args.has("--json")) {
    std::cout << all.dump(2) << '\n';
    return kExitOk;
  }
  for (const auto& group : registry.groups()) {
    std::cout << group << '\n';
    for (const auto& op : registry.all()) {
      if (op.group != group) continue;
      std::cout << "  " << op.name << " - " << op.help << '\n'
                << schema::schemaToText(op.schema, "      ");
    }
  }
  return kExitOk;
}

}  // namespace netsmith::cli
