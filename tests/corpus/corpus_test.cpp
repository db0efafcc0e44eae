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

#include <sys/stat.h>

#include <opencv2/imgcodecs.hpp>

#include "../cli/cli_runner.h"
#include "../core/test_support.h"
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
const char* kRawTexts[] = {"json.exception",
                           "c10::",
                           "terminate called",
                           "Segmentation",
                           "std::bad_alloc",
                           "basic_string",
                           "what():",
                           "Aborted",
                           "filesystem error",
                           "cv::Exception",
                           "Traceback",
                           "\nINJECTED",
                           "\x1b"};

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
      {"eval {P} --split holdout", "split"},
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

/// The detection example's project (a 10-class head) reading a COCO file written by `coco`
/// over `images` 64x64 grey PNGs named 0.png, 1.png, ...; returns the project's path.
std::string cocoProject(const TempDir& dir, const std::string& coco, int images = 2) {
  fs::create_directories(dir.file("coco/images"));
  for (int i = 0; i < images; ++i)
    cv::imwrite(dir.file("coco/images/" + std::to_string(i) + ".png"),
                cv::Mat(64, 64, CV_8UC1, cv::Scalar(40 * i)));
  std::ofstream(dir.file("coco/annotations.json"), std::ios::binary) << coco;
  Json p = Json::parse(netsmith::readTextFile(
      netsmith::testutil::sourcePath("resources/examples/scenes_detection.netsmith.json")));
  for (const char* split : {"train", "test"})
    p["data"][split] = Json{{"format", "coco"},
                            {"images", dir.file("coco/images")},
                            {"annotations", dir.file("coco/annotations.json")}};
  const std::string path = dir.file("coco.netsmith.json");
  std::ofstream(path) << p.dump(1);
  return path;
}

/// A COCO file of two images and ten categories, the first named `firstName` and the second
/// image's file named `secondFile`.
std::string cocoText(const std::string& firstName, const std::string& secondFile = "1.png") {
  Json categories = Json::array();
  for (int c = 0; c < 10; ++c)
    categories.push_back({{"id", c + 1}, {"name", c == 0 ? firstName : "c" + std::to_string(c)}});
  return Json{
      {"images",
       Json::array({{{"id", 1}, {"file_name", "0.png"}, {"width", 64}, {"height", 64}},
                    {{"id", 2}, {"file_name", secondFile}, {"width", 64}, {"height", 64}}})},
      {"annotations",
       Json::array({{{"id", 1}, {"image_id", 1}, {"category_id", 1}, {"bbox", {4, 4, 20, 20}}},
                    {{"id", 2}, {"image_id", 2}, {"category_id", 2}, {"bbox", {8, 8, 30, 20}}}})},
      {"categories", categories}}
      .dump();
}

