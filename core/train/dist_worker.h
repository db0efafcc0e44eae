#pragma once

// The other ranks of a local data-parallel job: rank 0 writes a spec of its run (the project
// as it trains it, its folder, the limits, the checkpoint to resume) and starts
// `netsmith-cli dist-worker SPEC` once per rank; each worker reads the spec and trains its
// share. No LibTorch here.
#include <memory>
#include <string>

#include "train/trainer.h"

namespace netsmith::train {

/// The voice of a rank other than 0: warnings and a failed run's reason on stderr, prefixed
/// "[rank R] " (rank 0 speaks for the job).
std::shared_ptr<run::EventSink> makeRankConsole(int rank);

void writeWorkerSpec(const TrainerConfig& config, const std::string& path);
/// Throws netsmith::Error naming the spec file when it cannot be read.
TrainerConfig readWorkerSpec(const std::string& path);
/// Runs one worker rank to its end; warnings and a failure go to stderr as "[rank R] ...".
/// Returns 0 when the run completed or stopped, 1 when it failed.
int runDistWorker(const std::string& specPath, const RegistriesPtr& registries);

}  // namespace netsmith::train
