// sweep: a project's sweep section run as trials in child processes (core/experiment).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>

#include "cli/cli_args.h"
#include "cli/cli_commands.h"
#include "common/error.h"
#include "common/file_util.h"
#include "experiment/samplers.h"
#include "experiment/sweep_runner.h"
#include "experiment/sweep_schedule.h"
#include "ops/op_registry.h"
#include "train/train_options.h"

namespace netsmith::cli {

namespace {

std::atomic<bool> g_sweepInterrupted{false};

extern "C" void onSweepInterrupt(int) {
  if (g_sweepInterrupted.exchange(true)) std::_Exit(130);  // a second Ctrl-C ends at once
}

std::string paramsText(const Json& params) {
  std::string out;
  for (const auto& [path, v] : params.items()) {
    std::string value = v.dump();
    if (v.is_number_float()) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.4g", v.get<double>());
      value = buf;
    }
    out += (out.empty() ? "" : ", ") + path + "=" + value;
  }
  return out;
}

std::string score(const Json& v) {
  if (!v.is_number()) return "n/a";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", v.get<double>());
  return buf;
}

std::string duration(double seconds) {
  const auto s = static_cast<long long>(std::llround(seconds));
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%lldh%02lldm", s / 3600, (s / 60) % 60);
  else
    std::snprintf(buf, sizeof buf, "%lldm%02llds", s / 60, s % 60);
  return buf;
}

/// A score as the table shows it ("n/a" for NaN).
std::string score(double v) {
  return score(std::isfinite(v) ? Json(v) : Json());
}

/// One line per event on the terminal.
void printEvent(const experiment::SweepEvent& e) {
  using experiment::SweepEventType;
  const auto trial = "trial " + std::to_string(e.trial);
  switch (e.type) {
    case SweepEventType::TrialStarted:
      std::printf("%s %s: %s (epochs %lld-%lld of %lld)\n", trial.c_str(),
                  e.resumed ? "resumed" : "started", paramsText(e.params).c_str(),
                  static_cast<long long>(e.fromEpoch + 1), static_cast<long long>(e.stopAtEpoch),
                  static_cast<long long>(e.epochs));
      break;
    case SweepEventType::Epoch:
      std::printf("%s epoch %lld/%lld: %s %s\n", trial.c_str(), static_cast<long long>(e.epoch),
                  static_cast<long long>(e.epochs), e.objective.c_str(), score(e.value).c_str());
      break;
    case SweepEventType::Rung:
      std::printf("%s at the epoch-%lld rung: %s %s the cutoff %s (best of %lld)\n", trial.c_str(),
                  static_cast<long long>(e.epoch), score(e.score).c_str(),
                  e.continues ? "reaches" : "misses", score(e.cutoff).c_str(),
                  static_cast<long long>(e.compared));
      break;
    case SweepEventType::TrialEnded:
      std::printf("%s %s after %lld epochs: %s %s%s\n", trial.c_str(), e.status.c_str(),
                  static_cast<long long>(e.epochsDone), "objective",
                  score(e.trialObjective).c_str(),
                  e.reason.empty() ? "" : ("; " + e.reason).c_str());
      break;
    case SweepEventType::SweepStarted:
    case SweepEventType::SweepEnded:
      break;  // the command prints its own first and last lines
  }
  std::fflush(stdout);
}

void printTable(const experiment::SweepRunner& runner) {
  const auto& state = runner.state();
  const auto& spec = runner.spec();
  std::vector<const experiment::Trial*> order;
  for (const auto& t : state.trials)
    order.push_back(&t);
  std::stable_sort(order.begin(), order.end(), [&](const auto* a, const auto* b) {
    const double x = a->objective(), y = b->objective();
    if (std::isnan(x)) return false;
    if (std::isnan(y)) return true;
    return spec.maximize ? x > y : x < y;
  });
  std::printf("%-6s %-10s %-7s %-10s %-8s %s\n", "trial", "status", "epochs", "objective", "time",
              "settings");
  for (const auto* t : order) {
    std::printf("%-6lld %-10s %-7s %-10s %-8s %s\n", static_cast<long long>(t->id),
                experiment::trialStatusName(t->status).c_str(),
                (std::to_string(t->epochsDone) + "/" + std::to_string(t->maxEpochs)).c_str(),
                score(std::isfinite(t->objective()) ? Json(t->objective()) : Json()).c_str(),
                duration(t->seconds).c_str(),
                paramsText(experiment::assignmentJson(t->params)).c_str());
  }
}

/// Makes the sweep folder for PROJECT's sweep section, passing the trials --limit-train and
/// --limit-val; nullopt when the project is not trainable.
std::optional<std::string> createSweepFolder(const Args& args, const Registries& registries,
                                             experiment::SweepOptions& options) {
  const std::string& path = args.one("PROJECT");
  if (args.option("--limit-train") != "") {
    options.trainArgs.push_back("--limit-train");
    options.trainArgs.push_back(std::to_string(args.integer("--limit-train", 0, 1, 1LL << 40)));
  }
  if (args.option("--limit-val") != "") {
    options.trainArgs.push_back("--limit-val");
    options.trainArgs.push_back(std::to_string(args.integer("--limit-val", 0, 1, 1LL << 40)));
  }
  resolve::ResolvedProject resolved;
  if (!loadTrainable(path, registries, resolved)) return std::nullopt;
  if (!resolved.sweep)
    throw Error(path + ": the project has no sweep section (see README, Experiments)");
  return experiment::SweepRunner::create(resolved.loaded, *resolved.sweep, options);
}

/// Refuses a project, limits or --out beside --resume: a resumed sweep keeps its own.
void checkSweepResumeArgs(const Args& args) {
  if (!args.positional().empty())
    throw UsageError{"--resume DIR continues a sweep; give no project with it"};
  if (args.option("--limit-train") != "" || args.option("--limit-val") != "" ||
      args.option("--out") != "")
    throw UsageError{"--resume keeps the sweep's own limits and folder"};
}

/// The sweep's plan on the terminal: its trials, ASHA rungs, parallelism, objective and folder.
void printSweepPlan(const experiment::SweepRunner& runner, const std::string& dir) {
  const auto& spec = runner.spec();
  const Json& train = runner.baseProject().train;
  const bool given =
      train.is_object() && train.contains("epochs") && train["epochs"].is_number_integer();
  const auto rungs = experiment::ashaRungs(
      spec.asha, given ? train["epochs"].get<std::int64_t>() : train::TrainOptions{}.epochs);
  std::string rungText;
  for (const auto r : rungs)
    rungText += (rungText.empty() ? "" : ", ") + std::to_string(r);
  std::printf(
      "sweep %s: %lld trials (%s%s), %lld at a time, %d threads each; objective %s "
      "(%s)\nfolder %s\n",
      spec.name.c_str(), static_cast<long long>(experiment::plannedTrials(spec)),
      spec.method.c_str(), rungs.empty() ? "" : (", ASHA rungs at epochs " + rungText).c_str(),
      static_cast<long long>(runner.state().parallel), runner.state().threadsPerTrial,
      spec.objective.c_str(), spec.maximize ? "max" : "min", dir.c_str());
  std::fflush(stdout);
}

/// Runs the trials, each event printed (or written as a JSON line), with SIGINT and SIGTERM
/// asking the sweep to stop (the previous handlers are put back); whether it finished.
bool runSweepTrials(experiment::SweepRunner& runner, bool json) {
  g_sweepInterrupted = false;
  auto previousInt = std::signal(SIGINT, onSweepInterrupt);
  auto previousTerm = std::signal(SIGTERM, onSweepInterrupt);
  bool finished = false;
  try {
    finished = runner.run(
        [json](const experiment::SweepEvent& e) {
          if (json) {
            std::fputs((e.toJson().dump() + "\n").c_str(), stdout);
            std::fflush(stdout);
          } else {
            printEvent(e);
          }
        },
        &g_sweepInterrupted);
  } catch (...) {
    std::signal(SIGINT, previousInt);
    std::signal(SIGTERM, previousTerm);
    throw;
  }
  std::signal(SIGINT, previousInt);
  std::signal(SIGTERM, previousTerm);
  return finished;
}

/// The closing lines on the terminal: the trials' table, the counts, the best trial and, when
/// interrupted, how to resume.
void printSweepSummary(const experiment::SweepRunner& runner, const experiment::Trial* best,
                       bool finished, const std::string& dir) {
  const auto& state = runner.state();
  const auto& spec = runner.spec();
  std::int64_t epochs = 0, completed = 0, stopped = 0, failed = 0;
  for (const auto& t : state.trials) {
    epochs += t.epochsDone;
    completed += t.status == experiment::TrialStatus::Completed;
    stopped += t.status == experiment::TrialStatus::Stopped;
    failed += t.status == experiment::TrialStatus::Failed;
  }
  std::printf("\n");
  printTable(runner);
  std::printf(
      "\nsweep %s in %s: %zu trials (%lld completed, %lld stopped early, %lld failed), "
      "%lld epochs trained in all\n",
      finished ? "finished" : "interrupted", duration(state.elapsedSeconds).c_str(),
      state.trials.size(), static_cast<long long>(completed), static_cast<long long>(stopped),
      static_cast<long long>(failed), static_cast<long long>(epochs));
  if (best) {
    std::printf("best: trial %lld, %s %.4f after %lld epochs: %s\n",
                static_cast<long long>(best->id), spec.objective.c_str(), best->objective(),
                static_cast<long long>(best->epochsDone),
                paramsText(experiment::assignmentJson(best->params)).c_str());
  }
  if (!finished) std::printf("resume with: netsmith-cli sweep --resume %s\n", dir.c_str());
}

}  // namespace

