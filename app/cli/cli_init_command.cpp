// init: a project from a user's data (core/import/project_starter.h): what was found, what was
// chosen, and the project written beside the data or where --out says.
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "cli/cli_args.h"
#include "cli/cli_commands.h"
#include "common/file_util.h"
#include "common/resource_paths.h"
#include "import/project_starter.h"
#include "ops/op_registry.h"
#include "project/project.h"
#include "task/task_registry.h"

#ifndef NETSMITH_RESOURCE_DIR
#define NETSMITH_RESOURCE_DIR ""
#endif

namespace netsmith::cli {

namespace fs = std::filesystem;

int runInit(const std::vector<std::string>& words, const RegistriesPtr& registries) {
  const Args args = commandArgs("init", words);
  const std::string dataPath = args.one("DATA");
  import::StarterChoices choices;
  choices.task = args.option("--task");
  choices.templateName = args.option("--template");
  choices.name = args.option("--name");
  choices.channels = args.integer("--channels", 0, 1, 4);
  if (choices.channels == 2) throw UsageError{"--channels: 1 (grey) or 3 (colour)"};
  choices.height = args.integer("--height", 0, 8, 4096);
  choices.width = args.integer("--width", 0, 8, 4096);
  if ((choices.height > 0) != (choices.width > 0))
    throw UsageError{"--height and --width go together"};
  choices.validationFraction = args.real("--validation", -1, -1);
  if (!args.option("--validation").empty() &&
      (choices.validationFraction < 0 || choices.validationFraction >= 0.9))
    throw UsageError{"--validation: a fraction of the training images below 0.9"};
  choices.explicitNormalization = args.has("--explicit-normalization");
  const std::string out =
      args.option("--out").empty() ? import::defaultProjectPath(dataPath) : args.option("--out");
  const std::string suffix = project::kFileSuffix;
  if (out.size() < suffix.size() || out.compare(out.size() - suffix.size(), suffix.size(), suffix))
    throw UsageError{"--out: a project file's name ends in " + suffix + " (" + printable(out) +
                     ")"};
  std::error_code ec;
  if (!args.has("--dry-run") && !args.has("--force") &&
      fs::symlink_status(out, ec).type() != fs::file_type::not_found)
    throw Error(out + ": exists already; pass --force to replace it, or --out another file");

  // The folder it goes into is checked before the data is read: a link someone planted there
  // is refused, as every write here refuses one.
  if (!args.has("--dry-run") && fs::exists(fs::absolute(out).parent_path(), ec))
    requireRealFolder(fs::absolute(out).parent_path().string());

  import::StarterContext context;
  context.registries = registries;
  context.templatesDir = findTemplatesDir(NETSMITH_RESOURCE_DIR);
  if (::isatty(STDERR_FILENO))
    context.progress = [](const std::string& what, std::int64_t done, std::int64_t total) {
      std::fprintf(stderr, "\r%s: %3d%%", what.c_str(), total ? int(100 * done / total) : 100);
      if (done >= total) std::fprintf(stderr, "\r%*s\r", int(what.size()) + 6, "");
      return true;
    };
  const auto proposal = import::proposeProject(dataPath, out, choices, context);
  std::fputs(import::proposalText(proposal).c_str(), stdout);
  if (args.has("--dry-run")) {
    std::printf("Not written (--dry-run): %s\n", printable(out).c_str());
    return proposal.problems.empty() ? kExitOk : kExitInvalid;
  }
  const fs::path parent = fs::absolute(out).parent_path();
  if (!fs::exists(parent, ec)) makeRealFolder(parent.string());
  writeFileAtomically(out, project::serialiseProject(proposal.project));
  std::printf("Wrote %s\n", printable(out).c_str());
  if (!proposal.problems.empty()) return kExitInvalid;
  std::printf("Next: netsmith-cli train %s\n", printable(out).c_str());
  return kExitOk;
}

}  // namespace netsmith::cli
