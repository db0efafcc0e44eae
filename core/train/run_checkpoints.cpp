#include "train/run_checkpoints.h"

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "checkpoint/checkpoint.h"
#include "common/error.h"
#include "common/torch_compat.h"
#include "netsmith/version.h"
#include "task/task.h"
#include "train/trainer.h"

namespace netsmith::train {

namespace {

/// The task's figure sums of a checkpoint: as many as the task keeps, each finite and, for a
/// checkpoint without them (before the epoch's first batch), none.
bool sumsFit(const std::vector<double>& sums, std::size_t count) {
  if (sums.size() != count && !sums.empty()) return false;
  for (double v : sums)
    if (!std::isfinite(v)) return false;
  return true;
}

}  // namespace

namespace fs = std::filesystem;

namespace {

/// What a checkpoint's position depends on that differs between the plan it was written
/// under and `now` (epochs may differ: a run can be extended). Empty for checkpoints that
/// predate the recorded plan.
std::vector<std::string> planDifferences(const Json& meta, const RunPlan& now, std::uint64_t seed) {
  std::vector<std::string> out;
  if (!meta.contains("plan") || !meta["plan"].is_object()) return out;
  const Json& then = meta["plan"];
  const Json current = now.toJson();
  for (const char* key : {"train_samples", "batch_size", "world_size", "grad_accumulation",
                          "batches_per_epoch", "schedule", "base_lr"}) {
    if (!then.contains(key) || then[key] == current[key]) continue;
    out.push_back(std::string(key) + ": " + then[key].dump() + " in the checkpoint, " +
                  current[key].dump() + " now");
  }
  if (meta.contains("rng") && meta["rng"].is_object() && meta["rng"].contains("seed") &&
      meta["rng"]["seed"] != Json(seed))
    out.push_back("seed: " + meta["rng"]["seed"].dump() + " in the checkpoint, " +
                  std::to_string(seed) + " now");
  return out;
}

}  // namespace

std::string RunCheckpoints::write(const std::string& tag, const Json& metrics) {
  const auto& s = m_setup;
  if (m_dir.empty() || s.opt.fastDevRun) return {};
  const auto& config = m_ctx.config;
  Json loop = m_state.toJson();
  m_callbacks.save(loop);
  checkpoint::CheckpointData data;
  data.meta = Json{
      {"project_name", config.project.name},
      {"project", project::projectToJson(s.project)},
      {"base_dir",
       fs::absolute(config.baseDir.empty() ? "." : config.baseDir).lexically_normal().string()},
      {"model_signature", s.signature},
      {"optimizer", s.opt.optimizer.type},
      {"epoch", m_state.epoch},
      {"step", m_state.step},
      {"loop", loop},
      {"plan", s.plan.toJson()},
      {"schedule", Json{{"type", s.opt.schedule.type()},
                        {"base_lr", s.opt.schedule.baseLr()},
                        {"epochs", s.plan.epochs()},
                        {"steps_per_epoch", s.plan.stepsPerEpoch()}}},
      {"rng", Json{{"seed", s.opt.seed},
                   {"scheme",
                    "per-batch: torch seeded from (seed, epoch, batch); "
                    "augmentation from (seed, epoch, sample)"}}},
      {"data_order", Json{{"seed", s.opt.seed},
                          {"epoch", m_state.epoch},
                          {"next_batch", m_state.nextBatch},
                          {"batches_per_epoch", s.plan.batchesPerEpoch()}}},
      {"classes", s.pd->data.classes},
      {"task_state", s.task->state()},
      {"normalization", Json{{"mean", s.pd->normalization.mean}, {"std", s.pd->normalization.std}}},
      {"metrics", metrics},
      {"versions", Json{{"netsmith", NETSMITH_VERSION}, {"libtorch", compat::torchVersion()}}}};
  data.model = checkpoint::moduleState(*s.net);
  data.optimizer = checkpoint::optimizerState(*s.optimizer, s.opt.optimizer.type, *s.net);
  const std::string path = (fs::path(m_dir) / (tag + ".safetensors")).string();
  checkpoint::writeCheckpoint(path, data);  // atomic: the previous file stays on failure
  run::TrainingEvent e;
  e.type = run::EventType::Checkpoint;
  e.path = path;
  e.tag = tag;
  e.epoch.epoch = m_state.epoch;
  m_ctx.publish(std::move(e));
  if (tag == "last") m_last = path;
  if (tag == "best") m_best = path;
  return path;
}

void RunCheckpoints::resume(const std::string& path) {
  auto& s = m_setup;
  const auto data = checkpoint::readCheckpoint(path);
  const std::string theirs = data.meta.value("model_signature", "");
  if (theirs != s.signature) {
    throw Error(path + ": a checkpoint of another model (" +
                data.meta.value("project_name", std::string("unknown project")) +
                "); --resume continues the same model, --init-from loads matching weights");
  }
  torch::NoGradGuard noGrad;
  const auto report = checkpoint::loadModuleState(*s.net, data.model);
  if (!report.complete()) throw Error(path + ": does not fit this model: " + report.summary());
  if (data.meta.value("optimizer", "") != s.opt.optimizer.type) {
    throw Error(path + ": written with optimizer \"" + data.meta.value("optimizer", "") +
                "\" but train.optimizer.type is \"" + s.opt.optimizer.type + "\"");
  }
  const auto differences = planDifferences(data.meta, s.plan, s.opt.seed);
  if (!differences.empty()) {
    std::string list;
    for (const auto& d : differences)
      list += "\n  " + d;
    throw Error(path +
                ": the run was set up differently when this checkpoint was written, so "
                "its position does not carry over:" +
                list +
                "\nResume with the settings it was written with (the same data, limits, batch "
                "size, processes and schedule), or start a new schedule from its weights with "
                "--init-from " +
                path);
  }
  checkpoint::restoreOptimizerState(*s.optimizer, s.opt.optimizer.type, *s.net, data.optimizer);
  LoopState loaded;
  try {
    loaded.fromJson(data.meta.at("loop"));
  } catch (const std::exception& e) {
    throw Error(path + ": corrupt loop state in the checkpoint (" + e.what() + ")");
  }
  if (loaded.epoch < 0 || loaded.step < 0 || loaded.nextBatch < 0 ||
      loaded.nextBatch > s.plan.batchesPerEpoch() || loaded.seen < 0 ||
      !sumsFit(loaded.figureSums, s.task->trainSumCount())) {
    throw Error(path + ": corrupt loop state in the checkpoint (epoch " +
                std::to_string(loaded.epoch) + ", next batch " + std::to_string(loaded.nextBatch) +
                " of " + std::to_string(s.plan.batchesPerEpoch()) + ", step " +
                std::to_string(loaded.step) + ")");
  }
  try {
    m_callbacks.restore(data.meta.at("loop"));
  } catch (const std::exception& e) {
    throw Error(path + ": corrupt loop state in the checkpoint (" + e.what() + ")");
  }
  m_state = loaded;
  if (m_state.epoch >= s.plan.epochs()) {
    throw Error(path + ": the run already finished its " + std::to_string(s.plan.epochs()) +
                " epochs; raise --epochs to train further");
  }
  m_ctx.log("resumed from " + path + " at epoch " + std::to_string(m_state.epoch + 1) + ", batch " +
            std::to_string(m_state.nextBatch) + ", step " + std::to_string(m_state.step));
}

}  // namespace netsmith::train
