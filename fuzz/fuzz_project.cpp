// The project reader and everything `netsmith-cli validate` and `summary` check before opening
// data: JSON parsing, the model graph and its shape analysis, the data, augment and train
// sections, the summary's figures. Any exception other than netsmith::Error is a finding (the
// user would see a raw library message), as is any crash, hang or sanitizer report.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/error.h"
#include "graph/model_summary.h"
#include "project/project.h"
#include "registries/registries.h"
#include "resolve/resolved_project.h"

using namespace netsmith;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto registries = Registries::builtins();
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    // Every section read as `validate` and `summary` read it; relative data paths resolve
    // inside an empty folder, so nothing real is opened.
    resolve::ResolveOptions how;
    how.baseDir = "/nonexistent-netsmith-fuzz";
    const auto resolved = resolve::resolveProject(project::parseProject(text, "fuzz.netsmith.json"),
                                                  *registries, how);
    const auto problems = resolved.problems();
    for (const auto& p : problems)
      (void)p.toString();
    for (const auto& p : resolved.metricProblems)
      (void)p.toString();
    if (problems.empty()) {
      const auto& optimizer = resolved.train.optimizer;
      const double momentum =
          optimizer.params.has("momentum") ? optimizer.params.real("momentum") : 0;
      const auto summary =
          graph::makeSummary(resolved.analysis, resolved.train.batchSize, optimizer.type, momentum);
      (void)graph::formatSummaryTable(summary);
      (void)project::serialiseProject(resolved.project());
    }
  } catch (const Error&) {
    // A clear error: the expected outcome for bad input.
  }
  return 0;
}
