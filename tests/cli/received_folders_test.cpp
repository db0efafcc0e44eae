// Run and sweep folders from someone else, with links planted where Netsmith writes: the real
// netsmith-cli resumes them, and no file or folder outside them changes. Names with control
// characters never start a line of their own in what is printed or logged.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../core/train_fixtures.h"
#include "cli_runner.h"
#include "common/file_util.h"
#include "common/json.h"
#include "common/subprocess.h"
#include "run/events.h"
#include "run/run_writer.h"

using netsmith::Json;
using netsmith::testutil::runCli;
using netsmith::testutil::TempDir;
namespace fs = std::filesystem;

namespace {

/// Every file under `dir` with its contents: a folder that must not change, before and after.
std::map<std::string, std::string> snapshot(const std::string& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    out[e.path().string()] =
        e.is_regular_file() ? netsmith::readTextFile(e.path().string()) : "<folder>";
  return out;
}

/// A run stopped after its first of two epochs: RUN/checkpoints/last.safetensors resumes it.
struct StoppedRun {
  std::string project;
  std::string runDir;
};

StoppedRun stoppedRun(const TempDir& dir) {
  StoppedRun r;
  r.project = netsmith::testutil::writeTrainProject(dir, {{"epochs", 2}}, 64);
  const auto out =
      runCli("train " + r.project + " --stop-at-epoch 1 --no-test --out " + dir.file("runs"));
  EXPECT_EQ(out.exitCode, 0) << out.output;
  for (const auto& e : fs::directory_iterator(dir.file("runs")))
    r.runDir = e.path().string();
  return r;
}

std::string resumeCommand(const StoppedRun& r) {
  return "train " + r.project + " --no-test --resume " + r.runDir + "/checkpoints/last.safetensors";
}

/// A sweep folder as `sweep --resume` finds it: its base project and a record with no trial
/// started yet (the runner starts trial 0 in trials/t0000).
std::string sweepFolder(const TempDir& dir, const std::string& name) {
  const std::string project = netsmith::testutil::writeTrainProject(dir, {{"epochs", 1}}, 64);
  Json base = Json::parse(netsmith::readTextFile(project));
  for (const char* split : {"train", "test"})
    for (const char* key : {"images", "labels"})
      base["data"][split][key] = dir.file(base["data"][split][key].get<std::string>());
  base["sweep"] = Json::parse(R"({"method": "grid", "params": [
      {"path": "train.optimizer.lr", "choice": [0.01]}]})");
  const std::string sweep = dir.file(name);
  fs::create_directories(sweep + "/trials");
  std::ofstream(sweep + "/base.netsmith.json") << base.dump(2);
  std::ofstream(sweep + "/sweep.json")
      << Json{{"format", "netsmith-sweep"}, {"version", 1},
              {"name", "planted"},          {"parallel", 1},
              {"threads_per_trial", 1},     {"trials", Json::array()}}
             .dump(2);
  return sweep;
}

}  // namespace

