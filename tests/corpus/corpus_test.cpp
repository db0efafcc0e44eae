// The bad-input corpus: projects, data files, checkpoints and flags that someone else could hand
// a user, generated here at test time (nothing binary is committed). Every case runs the real
// netsmith-cli and must end with its expected exit code, a message that names the place, and
// none of the texts that mean a crash or a raw library exception.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "../cli/cli_runner.h"
#include "../core/train_fixtures.h"
#include "common/file_util.h"
#include "common/json.h"

using netsmith::Json;
using netsmith::testutil::runCli;
using netsmith::testutil::TempDir;
namespace fs = std::filesystem;

namespace {

/// What a case does to the blob project (a valid, tiny, trainable project).
struct Case {
  std::string name;
  std::function<std::string(const TempDir& dir, const std::string& project)> make;  ///< args
  std::vector<int> exits;  ///< acceptable exit codes
  std::string phrase;      ///< part of the message ("" when the exit code says it all)
};

/// A step of a JSON path: an object key or an array index.
struct Step {
  std::string key;
  int index = -1;
};
using Path = std::vector<Step>;

std::string pathText(const Path& path) {
  std::string out;
  for (const auto& s : path)
    out += s.index >= 0 ? "[" + std::to_string(s.index) + "]" : (out.empty() ? "" : ".") + s.key;
  return out;
}

Json& at(Json& j, const Path& path) {
  Json* p = &j;
  for (const auto& s : path)
    p = s.index >= 0 ? &(*p)[std::size_t(s.index)] : &(*p)[s.key];
  return *p;
}

/// The words that mean something escaped: a crash, an abort, a raw exception's text.
const char* kRawTexts[] = {"json.exception",   "c10::",         "terminate called", "Segmentation",
                           "std::bad_alloc",   "basic_string",  "what():",          "Aborted",
                           "filesystem error", "cv::Exception", "Traceback"};

enum class Kind { Int, Real, Text, Object, List };

/// Values that a key of `kind` must refuse.
std::vector<std::pair<std::string, Json>> wrongFor(Kind kind) {
  std::vector<std::pair<std::string, Json>> all{{"text", "x"},
                                                {"list", Json::array()},
                                                {"object", Json::object()},
                                                {"bool", true},
                                                {"int", 5},
                                                {"real", 2.5}};
  std::vector<std::pair<std::string, Json>> out;
  for (auto& [name, v] : all) {
    const bool fits = (kind == Kind::Int && name == "int") ||
                      (kind == Kind::Real && (name == "int" || name == "real")) ||
                      (kind == Kind::Text && name == "text") ||
                      (kind == Kind::Object && name == "object") ||
                      (kind == Kind::List && name == "list");
    if (!fits) out.emplace_back(name, v);
  }
  if (kind == Kind::Int || kind == Kind::Real) out.emplace_back("negative", -7);
  if (kind == Kind::Int) out.emplace_back("huge", 1e300);  // not a whole number
  return out;
}

Path P(std::initializer_list<Step> steps) {
  return Path(steps);
}

/// Project cases: each key below, set to each value its kind must refuse; `validate` exits 2
/// and names the key.
void addProjectCases(std::vector<Case>& cases) {
  const std::vector<std::pair<Path, Kind>> keys{
      {P({{"name"}}), Kind::Text},
      {P({{"model"}, {"input"}, {"channels"}}), Kind::Int},
      {P({{"model"}, {"input"}, {"height"}}), Kind::Int},
      {P({{"model"}, {"input"}, {"width"}}), Kind::Int},
      {P({{"model"}, {"nodes"}, {"", 1}, {"params"}, {"out_channels"}}), Kind::Int},
      {P({{"model"}, {"nodes"}, {"", 1}, {"params"}, {"kernel_size"}}), Kind::Int},
      {P({{"model"}, {"nodes"}, {"", 4}, {"params"}, {"kernel_size"}}), Kind::Int},
      {P({{"model"}, {"nodes"}, {"", 6}, {"params"}, {"p"}}), Kind::Real},
      {P({{"model"}, {"nodes"}, {"", 7}, {"params"}, {"out_features"}}), Kind::Int},
      {P({{"model"}, {"nodes"}, {"", 1}, {"op"}}), Kind::Text},
      {P({{"model"}, {"nodes"}, {"", 1}, {"inputs"}}), Kind::List},
      {P({{"data"}, {"train"}}), Kind::Object},
      {P({{"data"}, {"train"}, {"format"}}), Kind::Text},
      {P({{"data"}, {"train"}, {"images"}}), Kind::Text},
      {P({{"data"}, {"validation"}, {"fraction"}}), Kind::Real},
      {P({{"data"}, {"classes"}}), Kind::List},
      {P({{"train"}, {"epochs"}}), Kind::Int},
      {P({{"train"}, {"batch_size"}}), Kind::Int},
      {P({{"train"}, {"seed"}}), Kind::Int},
      {P({{"train"}, {"threads"}}), Kind::Int},
      {P({{"train"}, {"workers"}}), Kind::Int},
      {P({{"train"}, {"clip_grad_value"}}), Kind::Real},
      {P({{"train"}, {"keep_checkpoints"}}), Kind::Int},
      {P({{"train"}, {"grad_accumulation"}}), Kind::Int},
      {P({{"train"}, {"clip_grad_norm"}}), Kind::Real},
      {P({{"train"}, {"label_smoothing"}}), Kind::Real},
      {P({{"train"}, {"optimizer"}, {"lr"}}), Kind::Real},
      {P({{"train"}, {"optimizer"}, {"type"}}), Kind::Text},
      {P({{"train"}, {"schedule"}, {"type"}}), Kind::Text},
      {P({{"train"}, {"amp"}}), Kind::Text},
      {P({{"train"}, {"nan_policy"}}), Kind::Text},
      {P({{"train"}, {"device"}}), Kind::Text},
  };
  for (const auto& [path, kind] : keys) {
    const std::string where = pathText(path);
    // A node's problems are named by the node's id, the rest by their path.
    std::string phrase = path.size() > 2 && path[1].key == "nodes"
                             ? std::vector<std::string>{"input", "conv", "bn",   "relu",
                                                        "pool",  "flat", "drop", "fc"}[std::size_t(
                                   path[2].index)]
                             : path.back().key;
    for (const auto& [valueName, value] : wrongFor(kind)) {
      cases.push_back({"project_" + where + "_" + valueName,
                       [path = path, value = value](const TempDir& dir, const std::string& base) {
                         Json j = Json::parse(netsmith::readTextFile(base));
                         at(j, path) = value;
                         const std::string file = dir.file("case.netsmith.json");
                         std::ofstream(file) << j.dump(1);
                         return "validate " + file;
                       },
                       {2},
                       phrase});
    }
  }
}

/// Whole-file cases: broken JSON, the wrong document, absurd nesting and sizes.
void addFileCases(std::vector<Case>& cases) {
  const std::vector<std::tuple<std::string, std::string, std::string>> files{
      {"empty", "", "JSON syntax error"},
      {"truncated", R"({"format": "netsmith-project", "version": 1, "model": {)",
       "JSON syntax error"},
      {"array", "[1, 2, 3]", "not a Netsmith project"},
      {"number", "42", "not a Netsmith project"},
      {"wrong_format", R"({"format": "onnx", "version": 1})", "not a Netsmith project"},
      {"newer_version", R"({"format": "netsmith-project", "version": 99})", "newer Netsmith"},
      {"version_text", R"({"format": "netsmith-project", "version": "1"})", "\"version\""},
      {"nested", "{\"a\": " + std::string(5000, '[') + std::string(5000, ']') + "}",
       "nested deeper than 128 levels"},
      {"number_overflow", R"({"format": "netsmith-project", "version": 1, "x": 1e400})",
       "too large for a double"},
      {"binary", std::string("\x00\x01\x02\xff\xfe", 5), "JSON syntax error"},
      {"bad_utf8", "{\"format\": \"netsmith-project\", \"name\": \"\xff\xfe\"}",
       "JSON syntax error"},
  };
  for (const auto& [name, text, phrase] : files) {
    cases.push_back({"file_" + name,
                     [text = text](const TempDir& dir, const std::string&) {
                       std::ofstream(dir.file("f.netsmith.json"), std::ios::binary) << text;
                       return "validate " + dir.file("f.netsmith.json");
                     },
                     {2},
                     phrase});
  }
  for (const std::string special : {"/dev/zero", "/dev/null", "/"}) {
    cases.push_back(
        {"file_special" + std::to_string(cases.size()),
         [special](const TempDir&, const std::string&) { return "validate " + special; },
         {2},
         special});
  }
}

/// Data cases: data files replaced by something else, each read by data-stats.
void addDataCases(std::vector<Case>& cases) {
  const std::vector<std::tuple<std::string, std::string, std::string>> replacements{
      {"train-images.idx", "", "too short"},
      {"train-images.idx", "not an idx file at all", "not an IDX image file"},
      {"train-labels.idx", "", "too short"},
      {"train-labels.idx", std::string("\x00\x00\x08\x01\x7f\xff\xff\xff", 8), "labels"},
      {"train-images.idx", std::string("\x00\x00\x08\x03\x00\x00\x00\x10\x00\x00\x00\x00", 12),
       "too short"},
      {"train-images.idx",
       std::string("\x00\x00\x08\x03\x00\x00\x01\x00\x00\x00\x00\x10\x00\x00\x00\x10", 16),
       "truncated"},
      {"train-images.idx",
       std::string("\x00\x00\x08\x03\xff\xff\xff\xff\xff\xff\xff\xff", 12) + std::string(64, 'x'),
       "implausible image size"},
      {"test-images.idx", "", "too short"},
      {"train-images.idx", std::string("\x1f\x8b\x08\x00garbage", 11), "too short"},
  };
  for (std::size_t i = 0; i < replacements.size(); ++i) {
    const auto& [file, bytes, phrase] = replacements[i];
    cases.push_back({"data_" + std::to_string(i) + "_" + file,
                     [file = file, bytes = bytes](const TempDir& dir, const std::string& base) {
                       std::ofstream(dir.file(file), std::ios::binary | std::ios::trunc) << bytes;
                       return "data-stats " + base;
                     },
                     {2},
                     phrase});
  }
  const std::vector<std::pair<std::string, std::string>> missing{
      {"train-images.idx", "file not found"}, {"test-labels.idx", "file not found"}};
  for (const auto& [file, phrase] : missing) {
    cases.push_back({"data_missing_" + file,
                     [file = file](const TempDir& dir, const std::string& base) {
                       fs::remove(dir.file(file));
                       return "data-stats " + base;
                     },
                     {2},
                     phrase});
  }
}

/// Received-folder cases: a run folder and a sweep folder from someone else, each with a link
/// planted where Netsmith writes; ids and counts built to exhaust memory or time; a control
/// character in a path. (received_folders_test and bomb_input_test check that nothing outside
/// changes and the time and memory each takes.)
void addReceivedCases(std::vector<Case>& cases) {
  for (const std::string planted :
       {"metrics.csv", "events.jsonl", "train.log", ".lock", "checkpoints", "exports"}) {
    cases.push_back(
        {"received_run_link_" + planted,
         [planted](const TempDir& dir, const std::string& base) {
           runCli("train " + base + " --stop-at-epoch 1 --no-test --out " + dir.file("runs"));
           std::string run;
           for (const auto& e : fs::directory_iterator(dir.file("runs")))
             run = e.path().string();
           fs::create_directories(dir.file("victim-folder"));
           std::ofstream(dir.file("victim")) << "precious\n";
           if (fs::exists(run + "/checkpoints/last.safetensors"))
             fs::copy_file(run + "/checkpoints/last.safetensors",
                           dir.file("victim-folder/last.safetensors"),
                           fs::copy_options::overwrite_existing);
           const bool folder = planted == "checkpoints" || planted == "exports";
           fs::remove_all(run + "/" + planted);
           fs::create_symlink(dir.file(folder ? "victim-folder" : "victim"), run + "/" + planted);
           return "train " + base + " --no-test --resume " + run + "/checkpoints/last.safetensors";
         },
         {2},
         "is a symbolic link"});
  }
  // A sweep folder with no trial started yet, then something planted in it.
  const auto sweepFolder = [](const TempDir& dir, const std::string& base) {
    Json project = Json::parse(std::ifstream(base));
    for (const char* split : {"train", "test"})
      for (const char* key : {"images", "labels"})
        project["data"][split][key] = dir.file(project["data"][split][key].get<std::string>());
    project["sweep"] = Json::parse(R"({"method": "grid", "params": [
        {"path": "train.optimizer.lr", "choice": [0.01]}]})");
    const std::string sweep = dir.file("sweep");
    fs::create_directories(sweep + "/trials");
    std::ofstream(sweep + "/base.netsmith.json") << project.dump();
    std::ofstream(sweep + "/sweep.json")
        << R"({"format": "netsmith-sweep", "version": 1, "name": "s", "parallel": 1,
              "trials": []})";
    fs::create_directories(dir.file("victim-folder"));
    std::ofstream(dir.file("victim")) << "precious\n";
    return sweep;
  };
  cases.push_back({"received_sweep_trial_folder_link",
                   [sweepFolder](const TempDir& dir, const std::string& base) {
                     const auto sweep = sweepFolder(dir, base);
                     fs::create_directory_symlink(dir.file("victim-folder"),
                                                  sweep + "/trials/t0000");
                     return "sweep --resume " + sweep;
                   },
                   {2},
                   "is a symbolic link"});
  cases.push_back({"received_sweep_trials_link",
                   [sweepFolder](const TempDir& dir, const std::string& base) {
                     const auto sweep = sweepFolder(dir, base);
                     fs::remove(sweep + "/trials");
                     fs::create_directory_symlink(dir.file("victim-folder"), sweep + "/trials");
                     return "sweep --resume " + sweep;
                   },
                   {2},
                   "is a symbolic link"});
  cases.push_back({"received_sweep_log_link",
                   [sweepFolder](const TempDir& dir, const std::string& base) {
                     const auto sweep = sweepFolder(dir, base);
                     fs::create_directories(sweep + "/trials/t0000");
                     fs::create_symlink(dir.file("victim"), sweep + "/trials/t0000/stderr.log");
                     return "sweep --resume " + sweep;
                   },
                   {1, 2},
                   "stderr.log: is a symbolic link"});
  cases.push_back({"received_sweep_run_dir_outside",
                   [sweepFolder](const TempDir& dir, const std::string& base) {
                     const auto sweep = sweepFolder(dir, base);
                     std::ofstream(sweep + "/sweep.json")
                         << R"({"format": "netsmith-sweep", "version": 1, "name": "s",
                               "parallel": 1, "trials": [{"id": 0, "status": "paused",
                               "max_epochs": 1, "params": {"train.optimizer.lr": 0.01},
                               "run_dir": "../../victim-folder"}]})";
                     return "sweep --resume " + sweep;
                   },
                   {2},
                   "is not a folder of this trial"});
  // Ids and counts.
  const std::vector<std::tuple<std::string, std::string, std::string>> projects{
      {"id_129", R"({"id": ")" + std::string(129, 'a') + R"(", "op": "ReLU", "inputs": ["input"]})",
       "an id of 129 characters"},
      {"id_million", R"({"id": ")" + std::string(1000000, 'a') + R"(", "op": "ReLU"})",
       "an id of 1000000 characters"},
      {"input_million",
       R"({"id": "r", "op": "ReLU", "inputs": [")" + std::string(1000000, 'b') + R"("]})",
       "an id of 1000000 characters"},
  };
  for (const auto& [name, node, phrase] : projects) {
    cases.push_back({"bomb_" + name,
                     [node = node](const TempDir& dir, const std::string& base) {
                       Json project = Json::parse(std::ifstream(base));
                       project["model"]["nodes"].push_back(Json::parse(node));
                       std::ofstream(dir.file("p.netsmith.json")) << project.dump();
                       return "validate " + dir.file("p.netsmith.json");
                     },
                     {2},
                     phrase});
  }
  cases.push_back(
      {"bomb_idx_count",
       [](const TempDir& dir, const std::string& base) {
         // 2^24 + 1 images of 1x1: one more than an IDX file may hold.
         std::ofstream(dir.file("train-images.idx"), std::ios::binary | std::ios::trunc)
             << std::string("\x00\x00\x08\x03\x01\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x01", 16);
         return "data-stats " + base;
       },
       {2},
       "an IDX file may hold at most 16777216"});
  cases.push_back({"path_control_character",
                   [](const TempDir& dir, const std::string& base) {
                     Json project = Json::parse(std::ifstream(base));
                     project["data"]["train"]["images"] = "a\nrm -rf ~\x1b[2J";
                     std::ofstream(dir.file("p.netsmith.json")) << project.dump();
                     return "validate " + dir.file("p.netsmith.json");
                   },
                   {2},
                   "data.train.images: contains a control character (\\n)"});
}