int runSweep(const std::vector<std::string>& words, const RegistriesPtr& registries) {
  const Args args = commandArgs("sweep", words);
  const bool json = args.has("--json");
  experiment::SweepOptions options;
  options.registries = registries;
  options.program = selfExecutable();
  if (options.program.empty()) throw Error("cannot find this program's path to start trials");
  options.outRoot = args.option("--out", "sweeps");
  options.parallel = args.integer("--parallel", 0, 1, 64);
  options.threadsPerTrial = static_cast<int>(args.integer("--threads", 0, 1, 4096));
  const std::string applyBest = args.option("--apply-best");
  if (!applyBest.empty() && std::filesystem::exists(applyBest) && !args.has("--force"))
    throw UsageError{applyBest + " exists; give --force to replace it"};

  std::string dir = args.option("--resume");
  if (dir.empty()) {
    const auto created = createSweepFolder(args, *registries, options);
    if (!created) return kExitInvalid;
    dir = *created;
  } else {
    checkSweepResumeArgs(args);
  }

  experiment::SweepRunner runner(dir, options);
  const auto& spec = runner.spec();
  if (!json) printSweepPlan(runner, dir);
  const bool finished = runSweepTrials(runner, json);

  const auto& state = runner.state();
  const auto* best = experiment::bestTrial(state, spec);
  if (!json) printSweepSummary(runner, best, finished, dir);
  if (!applyBest.empty()) {
    if (!best) throw Error("no trial has a score yet; nothing to write to " + applyBest);
    writeFileAtomically(applyBest, runner.trialProjectJson(best->id).dump(2) + "\n");
    if (!json)
      std::printf("wrote %s (trial %lld's settings)\n", applyBest.c_str(),
                  static_cast<long long>(best->id));
  }
  return finished ? kExitOk : kExitInterrupted;
}

}  // namespace netsmith::cli