// Each file the run writer creates or appends to, the lock, and each folder it writes into,
// planted as a link to a file or folder outside: the resume is refused by name and the outside
// is unchanged.
TEST(ReceivedFolders, LinksPlantedInARunFolderChangeNothingOutsideIt) {
  TempDir dir;
  const auto run = stoppedRun(dir);
  ASSERT_FALSE(run.runDir.empty());
  fs::create_directories(dir.file("outside/folder"));
  std::ofstream(dir.file("outside/victim.txt")) << "precious\n";
  fs::copy_file(run.runDir + "/checkpoints/last.safetensors",
                dir.file("outside/folder/last.safetensors"));
  const auto before = snapshot(dir.file("outside"));
  for (const std::string planted :
       {".lock", "train.log", "metrics.csv", "events.jsonl", "checkpoints", "exports"}) {
    SCOPED_TRACE(planted);
    const std::string received = dir.file("received-" + planted);
    fs::copy(run.runDir, received, fs::copy_options::recursive);
    const std::string where = received + "/" + planted;
    fs::remove_all(where);
    const bool folder = planted == "checkpoints" || planted == "exports";
    fs::create_symlink(dir.file(folder ? "outside/folder" : "outside/victim.txt"), where);
    const auto r = runCli(resumeCommand({run.project, received}));
    EXPECT_EQ(r.exitCode, 2) << r.output;
    EXPECT_NE(r.output.find(where + ": is a symbolic link"), std::string::npos) << r.output;
    EXPECT_EQ(snapshot(dir.file("outside")), before);
  }
  // A hard link to a file elsewhere is the same file: refused too.
  const std::string received = dir.file("received-hardlink");
  fs::copy(run.runDir, received, fs::copy_options::recursive);
  fs::remove(received + "/metrics.csv");
  fs::create_hard_link(dir.file("outside/victim.txt"), received + "/metrics.csv");
  const auto r = runCli(resumeCommand({run.project, received}));
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("metrics.csv: has other hard links"), std::string::npos) << r.output;
  EXPECT_EQ(snapshot(dir.file("outside")), before);
  // The same folder without links resumes and finishes.
  const auto good = runCli(resumeCommand(run));
  EXPECT_EQ(good.exitCode, 0) << good.output;
}

// A FIFO where the run's log goes is refused at once (opening it for writing would wait for a
// reader for ever).
TEST(ReceivedFolders, AFifoInARunFolderIsRefusedWithoutBlocking) {
  TempDir dir;
  const auto run = stoppedRun(dir);
  fs::remove(run.runDir + "/train.log");
  ASSERT_EQ(::mkfifo((run.runDir + "/train.log").c_str(), 0644), 0);
  const auto r = netsmith::testutil::runShell("timeout 60 " + std::string(NETSMITH_CLI) + " " +
                                              resumeCommand(run));
  EXPECT_EQ(r.exitCode, 2) << r.output;  // timeout's 124 if it blocked
  EXPECT_NE(r.output.find("train.log: is not a regular file"), std::string::npos) << r.output;
}

// A sweep folder whose trial folder is a link to a folder outside, or whose trial log is a link
// to a file outside: the sweep refuses it by name, and the outside is unchanged.
TEST(ReceivedFolders, LinksPlantedInASweepFolderChangeNothingOutsideIt) {
  TempDir dir;
  fs::create_directories(dir.file("outside/folder"));
  std::ofstream(dir.file("outside/victim.txt")) << "precious\n";
  std::ofstream(dir.file("outside/folder/keep.txt")) << "mine\n";
  const auto before = snapshot(dir.file("outside"));

  const std::string a = sweepFolder(dir, "sweep-a");
  fs::create_directory_symlink(dir.file("outside/folder"), a + "/trials/t0000");
  auto r = runCli("sweep --resume " + a);
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find(a + "/trials/t0000: is a symbolic link"), std::string::npos) << r.output;
  EXPECT_EQ(snapshot(dir.file("outside")), before);

  const std::string b = sweepFolder(dir, "sweep-b");
  fs::create_directories(b + "/trials/t0000");
  fs::create_symlink(dir.file("outside/victim.txt"), b + "/trials/t0000/stderr.log");
  r = runCli("sweep --resume " + b);
  EXPECT_NE(r.exitCode, 0) << r.output;
  EXPECT_NE(r.output.find("stderr.log: is a symbolic link"), std::string::npos) << r.output;
  EXPECT_EQ(snapshot(dir.file("outside")), before);

  // The trials folder itself, and a record pointing a trial's run outside its folder.
  const std::string c = sweepFolder(dir, "sweep-c");
  fs::remove(c + "/trials");
  fs::create_directory_symlink(dir.file("outside/folder"), c + "/trials");
  r = runCli("sweep --resume " + c);
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find(c + "/trials: is a symbolic link"), std::string::npos) << r.output;
  EXPECT_EQ(snapshot(dir.file("outside")), before);

  const std::string d = sweepFolder(dir, "sweep-d");
  Json state = Json::parse(netsmith::readTextFile(d + "/sweep.json"));
  state["trials"].push_back(Json{{"id", 0},
                                 {"params", Json{{"train.optimizer.lr", 0.01}}},
                                 {"status", "paused"},
                                 {"max_epochs", 1},
                                 {"run_dir", "trials/t0000/../../../outside/folder"}});
  std::ofstream(d + "/sweep.json") << state.dump();
  r = runCli("sweep --resume " + d);
  EXPECT_EQ(r.exitCode, 2) << r.output;
  EXPECT_NE(r.output.find("run_dir: \"trials/t0000/../../../outside/folder\" is not a folder of "
                          "this trial"),
            std::string::npos)
      << r.output;
  EXPECT_EQ(snapshot(dir.file("outside")), before);
}