/// The formats of the four newer tasks, the doctor's folder and eval's outputs, as a data set
/// or project folder from someone else would hold them: each refused or named, in bounded
/// time, in Netsmith's own words, and no name from a file reaching the terminal raw.
void addTaskFormatCases(std::vector<Case>& cases) {
  const std::vector<std::tuple<std::string, std::string, std::string>> coco{
      {"empty", "", "JSON syntax error"},
      {"truncated", cocoText("c0").substr(0, 120), "JSON syntax error"},
      {"huge_number", R"({"images": [], "annotations": [], "info": 1e400, "categories": []})",
       "a number too large for a double"},
      {"bad_utf8", "{\"images\": [], \"info\": \"\xff\xfe\", \"annotations\": []}",
       "JSON syntax error"},
      {"two_images_one_file", cocoText("c0", "0.png"), "is also images[0]'s"},
      {"newline_in_file_name", cocoText("c0", "1.png\nINJECTED line"), "control character"},
      {"deep", "{\"info\": " + std::string(100000, '[') + "}", "nested deeper than 128"},
      {"element_not_object", R"({"images": [[]], "annotations": [], "categories": []})",
       "images[0]: expected an object"},
  };
  for (const auto& [name, text, phrase] : coco) {
    cases.push_back({"coco_" + name,
                     [text = text](const TempDir& dir, const std::string&) {
                       return "data-stats " + cocoProject(dir, text);
                     },
                     {2},
                     phrase});
  }
  // A category name with a terminal escape: data-stats prints it escaped (kRawTexts holds ESC).
  cases.push_back({"coco_escape_in_category",
                   [](const TempDir& dir, const std::string&) {
                     return "data-stats " + cocoProject(dir, cocoText("cat\x1b[2Jdog"));
                   },
                   {0},
                   "cat\\x1b[2Jdog"});
  // 65,000 categories (near the most a detector's head may answer: a Conv2d has at most 65,536
  // outputs) on two images: data-stats lists them in linear time (100,000 took 90 s when each
  // was inserted into an ordered object by search).
  cases.push_back({"coco_65k_categories",
                   [](const TempDir& dir, const std::string&) {
                     Json coco = Json::parse(cocoText("c0"));
                     Json categories = Json::array();
                     for (int c = 0; c < 65000; ++c)
                       categories.push_back({{"id", c + 1}, {"name", "c" + std::to_string(c)}});
                     coco["categories"] = categories;
                     const std::string path = cocoProject(dir, coco.dump());
                     Json p = Json::parse(netsmith::readTextFile(path));
                     for (auto& node : p["model"]["nodes"])
                       if (node["id"] == "head") node["params"]["out_channels"] = 65005;
                     std::ofstream(path) << p.dump(1);
                     return "data-stats " + path;
                   },
                   {0},
                   "c64999"});
  // Multi-label CSV of 600,000 label names: refused as the file is read.
  cases.push_back({"multilabel_600k_names",
                   [](const TempDir& dir, const std::string&) {
                     cv::imwrite(dir.file("m.png"), cv::Mat(56, 56, CV_8UC1, cv::Scalar(9)));
                     std::ofstream csv(dir.file("labels.csv"));
                     csv << "path,labels\n";
                     // 100 rows of 6,000 names (a cell stays under the 64 KiB limit).
                     for (int row = 0; row < 100; ++row) {
                       csv << "m.png,";
                       for (int k = 0; k < 6000; ++k)
                         csv << (k ? ";" : "") << "l" << row * 6000 + k;
                       csv << "\n";
                     }
                     Json p = Json::parse(netsmith::readTextFile(netsmith::testutil::sourcePath(
                         "resources/examples/mosaics.netsmith.json")));
                     p["data"].erase("classes");
                     for (const char* split : {"train", "test"})
                       p["data"][split]["manifest"] = dir.file("labels.csv");
                     std::ofstream(dir.file("ml.netsmith.json")) << p.dump(1);
                     return "data-stats " + dir.file("ml.netsmith.json");
                   },
                   {2},
                   "more than 10000 different labels"});
  // YOLO: no label file at all, and a label that is a FIFO.
  const auto yolo = [](const TempDir& dir, bool fifo) {
    fs::create_directories(dir.file("y/images"));
    fs::create_directories(dir.file("y/labels"));
    for (int i = 0; i < 2; ++i)
      cv::imwrite(dir.file("y/images/" + std::to_string(i) + ".png"),
                  cv::Mat(64, 64, CV_8UC1, cv::Scalar(9)));
    if (fifo) {
      std::ofstream(dir.file("y/labels/0.txt")) << "1 0.5 0.5 0.25 0.25\n";
      ::mkfifo(dir.file("y/labels/1.txt").c_str(), 0644);
    }
    Json p = Json::parse(netsmith::readTextFile(
        netsmith::testutil::sourcePath("resources/examples/scenes_detection.netsmith.json")));
    Json classes = Json::array();
    for (int c = 0; c < 10; ++c)
      classes.push_back("c" + std::to_string(c));
    p["data"]["classes"] = classes;
    for (const char* split : {"train", "test"})
      p["data"][split] = Json{
          {"format", "yolo"}, {"images", dir.file("y/images")}, {"labels", dir.file("y/labels")}};
    std::ofstream(dir.file("y.netsmith.json")) << p.dump(1);
    return "data-stats " + dir.file("y.netsmith.json");
  };
  cases.push_back({"yolo_no_label_at_all",
                   [yolo](const TempDir& dir, const std::string&) { return yolo(dir, false); },
                   {2},
                   "nothing is labelled"});
  cases.push_back({"yolo_label_fifo",
                   [yolo](const TempDir& dir, const std::string&) { return yolo(dir, true); },
                   {2},
                   "1.txt"});
  // A mask of another size than its image: the scan refuses it as training does (it said
  // "Skipped: 0" and training then failed).
  cases.push_back(
      {"mask_of_the_wrong_size",
       [](const TempDir& dir, const std::string&) {
         for (const char* sub : {"s/images", "s/masks"})
           fs::create_directories(dir.file(sub));
         for (int i = 0; i < 2; ++i) {
           const std::string name = std::to_string(i) + ".png";
           cv::imwrite(dir.file("s/images/" + name), cv::Mat(64, 64, CV_8UC1, cv::Scalar(9)));
           const int side = i == 0 ? 64 : 32;
           cv::imwrite(dir.file("s/masks/" + name), cv::Mat(side, side, CV_8UC1, cv::Scalar(1)));
         }
         Json p = Json::parse(netsmith::readTextFile(
             netsmith::testutil::sourcePath("resources/examples/scenes.netsmith.json")));
         for (const char* split : {"train", "test"})
           p["data"][split] = Json{{"format", "mask_folders"},
                                   {"images", dir.file("s/images")},
                                   {"masks", dir.file("s/masks")}};
         std::ofstream(dir.file("s.netsmith.json")) << p.dump(1);
         return "data-stats " + dir.file("s.netsmith.json");
       },
       {2},
       "the image is 64x64 but its mask is 32x32"});
  // The doctor's folder planted as a link, and a settings file that is not one.
  cases.push_back({"received_doctor_folder_link",
                   [](const TempDir& dir, const std::string& base) {
                     fs::create_directories(dir.file("victim-folder"));
                     fs::create_directory_symlink(dir.file("victim-folder"), dir.file("doctor"));
                     return "doctor " + base + " --folds 2 --epochs 1 --out " +
                            dir.file("doctor/blobs");
                   },
                   {2},
                   "is a symbolic link"});
  cases.push_back({"doctor_settings_not_json",
                   [](const TempDir& dir, const std::string& base) {
                     fs::create_directories(dir.file("doc"));
                     std::ofstream(dir.file("doc/settings.json")) << "{\"version\": 1e400}";
                     return "doctor " + base + " --folds 2 --epochs 1 --out " + dir.file("doc");
                   },
                   {2},
                   "not a doctor's settings file"});
  // eval and export read a temperature file; dist-worker a worker spec.
  cases.push_back({"temperature_file_not_json",
                   [](const TempDir& dir, const std::string& base) {
                     std::ofstream(dir.file("t.json")) << "{\"temperature\": ";
                     return "export " + base + " --temperature " + dir.file("t.json");
                   },
                   {2},
                   "JSON syntax error"});
  cases.push_back({"dist_worker_not_a_spec",
                   [](const TempDir& dir, const std::string&) {
                     std::ofstream(dir.file("w.json")) << "{\"project\": 3}";
                     return "dist-worker " + dir.file("w.json");
                   },
                   {1, 2},
                   "not a worker spec"});
  cases.push_back({"optimizer_number_with_lr",
                   [](const TempDir& dir, const std::string& base) {
                     Json p = Json::parse(netsmith::readTextFile(base));
                     p["train"]["optimizer"] = 5;
                     std::ofstream(dir.file("o.netsmith.json")) << p.dump(1);
                     return "train " + dir.file("o.netsmith.json") + " --lr 0.1 --epochs 1";
                   },
                   {2},
                   "train.optimizer"});
  cases.push_back({"eval_predictions_empty",
                   [](const TempDir&, const std::string& base) {
                     return "eval " + base + " --predictions \"\"";
                   },
                   {2},
                   "--predictions needs a value"});
}

