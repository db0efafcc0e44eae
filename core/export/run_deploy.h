#pragma once

// What a run's model costs deployed, kept with the run: its best checkpoint (else its last)
// exported to ONNX as `export` writes it, then benchmarked (deploy_bench.h); the figures go to
// the run folder's deploy.json, which the run records reader gives as RunRecord::deploy (the
// Runs and Experiments pages plot the headline figure against latency and size from it).
// `netsmith-cli bench RUN_DIR` and `train --deploy-bench` (a sweep with a latency limit asks its
// trials for it) measure it. No LibTorch here.
#include <string>

#include "common/json.h"
#include "export/deploy_bench.h"
#include "registries/registries_fwd.h"

namespace netsmith::exporting {

/// Measures the run at `runDir` and writes its deploy.json (atomically; never through a link
/// planted there). Returns what it wrote: DeployBench::toJson() without each timed run, with
/// "checkpoint" (the file measured, relative to the run) and "measured" (local time). Throws
/// netsmith::Error naming the run: no run folder, no checkpoint, a model that cannot be exported.
Json measureRunDeploy(const std::string& runDir, const RegistriesPtr& registries,
                      const DeployBenchOptions& options);

}  // namespace netsmith::exporting