// A path with a newline and a command in a base project, as the issue's sender wrote it: the
// trial refuses it naming the key, and neither the sweep's output nor the trial's log has the
// command at the start of a line or the terminal escape.
TEST(ReceivedFolders, AControlCharacterInAPathNeverStartsALineOfItsOwn) {
  TempDir dir;
  const std::string a = sweepFolder(dir, "sweep-a");
  Json base = Json::parse(netsmith::readTextFile(a + "/base.netsmith.json"));
  base["data"]["train"]["images"] = "/x\ntouch " + dir.file("pwned") + "\n\x1b[2J";
  std::ofstream(a + "/base.netsmith.json") << base.dump(2);
  const auto r = runCli("sweep --resume " + a);
  const std::string trialLog = netsmith::readTextFile(a + "/trials/t0000/stderr.log");
  for (const std::string& text : {r.output, trialLog}) {
    EXPECT_NE(text.find("data.train.images: contains a control character (\\n)"), std::string::npos)
        << text;
    EXPECT_EQ(text.find("\ntouch"), std::string::npos) << text;
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  }
  EXPECT_FALSE(fs::exists(dir.file("pwned")));
  // In a log the run writes, a message with control characters stays on its line.
  const std::string runDir = dir.file("run");
  fs::create_directories(runDir);
  {
    netsmith::run::RunWriter writer(runDir, "accuracy");
    netsmith::run::TrainingEvent e;
    e.type = netsmith::run::EventType::Warning;
    e.message = "file \"a\nrm -rf ~\x1b[31m\" skipped";
    writer.onEvent(e);
  }
  const std::string log = netsmith::readTextFile(runDir + "/train.log");
  EXPECT_NE(log.find("file \"a\\nrm -rf ~\\x1b[31m\" skipped"), std::string::npos) << log;
  EXPECT_EQ(log.find("\nrm"), std::string::npos) << log;
}

