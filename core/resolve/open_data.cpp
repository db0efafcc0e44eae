#include "resolve/open_data.h"

#include "common/error.h"
#include "data/project_data.h"
#include "resolve/resolved_project.h"

namespace netsmith::resolve {

const data::DataConfig& dataConfig(const ResolvedProject& project) {
  if (!project.hasDataSection())
    throw Error("data: the project has no data section; add one (see the README) to train");
  if (!project.data) throw Error(formatProblems(project.dataProblems));
  return *project.data;
}

std::unique_ptr<data::ProjectData> openData(const ResolvedProject& project,
                                            const augment::TransformRegistry& transforms,
                                            const std::string& cacheDir,
                                            const data::ProgressFn& progress) {
  return data::openProjectData(project.project(), dataConfig(project), transforms, cacheDir,
                               progress);
}

}  // namespace netsmith::resolve
