#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "common/exit_codes.h"
#include "common/json.h"
#include "registries/registries.h"
#include "resolve/resolved_project.h"

namespace netsmith::cli {

class Args;

// Exit codes: common/exit_codes.h (kExitOk, kExitFailure, kExitInvalid, kExitIo,
// kExitInterrupted).

int runValidate(const std::vector<std::string>& words, const RegistriesPtr& registries);
int runSummary(const std::vector<std::string>& words, const RegistriesPtr& registries);
int runEnv(const std::vector<std::string>& words, const RegistriesPtr& registries);
int runOps(const std::vector<std::string>& words, const RegistriesPtr& registries);
int runTransforms(const std::vector<std::string>& words, const RegistriesPtr& registries);
int runFormats(const std::vector<std::string>& words, const RegistriesPtr& registries);
int runDataStats(const std::vector<std::string>& words, const RegistriesPtr& registries);
int runPreviewAug(const std::vector<std::string>& words, const RegistriesPtr& registries);
int runMakeDataset(const std::vector<std::string>& words, const RegistriesPtr& registries);
int runInit(const std::vector<std::string>& words, const RegistriesPtr& registries);
int runLrSchedule(const std::vector<std::string>& words, const RegistriesPtr& registries);
int runBench(const std::vector<std::string>& words, const RegistriesPtr& registries);
int runTrain(const std::vector<std::string>& words, const RegistriesPtr& registries);
int runDistWorker(const std::vector<std::string>& words, const RegistriesPtr& registries);
int runEval(const std::vector<std::string>& words, const RegistriesPtr& registries);
int runPredict(const std::vector<std::string>& words, const RegistriesPtr& registries);
/// `eval CHECKPOINT --gradcam IMAGE [--gradcam-node ID] [--gradcam-class N] [--out FILE]`.
int runGradCam(const Args& args, const RegistriesPtr& registries);
/// bench MODEL.onnx... | RUN_DIR...: the deploy benchmark (bench dispatches to it on an .onnx
/// argument or a run folder, whose best checkpoint it exports, measures and records).
int runDeployBench(const Args& args, const RegistriesPtr& registries);
int runLrFind(const std::vector<std::string>& words, const RegistriesPtr& registries);
int runExport(const std::vector<std::string>& words, const RegistriesPtr& registries);
int runImport(const std::vector<std::string>& words, const RegistriesPtr& registries);
int runSweep(const std::vector<std::string>& words, const RegistriesPtr& registries);
int runDoctor(const std::vector<std::string>& words, const RegistriesPtr& registries);

}  // namespace netsmith::cli

namespace netsmith::project {
struct LoadedProject;
}
namespace netsmith::ops {
class OpRegistry;
}
namespace netsmith::train {
struct TrainOptions;
struct TrainResult;
struct TrainerConfig;
class Trainer;
}  // namespace netsmith::train

namespace netsmith::cli {

/// Loads a project and resolves it once (resolve::resolveProject); prints the problems of the
/// file, the model and the data, augment and sweep sections to stderr and returns false when
/// there are any.
bool loadValid(const std::string& path, const Registries& registries,
               resolve::ResolvedProject& out);

/// loadValid(), and the `train` section's problems too.
bool loadTrainable(const std::string& path, const Registries& registries,
                   resolve::ResolvedProject& out);
/// loadTrainable() for the command's PROJECT, its train section changed first by the command's
/// --epochs, --batch-size, --lr, --device, --threads, --seed, --nproc and --dist-timeout (those
/// given).
bool loadTrainable(const Args& args, const Registries& registries, resolve::ResolvedProject& out);

/// A trainer configuration for `loaded` that writes no run folder (lr-find, bench).
train::TrainerConfig folderlessConfig(const resolve::ResolvedProject& resolved,
                                      const RegistriesPtr& registries);

/// This program's path, for starting more ranks of a local job and a sweep's trials.
std::string selfExecutable();

/// Runs a trainer to its end on this thread's watch: Ctrl-C asks it to stop (it writes a
/// checkpoint first). Returns the result.
train::TrainResult runWithInterrupts(train::Trainer& trainer);

/// A command of netsmith-cli: main() dispatches through this table, and `--help`, a
/// command's `--help`, usage errors, the "did you mean" guess and the bash completion's list
/// (commandNames) come from it.
struct Command {
  std::string name;
  int (*run)(const std::vector<std::string>& words, const RegistriesPtr& registries) = nullptr;
  std::string usage;            ///< its lines of usageText(); "" for a command not meant for people
  std::string example;          ///< one run of it, for `netsmith-cli COMMAND --help`
  std::set<std::string> flags;  ///< the switches it takes (--json)
  std::set<std::string> options;  ///< the options that take a value (--out FILE)
};
const std::vector<Command>& commands();
/// The command called `name`, or nullptr.
const Command* findCommand(const std::string& name);

/// The text `netsmith-cli --help` prints.
std::string usageText();
/// The names of the commands, as usageText() lists them.
std::vector<std::string> commandNames();
/// One command's usage and an example (`netsmith-cli train --help`); "" for an unknown one.
std::string commandHelp(const std::string& command);
/// `words` parsed with the flags and options the table gives `command` (its run function's
/// only parser, so the reference and the parser cannot disagree).
Args commandArgs(const std::string& command, const std::vector<std::string>& words);
/// The whole reference as Markdown (`netsmith-cli help --markdown`, kept as docs/cli.md): each
/// command's usage, the flags and options it accepts, its example, and the exit status.
std::string referenceMarkdown();

}  // namespace netsmith::cli