// The run writer sits behind a queue that makes training wait rather than drop: delayed 50 ms
// an event, with room for 8 steps, it still writes every one of 100 steps' rows. A display's
// queue drops instead, and says how many it dropped before each step it delivers.
TEST(ReceivedFolders, ASlowRunWriterLosesNoRow) {
  using namespace netsmith;
  class Slow : public run::EventSink {
   public:
    explicit Slow(std::shared_ptr<run::EventSink> target) : m_target(std::move(target)) {}
    void onEvent(const run::TrainingEvent& e) override {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      if (m_target) m_target->onEvent(e);
      if (e.type == run::EventType::BatchEnd) {
        ++delivered;
        skipped += e.batch.skippedBefore;
      }
    }
    std::atomic<int> delivered{0};
    std::atomic<std::int64_t> skipped{0};

   private:
    std::shared_ptr<run::EventSink> m_target;
  };
  TempDir dir;
  fs::create_directories(dir.file("run"));
  auto writer = std::make_shared<run::RunWriter>(dir.file("run"), "accuracy");
  auto slowWriter = std::make_shared<Slow>(writer);
  auto display = std::make_shared<Slow>(nullptr);
  double waited = 0;
  std::int64_t dropped = 0;
  {
    run::AsyncSink records(slowWriter, run::Overflow::Wait, 8);
    run::AsyncSink chart(display, run::Overflow::DropOldestBatch, 8);
    for (run::AsyncSink* sink : {&chart, &records}) {  // as fast as a trainer sends them
      for (int step = 1; step <= 100; ++step) {
        run::TrainingEvent e;
        e.type = run::EventType::BatchEnd;
        e.batch.step = step;
        e.batch.batch = step - 1;
        sink->onEvent(e);
      }
    }
    records.flush();
    chart.flush();
    waited = records.waitedSeconds();
    dropped = chart.droppedBatchEvents();
  }
  const std::int64_t writerSkipped = slowWriter->skipped.load();
  slowWriter.reset();
  writer.reset();  // closes metrics.csv
  std::ifstream in(dir.file("run/metrics.csv"));
  std::string line;
  std::vector<std::int64_t> steps;
  while (std::getline(in, line))
    if (line.rfind("step,", 0) == 0) {
      std::stringstream ss(line);
      std::string cell;
      for (int i = 0; i < 4; ++i)
        std::getline(ss, cell, ',');
      steps.push_back(std::stoll(cell));
    }
  ASSERT_EQ(steps.size(), 100u);
  for (std::size_t i = 0; i < steps.size(); ++i)
    EXPECT_EQ(steps[i], std::int64_t(i) + 1);
  EXPECT_EQ(writerSkipped, 0);
  EXPECT_GT(waited, 2.0);  // ~92 of the events waited about 50 ms each
  EXPECT_GT(dropped, 50);
  EXPECT_EQ(display->skipped.load(), dropped);  // every dropped point is counted on screen
  EXPECT_EQ(display->delivered.load() + dropped, 100);
}

// Writing through the helpers directly: a FIFO is refused at once, a link by name; the target
// of a link is never created or changed; a child's log is opened the same way.
TEST(ReceivedFolders, TheNoFollowOpenRefusesLinksFifosAndHardLinks) {
  TempDir dir;
  std::ofstream(dir.file("victim")) << "precious\n";
  fs::create_symlink(dir.file("victim"), dir.file("link"));
  fs::create_symlink(dir.file("absent"), dir.file("dangling"));
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0644), 0);
  for (const std::string name : {"link", "dangling"}) {
    try {
      netsmith::openForAppendNoFollow(dir.file(name));
      ADD_FAILURE() << name << " was opened";
    } catch (const netsmith::Error& e) {
      EXPECT_NE(std::string(e.what()).find(name + ": is a symbolic link"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(netsmith::openForAppendNoFollow(dir.file("fifo")), netsmith::Error);
  EXPECT_FALSE(fs::exists(dir.file("absent")));
  EXPECT_EQ(netsmith::readTextFile(dir.file("victim")), "precious\n");
  netsmith::SpawnSpec spawn;
  spawn.program = "/bin/true";
  spawn.stderrPath = dir.file("link");
  EXPECT_THROW(netsmith::spawnChild(spawn), netsmith::Error);
  EXPECT_EQ(netsmith::readTextFile(dir.file("victim")), "precious\n");
  // Folders: a link to a folder is not a folder of ours; a real one is made or kept.
  fs::create_directory(dir.file("real"));
  fs::create_directory_symlink(dir.file("real"), dir.file("folder-link"));
  EXPECT_THROW(netsmith::makeRealFolder(dir.file("folder-link")), netsmith::Error);
  EXPECT_NO_THROW(netsmith::makeRealFolder(dir.file("real")));
  EXPECT_NO_THROW(netsmith::makeRealFolder(dir.file("new")));
  EXPECT_TRUE(fs::is_directory(dir.file("new")));
}
