#include "train/dist_worker.h"

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>

#include "common/error.h"
#include "common/file_util.h"
#include "common/json.h"
#include "common/json_text.h"
#include "distributed/dist_env.h"

namespace netsmith::train {

namespace {

/// Rank R's voice: warnings and the end of a failed run, prefixed.
class WorkerConsole : public run::EventSink {
 public:
  explicit WorkerConsole(int rank) : m_prefix("[rank " + std::to_string(rank) + "] ") {}
  void onEvent(const run::TrainingEvent& e) override {
    if (e.type == run::EventType::Warning ||
        (e.type == run::EventType::Finished && e.state == run::FinishState::Failed)) {
      std::fprintf(stderr, "%s%s\n", m_prefix.c_str(), e.message.c_str());
      std::fflush(stderr);
    }
  }

 private:
  std::string m_prefix;
};

}  // namespace

std::shared_ptr<run::EventSink> makeRankConsole(int rank) {
  return std::make_shared<WorkerConsole>(rank);
}

void writeWorkerSpec(const TrainerConfig& config, const std::string& path) {
  namespace fs = std::filesystem;
  const auto absolute = [](const std::string& p) {
    return p.empty() ? p : fs::absolute(p).lexically_normal().string();
  };
  const Json spec{{"project", project::projectToJson(config.project)},
                  {"project_name", config.project.name},
                  {"base_dir", absolute(config.baseDir.empty() ? "." : config.baseDir)},
                  {"resume", absolute(config.resumePath)},
                  {"init_from", absolute(config.initFromPath)},
                  {"cache_dir", config.cacheDir},
                  {"limit_train", config.limitTrain},
                  {"limit_val", config.limitVal},
                  {"limit_test", config.limitTest},
                  {"stop_after_batches", config.stopAfterBatches},
                  {"stop_at_epoch", config.stopAtEpoch},
                  {"skip_test", config.skipTest}};
  writeFileAtomically(path, spec.dump(1) + "\n");
}

TrainerConfig readWorkerSpec(const std::string& path) {
  TrainerConfig config;
  try {
    const Json spec = parseJsonText(readTextFile(path), path);
    auto loaded = project::parseProject(spec.at("project").dump(), path);
    if (!loaded.problems.empty())
      throw Error("the project in it has problems:\n" + formatProblems(loaded.problems));
    config.project = loaded.project;
    config.project.name = spec.value("project_name", config.project.name);
    config.baseDir = spec.at("base_dir").get<std::string>();
    config.resumePath = spec.value("resume", "");
    config.initFromPath = spec.value("init_from", "");
    config.cacheDir = spec.value("cache_dir", "");
    config.limitTrain = spec.value("limit_train", std::int64_t(0));
    config.limitVal = spec.value("limit_val", std::int64_t(0));
    config.limitTest = spec.value("limit_test", std::int64_t(0));
    config.stopAfterBatches = spec.value("stop_after_batches", std::int64_t(0));
    config.stopAtEpoch = spec.value("stop_at_epoch", std::int64_t(0));
    config.skipTest = spec.value("skip_test", false);
  } catch (const Error& e) {
    throw Error(path + ": not a worker spec: " + e.what());
  } catch (const std::exception&) {
    // A key missing or of another kind (nlohmann's own text names no place a user knows).
    throw Error(path +
                ": not a worker spec (it needs \"project\" and \"base_dir\", as "
                "train --nproc writes them)");
  }
  config.writeRun = false;
  return config;
}

int runDistWorker(const std::string& specPath, const RegistriesPtr& registries) {
  TrainerConfig config = readWorkerSpec(specPath);
  config.registries = registries;
  config.dist = distributed::distEnvFromEnvironment();
  if (!config.dist.distributed()) {
    throw Error(
        "dist-worker runs one rank of a job that netsmith started (RANK and WORLD_SIZE "
        "are not set); use `netsmith-cli train --nproc N` instead");
  }
  // Ctrl-C at a terminal reaches every process of the job: rank 0 handles it and the others
  // stop with it at the same batch.
  std::signal(SIGINT, SIG_IGN);
  Trainer trainer(config);
  trainer.addSink(makeRankConsole(config.dist.rank));
  trainer.start();
  trainer.wait();
  return trainer.result().state == run::FinishState::Failed ? 1 : 0;
}

}  // namespace netsmith::train
