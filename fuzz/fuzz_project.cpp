// The project reader and everything `netsmith-cli validate` and `summary` check before opening
// data: JSON parsing, the model graph and its shape analysis, the data, augment and train
// sections, the summary's figures. Any exception other than netsmith::Error is a finding (the
// user would see a raw library message), as is any crash, hang or sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>

#include "augment/transform.h"
#include "common/error.h"
#include "data/project_data.h"
#include "experiment/sweep_spec.h"
#include "graph/graph_analysis.h"
#include "graph/model_summary.h"
#include "project/project.h"
#include "registries/registries.h"
#include "train/lr_schedule.h"
#include "train/train_options.h"

using namespace netsmith;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto registries = Registries::builtins();
  const auto& registry = registries->ops;
  const auto& transforms = registries->transforms;
  const auto& schedules = registries->schedules;
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto loaded = project::parseProject(text, "fuzz.netsmith.json");
    auto problems = project::validateProject(loaded, registry);
    // Relative data paths resolve inside an empty folder: nothing real is opened.
    const auto dataProblems =
        data::validateDataSections(loaded.project, "/nonexistent-netsmith-fuzz", transforms);
    Problems trainProblems;
    train::parseTrainOptions(loaded.project.train, schedules, trainProblems);
    if (loaded.project.extra.contains("sweep"))
      experiment::parseSweep(loaded.project.extra["sweep"], loaded.project, trainProblems,
                             *registries);
    for (const auto& p : problems)
      (void)p.toString();
    if (problems.empty() && dataProblems.empty()) {
      const auto analysis = graph::analyseGraph(loaded.project.model, registry);
      const auto summary = graph::makeSummary(analysis, project::projectBatchSize(loaded.project),
                                              project::projectOptimizer(loaded.project),
                                              project::projectMomentum(loaded.project));
      (void)graph::formatSummaryTable(summary);
      (void)project::serialiseProject(loaded.project);
    }
  } catch (const Error&) {
    // A clear error: the expected outcome for bad input.
  }
  return 0;
}