/// Flag cases: absurd values of every command's options.
void addFlagCases(std::vector<Case>& cases) {
  const std::vector<std::pair<std::string, std::string>> flags{
      {"train {P} --epochs 0", "--epochs"},
      {"train {P} --epochs -1", "--epochs"},
      {"train {P} --epochs abc", "--epochs"},
      {"train {P} --epochs 1e9", "--epochs"},
      {"train {P} --epochs 999999999", "--epochs"},
      {"train {P} --batch-size 0", "--batch-size"},
      {"train {P} --batch-size -5", "--batch-size"},
      {"train {P} --batch-size x", "--batch-size"},
      {"train {P} --lr 0", "--lr"},
      {"train {P} --lr -1", "--lr"},
      {"train {P} --lr nan", "--lr"},
      {"train {P} --lr inf", "--lr"},
      {"train {P} --threads -3", "--threads"},
      {"train {P} --seed -1", "--seed"},
      {"train {P} --nproc 0", "--nproc"},
      {"train {P} --nproc 100000", "--nproc"},
      {"train {P} --dist-timeout 0", "--dist-timeout"},
      {"train {P} --limit-train 0", "--limit-train"},
      {"train {P} --limit-val -1", "--limit-val"},
      {"train {P} --limit-test x", "--limit-test"},
      {"train {P} --max-batches -1", "--max-batches"},
      {"train {P} --device tpu", "train.device"},
      {"train {P} --device cuda:x", "train.device"},
      {"train {P} --resume", "--resume needs a value"},
      {"train {P} --resume /nonexistent.safetensors", "nonexistent.safetensors"},
      {"train {P} --init-from /nonexistent.safetensors", "nonexistent.safetensors"},
      {"train {P} --resume {P} ", "safetensors"},
      {"train {P} --bogus", "unknown option --bogus"},
      {"train {P} --epoch 2", "did you mean --epochs"},
      {"train", "PROJECT"},
      {"train {P} {P}", "PROJECT"},
      {"lr-schedule {P} --steps-per-epoch -1", "--steps-per-epoch"},
      {"lr-schedule {P} --epochs 100000 --steps-per-epoch 100000", "lr-schedule prints at most"},
      {"lr-find {P} --start 0", "--start"},
      {"lr-find {P} --start 1 --end 0.1", "lr-find"},
      {"lr-find {P} --steps 1", "--steps"},
      {"eval {P}", "blobs.netsmith.json"},
      {"eval /nonexistent.safetensors", "nonexistent"},
      {"eval {P} --split validation", "split"},
      {"export {P}", "blobs.netsmith.json"},
      {"summary {P} --batch-size 0", "--batch-size"},
      {"data-stats", "PROJECT"},
      {"preview-aug {P}", "--out"},
      {"preview-aug {P} --out /nonexistent/dir/x.png", "cannot write"},
      {"preview-aug {P} --out {D}/x.png --samples 0", "--samples"},
      {"env --threads -1", "--threads"},
      {"trian {P}", "did you mean \"train\""},
      {"", "usage"},
  };
  for (std::size_t i = 0; i < flags.size(); ++i) {
    const auto& [line, phrase] = flags[i];
    cases.push_back({"flags_" + std::to_string(i),
                     [line = line](const TempDir& dir, const std::string& base) {
                       std::string out = line;
                       for (std::size_t at; (at = out.find("{P}")) != std::string::npos;)
                         out.replace(at, 3, base);
                       for (std::size_t at; (at = out.find("{D}")) != std::string::npos;)
                         out.replace(at, 3, dir.path().string());
                       return out;
                     },
                     {2},
                     phrase});
  }
}

