// `netsmith-cli doctor PROJECT`: the data doctor (core/doctor/doctor.h) with a progress bar
// and a time estimate on stderr; Ctrl-C stops it, and the same command goes on from there.
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "cli/cli_args.h"
#include "cli/cli_commands.h"
#include "common/clock_text.h"
#include "common/error.h"
#include "common/file_util.h"
#include "doctor/doctor.h"
#include "ops/op_registry.h"
#include "project/project.h"

namespace netsmith::cli {

namespace {

std::atomic<int> g_doctorInterrupts{0};

void onDoctorInterrupt(int) {
  if (g_doctorInterrupts.fetch_add(1) > 0) std::_Exit(kExitInterrupted);
}

/// A bar on a terminal; otherwise a line at each stage and every 10%.
class DoctorBar {
 public:
  explicit DoctorBar(bool terminal) : m_terminal(terminal) {}
  void show(const doctor::DoctorProgress& p) {
    const int percent = int(p.fraction * 100);
    if (m_terminal) {
      const int width = 30, filled = int(p.fraction * width);
      std::fprintf(stderr, "\r[%s%s] %3d%%  %s elapsed, %s left  %-46.46s",
                   std::string(std::size_t(filled), '#').c_str(),
                   std::string(std::size_t(width - filled), '.').c_str(), percent,
                   clockText(p.seconds).c_str(), clockText(p.remaining).c_str(), p.message.c_str());
      std::fflush(stderr);
      m_dirty = true;
      return;
    }
    if (p.stage != m_stage || percent / 10 != m_tenth) {
      m_stage = p.stage;
      m_tenth = percent / 10;
      std::fprintf(stderr, "doctor: %3d%% %s (%s elapsed, %s left)\n", percent,
                   p.message.empty() ? p.stage.c_str() : p.message.c_str(),
                   clockText(p.seconds).c_str(), clockText(p.remaining).c_str());
    }
  }
  void end() {
    if (m_dirty) std::fprintf(stderr, "\n");
    m_dirty = false;
  }

 private:
  bool m_terminal;
  bool m_dirty = false;
  std::string m_stage;
  int m_tenth = -1;
};

void printSummary(const doctor::DoctorReport& r, const std::string& folder) {
  std::cout << "examined " << r.examined << " training samples";
  if (r.validationSamples) std::cout << ", " << r.validationSamples << " validation";
  if (r.testSamples) std::cout << ", " << r.testSamples << " test";
  std::cout << " in " << clockText(r.seconds) << "\n";
  if (r.unreadable) {
    std::cout << "unreadable: " << r.unreadable << " samples left out\n";
    for (std::size_t i = 0; i < r.unreadableSamples.size() && i < 10; ++i)
      std::cout << "  " << printable(r.unreadableSamples[i].sample.item) << ": "
                << printable(r.unreadableSamples[i].why) << '\n';
    if (r.unreadable > 10) std::cout << "  (" << r.unreadable - 10 << " more in doctor.json)\n";
  }
  std::cout << "leakage: " << r.leaks << (r.leaks == 1 ? " duplicate pair" : " duplicate pairs")
            << " across splits\n"
            << "duplicates: " << r.exactDuplicates << " exact, " << r.nearDuplicates
            << " near pairs\n";
  if (!r.probabilitiesFrom.empty())
    std::cout << "label errors: " << r.labelIssuesFlagged << " likely (confident learning on "
              << r.probabilitiesFrom << ")\n";
  for (std::size_t i = 0; i < r.labelIssues.size() && i < 5; ++i) {
    const auto& l = r.labelIssues[i];
    auto name = [&](std::int64_t c) {
      return c >= 0 && std::size_t(c) < r.classes.size() ? printable(r.classes[std::size_t(c)])
                                                         : std::to_string(c);
    };
    std::printf("  %s: labelled %s, looks like %s (p %.3f vs %.3f)\n",
                printable(l.sample.item).c_str(), name(l.sample.label).c_str(),
                name(l.suggested).c_str(), l.selfConfidence, l.suggestedProbability);
  }
  std::printf("balance: largest class / smallest %.2f, %.2f effective classes of %zu\n",
              r.balance.imbalanceRatio, r.balance.effectiveClasses, r.balance.counts.size());
  if (!r.balance.advice.empty()) std::cout << "  " << printable(r.balance.advice) << "\n";
  std::cout << "outliers: " << r.outliersFound << "\n";
  for (const auto& w : r.warnings)
    std::cout << "warning: " << printable(w) << "\n";
  std::cout << "report: " << printable((std::filesystem::path(folder) / "report.html").string())
            << " ("
            << "doctor.json, label_ranking.csv beside it)\n";
}

}  // namespace

int runDoctor(const std::vector<std::string>& words, const RegistriesPtr& registries) {
  const Args args = commandArgs("doctor", words);
  if (args.has("--schema")) {
    std::cout << doctor::doctorReportSchema().dump(2) << "\n";
    return kExitOk;
  }
  const std::string& path = args.one("PROJECT");
  resolve::ResolvedProject resolved;
  if (!loadValid(path, *registries, resolved)) return kExitInvalid;
  auto& loaded = resolved.loaded;
  if (loaded.project.data.is_object() && loaded.project.data.empty())
    throw Error(path + ": the project has no data section; nothing to examine");

  doctor::DoctorOptions options;
  options.registries = registries;
  options.folder = args.option("--out", doctor::defaultDoctorFolder(path));
  options.folds = int(args.integer("--folds", 3, 2, 20));
  options.epochs = args.integer("--epochs", 2, 1, 1000);
  options.limit = args.integer("--limit", 0, 1, 1LL << 40);
  options.seed = std::uint64_t(args.integer("--seed", 0, 0, 1LL << 62));
  options.checkpoint = args.option("--checkpoint");
  options.labels = !args.has("--no-labels");
  DoctorBar bar(::isatty(STDERR_FILENO) != 0);
  options.progress = [&](const doctor::DoctorProgress& p) {
    bar.show(p);
    return g_doctorInterrupts.load() == 0;
  };
  options.log = [&](const std::string& line) {
    bar.end();
    std::cerr << "doctor: " << line << "\n";
  };
  g_doctorInterrupts = 0;
  auto previous = std::signal(SIGINT, onDoctorInterrupt);
  auto previousTerm = std::signal(SIGTERM, onDoctorInterrupt);
  doctor::DoctorReport report;
  try {
    report = doctor::runDoctor(loaded, options);
  } catch (...) {
    bar.end();
    std::signal(SIGINT, previous);
    std::signal(SIGTERM, previousTerm);
    throw;
  }
  bar.end();
  std::signal(SIGINT, previous);
  std::signal(SIGTERM, previousTerm);
  if (args.has("--json"))
    std::cout << report.toJson().dump(1) << "\n";
  else
    printSummary(report, options.folder);
  if (report.stopped) {
    std::cerr << "stopped: run the same command again to go on from here (" << options.folder
              << " keeps the finished folds)\n";
    return kExitInterrupted;
  }
  return kExitOk;
}

}  // namespace netsmith::cli
