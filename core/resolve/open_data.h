#pragma once

// A resolved project's data opened for use: what eval, the doctor and the CLI's data commands
// open, from the data section as resolveProject read it.
#include <memory>
#include <string>

#include "data/data_config.h"
#include "data/dataset_stats.h"

namespace netsmith::augment {
class TransformRegistry;
}  // namespace netsmith::augment

namespace netsmith::data {
struct ProjectData;
}  // namespace netsmith::data

namespace netsmith::resolve {

struct ResolvedProject;

/// `project`'s data section as read (its paths may be missing: opening it says so). Throws
/// netsmith::Error when the project has no data section, or with the section's problems.
const data::DataConfig& dataConfig(const ResolvedProject& project);

/// data::openProjectData with `project`'s data section as read (dataConfig) and its augment
/// section as the pipeline. Throws netsmith::Error as dataConfig does, or with the augment
/// section's problems. Returns nullptr when `progress` cancels the statistics.
std::unique_ptr<data::ProjectData> openData(const ResolvedProject& project,
                                            const augment::TransformRegistry& transforms,
                                            const std::string& cacheDir,
                                            const data::ProgressFn& progress = {});

}  // namespace netsmith::resolve