std::vector<Case> corpus() {
  std::vector<Case> cases;
  addProjectCases(cases);
  addFileCases(cases);
  addDataCases(cases);
  addFlagCases(cases);
  addReceivedCases(cases);
  return cases;
}

const std::vector<Case>& allCases() {
  static const std::vector<Case> cases = corpus();
  return cases;
}

}  // namespace

class BadInput : public ::testing::TestWithParam<std::size_t> {};

TEST_P(BadInput, EndsWithItsExitCodeAndANamedMessage) {
  const Case& c = allCases()[GetParam()];
  TempDir dir;
  const std::string project = netsmith::testutil::writeTrainProject(dir);
  const std::string args = c.make(dir, project);
  // Bounded: a hang is a failure too (timeout's exit status 124).
  const auto r =
      netsmith::testutil::runShell("timeout 60 " + std::string(NETSMITH_CLI) + " " + args);
  EXPECT_NE(r.exitCode, 124) << c.name << ": did not end within 60 s";
  EXPECT_TRUE(std::find(c.exits.begin(), c.exits.end(), r.exitCode) != c.exits.end())
      << c.name << ": exit " << r.exitCode << "\n"
      << r.output.substr(0, 2000);
  if (!c.phrase.empty()) {
    EXPECT_NE(r.output.find(c.phrase), std::string::npos)
        << c.name << ": no \"" << c.phrase << "\" in\n"
        << r.output.substr(0, 2000);
  }
  for (const char* raw : kRawTexts)
    EXPECT_EQ(r.output.find(raw), std::string::npos)
        << c.name << ": raw text \"" << raw << "\" in\n"
        << r.output.substr(0, 2000);
}

INSTANTIATE_TEST_SUITE_P(Corpus, BadInput, ::testing::Range<std::size_t>(0, allCases().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& info) {
                           std::string name = allCases()[info.param].name;
                           for (auto& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

TEST(BadInputCorpus, HoldsAtLeast250Cases) {
  EXPECT_GE(allCases().size(), 250u);
}