/// Two class folders of 8x8 grey images under dir/NAME: a data set someone sent.
std::string classFolders(const TempDir& dir, const std::string& name,
                         const std::vector<std::string>& classes) {
  for (const auto& c : classes) {
    fs::create_directories(dir.path() / name / c);
    for (int i = 0; i < 3; ++i)
      cv::imwrite((dir.path() / name / c / (std::to_string(i) + ".png")).string(),
                  cv::Mat(8, 8, CV_8UC1, cv::Scalar(40 * i)));
  }
  return (dir.path() / name).string();
}

// `init` reads folders and files someone sent: names reach the terminal escaped, a planted link
// is never written through, broken annotations end in a named message.
void addInitCases(std::vector<Case>& cases) {
  cases.push_back(
      {"init_escape_in_class_folder",
       [](const TempDir& dir, const std::string&) {
         return "init " + classFolders(dir, "sent", {"ok", "bad\x1b[2Jname"}) + " --dry-run";
       },
       {0},
       "bad\\x1b[2Jname"});
  cases.push_back({"init_out_through_a_planted_link",
                   [](const TempDir& dir, const std::string&) {
                     const std::string data = classFolders(dir, "sent", {"a", "b"});
                     fs::create_directories(dir.path() / "elsewhere");
                     fs::create_symlink(dir.path() / "elsewhere", dir.path() / "linked");
                     return "init " + data + " --out " + dir.file("linked/p.netsmith.json");
                   },
                   {2},
                   "linked"});
  cases.push_back({"init_truncated_coco",
                   [](const TempDir& dir, const std::string&) {
                     fs::create_directories(dir.path() / "coco" / "images");
                     cv::imwrite(dir.file("coco/images/0.png"), cv::Mat(8, 8, CV_8UC1));
                     std::ofstream(dir.file("coco/annotations.json"))
                         << cocoText("c0").substr(0, 80);
                     return "init " + dir.file("coco") + " --dry-run";
                   },
                   {2},
                   "JSON syntax error"});
  cases.push_back({"init_voc_with_entities_only",
                   [](const TempDir& dir, const std::string&) {
                     fs::create_directories(dir.path() / "voc" / "images");
                     fs::create_directories(dir.path() / "voc" / "annotations");
                     cv::imwrite(dir.file("voc/images/0.png"), cv::Mat(8, 8, CV_8UC1));
                     std::ofstream(dir.file("voc/annotations/0.xml"))
                         << "<!DOCTYPE a [<!ENTITY x \"y\">]><annotation><object><name>&x;"
                            "</name></object></annotation>";
                     return "init " + dir.file("voc") + " --dry-run";
                   },
                   {2},
                   "nothing is labelled"});
}

std::vector<Case> corpus() {
  std::vector<Case> cases;
  addProjectCases(cases);
  addFileCases(cases);
  addDataCases(cases);
  addFlagCases(cases);
  addReceivedCases(cases);
  addTaskFormatCases(cases);
  addInitCases(cases);
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
