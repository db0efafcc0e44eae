#include "experiment/sweep_event.h"

#include <cmath>

namespace netsmith::experiment {

namespace {

const std::pair<SweepEventType, const char*> kNames[] = {
    {SweepEventType::SweepStarted, "sweep_started"},
    {SweepEventType::TrialStarted, "trial_started"},
    {SweepEventType::Epoch, "epoch"},
    {SweepEventType::Rung, "rung"},
    {SweepEventType::TrialEnded, "trial_ended"},
    {SweepEventType::SweepEnded, "sweep_ended"}};

Json number(double v) {
  return std::isfinite(v) ? Json(v) : Json();
}

/// A number of `j[key]`, NaN when absent or null; throws when it is something else.
double numberAt(const Json& j, const char* key) {
  if (!j.contains(key) || j[key].is_null()) return std::nan("");
  return j.at(key).get<double>();
}

}  // namespace

std::string sweepEventName(SweepEventType type) {
  for (const auto& [t, name] : kNames)
    if (t == type) return name;
  return "sweep_started";
}

Json SweepEvent::toJson() const {
  switch (type) {
    case SweepEventType::SweepStarted:
      return Json{{"event", sweepEventName(type)},       {"folder", folder}, {"name", name},
                  {"planned_trials", plannedTrials},     {"trials", trials}, {"parallel", parallel},
                  {"threads_per_trial", threadsPerTrial}};
    case SweepEventType::TrialStarted:
      return Json{{"event", sweepEventName(type)},
                  {"trial", trial},
                  {"params", params},
                  {"resumed", resumed},
                  {"from_epoch", fromEpoch},
                  {"stop_at_epoch", stopAtEpoch},
                  {"epochs", epochs},
                  {"folder", folder}};
    case SweepEventType::Epoch:
      return Json{{"event", sweepEventName(type)},
                  {"trial", trial},
                  {"epoch", epoch},
                  {"epochs", epochs},
                  {"objective", objective},
                  {"value", number(value)}};
    case SweepEventType::Rung:
      return Json{
          {"event", sweepEventName(type)}, {"trial", trial},         {"epoch", epoch},
          {"continues", continues},        {"score", number(score)}, {"cutoff", number(cutoff)},
          {"compared", compared}};
    case SweepEventType::TrialEnded: {
      Json j = record.is_object() ? record : Json::object();
      j["event"] = sweepEventName(type);
      j["trial"] = trial;
      return j;
    }
    case SweepEventType::SweepEnded:
      return Json{{"event", sweepEventName(type)},
                  {"state", state},
                  {"folder", folder},
                  {"best", best},
                  {"elapsed_seconds", elapsedSeconds}};
  }
  return Json::object();
}

std::optional<SweepEvent> SweepEvent::fromJson(const Json& j) {
  if (!j.is_object() || !j.contains("event") || !j["event"].is_string()) return std::nullopt;
  const std::string kind = j["event"].get<std::string>();
  SweepEvent e;
  bool known = false;
  for (const auto& [t, name] : kNames) {
    if (kind == name) {
      e.type = t;
      known = true;
    }
  }
  if (!known) return std::nullopt;
  try {
    e.trial = j.value("trial", std::int64_t(0));
    switch (e.type) {
      case SweepEventType::SweepStarted:
        e.folder = j.value("folder", std::string());
        e.name = j.value("name", std::string());
        e.plannedTrials = j.value("planned_trials", std::int64_t(0));
        e.trials = j.value("trials", std::int64_t(0));
        e.parallel = j.value("parallel", std::int64_t(0));
        e.threadsPerTrial = j.value("threads_per_trial", std::int64_t(0));
        break;
      case SweepEventType::TrialStarted:
        e.params = j.value("params", Json::object());
        e.resumed = j.value("resumed", false);
        e.fromEpoch = j.value("from_epoch", std::int64_t(0));
        e.stopAtEpoch = j.value("stop_at_epoch", std::int64_t(0));
        e.epochs = j.value("epochs", std::int64_t(0));
        e.folder = j.value("folder", std::string());
        break;
      case SweepEventType::Epoch:
        e.epoch = j.value("epoch", std::int64_t(0));
        e.epochs = j.value("epochs", std::int64_t(0));
        e.objective = j.value("objective", std::string());
        e.value = numberAt(j, "value");
        break;
      case SweepEventType::Rung:
        e.epoch = j.value("epoch", std::int64_t(0));
        e.continues = j.value("continues", false);
        e.score = numberAt(j, "score");
        e.cutoff = numberAt(j, "cutoff");
        e.compared = j.value("compared", std::int64_t(0));
        break;
      case SweepEventType::TrialEnded: {
        e.record = j;
        e.record.erase("event");
        e.record.erase("trial");
        e.status = j.value("status", std::string());
        e.reason = j.value(e.status == "failed" ? "error" : "note", std::string());
        e.epochsDone = j.value("epochs_done", std::int64_t(0));
        e.trialObjective = numberAt(j, "objective");
        break;
      }
      case SweepEventType::SweepEnded:
        e.state = j.value("state", std::string());
        e.folder = j.value("folder", std::string());
        e.best = j.value("best", Json());
        e.elapsedSeconds = j.value("elapsed_seconds", 0.0);
        break;
    }
  } catch (const std::exception&) {
    return std::nullopt;  // a value of the wrong kind: not an event of this sweep
  }
  return e;
}

}  // namespace netsmith::experiment
