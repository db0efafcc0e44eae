#include "experiment/sweep_schedule.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "experiment/samplers.h"
#include "experiment/tpe.h"

namespace netsmith::experiment {

namespace {

bool better(double a, double b, bool maximize) {
  if (std::isnan(a)) return false;
  if (std::isnan(b)) return true;
  return maximize ? a > b : a < b;
}

std::string figure(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}

}  // namespace

std::int64_t segmentStop(const Trial& trial, const SweepSpec& spec) {
  for (const auto r : ashaRungs(spec.asha, trial.maxEpochs))
    if (r > trial.epochsDone) return r;
  return 0;
}

bool nextTrialSettings(const SweepState& state, const SweepSpec& spec, Assignment& settings) {
  const auto k = static_cast<std::int64_t>(state.trials.size());
  if (k >= plannedTrials(spec)) return false;
  if (spec.method != "tpe") {
    settings = trialAssignment(spec, k);
    return true;
  }
  const std::int64_t known = std::max<std::int64_t>(0, k - state.samplerLag);
  std::vector<Observation> observations;
  for (std::int64_t j = 0; j < known; ++j) {
    const auto& t = state.trials[static_cast<std::size_t>(j)];
    if (!t.ended()) return false;  // trial k waits for what it learns from
    observations.push_back({t.params, t.objective()});
  }
  TpeOptions options;
  options.startup = spec.startupTrials;
  settings = tpeAssignment(spec, k, observations, spec.maximize, options);
  return true;
}

void takeScores(Trial& trial, const std::map<std::int64_t, double>& scores) {
  trial.scores.clear();
  for (const auto& [e, v] : scores)
    if (e >= 1 && e <= trial.maxEpochs) trial.scores[e] = v;
  trial.epochsDone = trial.scores.empty() ? 0 : trial.scores.rbegin()->first;
}

void endSegment(Trial& trial, const std::map<std::int64_t, double>& scores, SegmentEnd end,
                std::int64_t stopAt, const std::string& error) {
  takeScores(trial, scores);
  switch (end) {
    case SegmentEnd::Interrupted:
      // Stopped after its segment's last epoch: the rung is still to be judged.
      trial.status =
          stopAt > 0 && trial.epochsDone >= stopAt ? TrialStatus::Paused : TrialStatus::Running;
      return;
    case SegmentEnd::Failed:
      trial.status = TrialStatus::Failed;
      trial.error = error.empty() ? "the trial's process failed" : error;
      return;
    case SegmentEnd::Exited:
      break;
  }
  if (trial.epochsDone >= trial.maxEpochs) {
    trial.status = TrialStatus::Completed;
  } else if (stopAt > 0 && trial.epochsDone >= stopAt) {
    trial.status = TrialStatus::Paused;
  } else if (trial.epochsDone > 0) {
    trial.status = TrialStatus::Completed;
    trial.note = "ended by its own early stopping after epoch " + std::to_string(trial.epochsDone);
  } else {
    trial.status = TrialStatus::Failed;
    trial.error = "its run ended without recording an epoch";
  }
}

void pauseAtReachedRung(Trial& trial, const std::map<std::int64_t, double>& scores,
                        const SweepSpec& spec) {
  if (trial.status != TrialStatus::Running) return;
  takeScores(trial, scores);
  if (trial.epochsDone <= 0 || trial.epochsDone >= trial.maxEpochs) return;
  const auto rungs = ashaRungs(spec.asha, trial.maxEpochs);
  if (std::find(rungs.begin(), rungs.end(), trial.epochsDone) != rungs.end())
    trial.status = TrialStatus::Paused;
}

std::vector<RungDecision> decideRungs(SweepState& state, const SweepSpec& spec) {
  std::vector<RungDecision> out;
  for (auto& t : state.trials) {
    if (t.status != TrialStatus::Paused || t.scores.empty()) continue;
    const std::int64_t r = t.scores.rbegin()->first;
    std::vector<double> rungScores;
    bool judgeable = true;
    for (const auto& j : state.trials) {
      if (j.id > t.id) break;
      if (const auto s = j.scores.find(r); s != j.scores.end()) {
        rungScores.push_back(s->second);
      } else if (!j.ended()) {
        judgeable = false;  // it may still reach the rung
        break;
      }
    }
    if (!judgeable) continue;
    RungDecision d;
    d.trial = t.id;
    d.rung = r;
    d.score = t.scores.rbegin()->second;
    d.compared = static_cast<std::int64_t>(rungScores.size());
    d.cutoff = ashaCutoff(rungScores, spec.asha.reduction, spec.maximize);
    d.continues = ashaContinues(rungScores, d.score, spec.asha.reduction, spec.maximize);
    if (d.continues) {
      t.status = TrialStatus::Running;
    } else {
      t.status = TrialStatus::Stopped;
      t.note = "ASHA at epoch " + std::to_string(r) + ": " + spec.objective + " " +
               figure(d.score) + (spec.maximize ? " below " : " above ") + "the rung's " +
               figure(d.cutoff) + " (best 1/" + std::to_string(spec.asha.reduction) + " of " +
               std::to_string(d.compared) + ")";
    }
    out.push_back(d);
  }
  return out;
}

void stopWaitingTrials(SweepState& state, const std::vector<std::int64_t>& underWay,
                       const std::string& why) {
  for (auto& t : state.trials) {
    if (t.ended() || std::find(underWay.begin(), underWay.end(), t.id) != underWay.end()) continue;
    t.status = TrialStatus::Stopped;
    t.note = why;
  }
}

bool sweepDone(const SweepState& state, const SweepSpec& spec, bool budgetSpent) {
  if (!budgetSpent && static_cast<std::int64_t>(state.trials.size()) < plannedTrials(spec))
    return false;
  for (const auto& t : state.trials)
    if (!t.ended()) return false;
  return true;
}

const Trial* bestTrial(const SweepState& state, const SweepSpec& spec) {
  const Trial* best = nullptr;
  for (const bool completedOnly : {true, false}) {
    for (const auto& t : state.trials) {
      if (completedOnly && t.status != TrialStatus::Completed) continue;
      if (t.scores.empty() || std::isnan(t.objective())) continue;
      // Under a latency limit, only a trial measured within it.
      if (spec.maxLatencyMs > 0 && (t.latencyMs < 0 || t.latencyMs > spec.maxLatencyMs)) continue;
      if (!best || better(t.objective(), best->objective(), spec.maximize)) best = &t;
    }
    if (best) return best;
  }
  return nullptr;
}

double objectiveFromEpochEvent(const Json& event, const std::string& objective) {
  const auto number = [](const Json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>()
                                                                  : std::nan("");
  };
  // val_<figure> / train_<figure>: a task's figures sit under "figures" ("train_figures");
  // loss and accuracy beside them too, in events written before figures had names.
  const bool validation = objective.rfind("val_", 0) == 0;
  const std::string figure = objective.substr(validation ? 4 : 6);
  if (!validation) {
    if (figure == "loss") return number(event, "train_loss");
    const double named = number(event.value("train_figures", Json()), figure.c_str());
    return std::isnan(named) ? number(event, objective.c_str()) : named;
  }
  const Json v = event.value("validation", Json());
  if (figure == "loss") return number(v, "loss");
  const double named = number(v.is_object() ? v.value("figures", Json()) : Json(), figure.c_str());
  return std::isnan(named) ? number(v, figure.c_str()) : named;
}

}  // namespace netsmith::experiment
