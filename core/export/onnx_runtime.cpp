#include "export/onnx_runtime.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "common/file_util.h"
#include "common/json.h"
#include "common/subprocess.h"

namespace fs = std::filesystem;

namespace netsmith::exporting {

namespace {

/// The script node runs: argv[2] the package's folder, argv[3] the private folder holding
/// request.json and the inputs. It writes result.json ({"error": ...} when something fails) and
/// the outputs' raw bytes there.
constexpr const char* kRunnerScript = R"JS('use strict';
const fs = require('fs');
const path = require('path');
const [pkg, dir] = process.argv.slice(2);
function finish(result, code) {
  fs.writeFileSync(path.join(dir, 'result.json.part'), JSON.stringify(result));
  fs.renameSync(path.join(dir, 'result.json.part'), path.join(dir, 'result.json'));
  process.exit(code);
}
function fail(what, e) {
  finish({error: what + ': ' + String(e && e.message ? e.message : e)}, 2);
}
function product(dims) { return dims.reduce((a, b) => a * b, 1); }
async function main() {
  const request = JSON.parse(fs.readFileSync(path.join(dir, 'request.json'), 'utf8'));
  let ort;
  try { ort = require(pkg); } catch (e) { fail('cannot load onnxruntime-node', e); }
  // For timing: the memory the runtime takes from here on (loading the model and running it),
  // from the peak resident set reset now (Linux's clear_refs 5) and read at the end.
  const status = (field) => {
    try {
      const m = fs.readFileSync('/proc/self/status', 'utf8').match(new RegExp(field + ':\\s+(\\d+) kB'));
      return m ? Number(m[1]) : -1;
    } catch (e) { return -1; }
  };
  let rssBefore = -1;
  if (request.time) {
    try { fs.writeFileSync('/proc/self/clear_refs', '5'); rssBefore = status('VmRSS'); } catch (e) {}
  }
  const options = {graphOptimizationLevel: 'all', executionMode: 'sequential', interOpNumThreads: 1};
  if (request.threads > 0) options.intraOpNumThreads = request.threads;
  let session;
  try {
    session = await ort.InferenceSession.create(request.model, options);
  } catch (e) { fail('ONNX Runtime cannot load the model', e); }
  const result = {runs: []};
  let count = 0;
  for (const run of request.runs) {
    const feeds = {};
    for (const [name, t] of Object.entries(run.inputs)) {
      const bytes = fs.readFileSync(path.join(dir, t.file));
      const values = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
      feeds[name] = new ort.Tensor('float32', values, t.dims);
    }
    let got;
    try { got = await session.run(feeds, run.outputs); } catch (e) {
      fail('ONNX Runtime cannot run the model', e);
    }
    const outputs = {};
    for (const name of run.outputs) {
      const t = got[name];
      if (!t) fail('ONNX Runtime', 'the model has no output "' + name + '"');
      if (t.type !== 'float32' && t.type !== 'int64')
        fail('ONNX Runtime', 'output "' + name + '" holds ' + t.type + ', not float32 or int64');
      const file = 'output' + (count++) + '.bin';
      fs.writeFileSync(path.join(dir, file),
                       Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
      outputs[name] = {file: file, dims: Array.from(t.dims), type: t.type};
    }
    result.runs.push(outputs);
  }
  if (request.time) {
    const t = request.time;
    const values = new Float32Array(product(t.dims));
    let seed = 12345;
    for (let i = 0; i < values.length; ++i) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      values[i] = seed / 1073741824 - 1;
    }
    const feeds = {[t.input]: new ort.Tensor('float32', values, t.dims)};
    try {
      for (let i = 0; i < t.warmup; ++i) await session.run(feeds);
      const ms = [];
      const start = process.hrtime.bigint();
      const elapsed = () => Number(process.hrtime.bigint() - start) / 1e9;
      while (ms.length < 100000 && (ms.length < t.runs || elapsed() < t.seconds)) {
        const a = process.hrtime.bigint();
        await session.run(feeds);
        ms.push(Number(process.hrtime.bigint() - a) / 1e6);
      }
      const peak = status('VmHWM');
      result.time = {ms: ms, memory_kib: rssBefore >= 0 && peak >= 0 ? peak - rssBefore : -1};
    } catch (e) { fail('ONNX Runtime cannot run the model', e); }
  }
  finish(result, 0);
}
main().catch(e => fail('ONNX Runtime', e));
)JS";

/// The onnxruntime-node package in `folder` (the package itself or its node_modules).
std::optional<std::string> packageIn(const std::string& folder) {
  for (const auto& candidate :
       {fs::path(folder), fs::path(folder) / "node_modules" / "onnxruntime-node"}) {
    std::error_code ec;
    if (fs::is_regular_file(candidate / "package.json", ec) &&
        fs::is_directory(candidate / "dist", ec))
      return candidate.string();
  }
  return std::nullopt;
}

/// The first of `names` that is an executable file in PATH.
std::string findOnPath(const std::vector<std::string>& names) {
  const char* path = std::getenv("PATH");
  if (!path) return {};
  for (const auto& name : names) {
    std::string dirs = path;
    std::size_t start = 0;
    while (start <= dirs.size()) {
      const auto end = dirs.find(':', start);
      const std::string dir = dirs.substr(start, end == std::string::npos ? end : end - start);
      if (!dir.empty()) {
        const std::string candidate = (fs::path(dir) / name).string();
        if (::access(candidate.c_str(), X_OK) == 0 && fs::is_regular_file(candidate))
          return fs::absolute(candidate).string();
      }
      if (end == std::string::npos) break;
      start = end + 1;
    }
  }
  return {};
}

/// A folder only this user can enter, removed with everything in it when this goes.
class PrivateFolder {
 public:
  PrivateFolder() {
    std::string pattern = (fs::temp_directory_path() / "netsmith-ort-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw Error("ONNX Runtime: cannot create a private folder in " +
                  fs::temp_directory_path().string() + " (" + std::strerror(errno) + ")");
    m_path = pattern;
  }
  ~PrivateFolder() {
    std::error_code ec;
    fs::remove_all(m_path, ec);
  }
  PrivateFolder(const PrivateFolder&) = delete;
  PrivateFolder& operator=(const PrivateFolder&) = delete;
  std::string file(const std::string& name) const { return (fs::path(m_path) / name).string(); }

 private:
  std::string m_path;
};

void writeBytes(const std::string& path, const void* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) throw IoError("ONNX Runtime: cannot write " + path);
}

/// Runs the script on request.json in `folder`; its result.json, parsed. Throws with the
/// runtime's own message (printable) or why node ended.
Json runScript(const OnnxRuntimeLocation& ort, const PrivateFolder& folder, const Json& request,
               double timeoutSeconds) {
  writeBytes(folder.file("runner.js"), kRunnerScript, std::strlen(kRunnerScript));
  const std::string requestText = request.dump();
  writeBytes(folder.file("request.json"), requestText.data(), requestText.size());
  SpawnSpec spec;
  spec.program = ort.node;
  spec.args = {folder.file("runner.js"), ort.package, folder.file("")};
  spec.stdoutPath = folder.file("node.log");
  spec.stderrPath = folder.file("node.log");
  spec.what = ort.name() + " (node)";
  const int status = waitChildFor(spawnChild(spec), timeoutSeconds, spec.what);
  std::error_code ec;
  if (!fs::is_regular_file(folder.file("result.json"), ec)) {
    std::string log;
    try {
      log = readTextFile(folder.file("node.log"), 1 << 20);
    } catch (const Error&) {
    }
    if (log.size() > 600) log = "..." + log.substr(log.size() - 600);
    throw Error(spec.what + " " + describeWaitStatus(status) +
                (log.empty() ? std::string() : ": " + printable(log)));
  }
  Json result = Json::parse(readTextFile(folder.file("result.json"), 64 << 20), nullptr, false);
  if (result.is_discarded() || !result.is_object())
    throw Error(spec.what + " wrote no readable result");
  if (result.contains("error")) throw Error(printable(result.value("error", std::string())));
  return result;
}

/// The outputs of one run, read back from their files.
std::map<std::string, HostTensor> readOutputs(const PrivateFolder& folder, const Json& run) {
  std::map<std::string, HostTensor> out;
  for (const auto& [name, info] : run.items()) {
    HostTensor t;
    t.dims = info.at("dims").get<std::vector<std::int64_t>>();
    t.isInt = info.at("type").get<std::string>() == "int64";
    const std::string bytes = readTextFile(folder.file(info.at("file").get<std::string>()));
    const std::size_t each = t.isInt ? sizeof(std::int64_t) : sizeof(float);
    if (t.count() < 0 || bytes.size() != std::size_t(t.count()) * each)
      throw Error("ONNX Runtime: output \"" + printable(name) + "\" has " +
                  std::to_string(bytes.size()) + " bytes for its shape");
    if (t.isInt) {
      t.ints.resize(std::size_t(t.count()));
      std::memcpy(t.ints.data(), bytes.data(), bytes.size());
    } else {
      t.values.resize(std::size_t(t.count()));
      std::memcpy(t.values.data(), bytes.data(), bytes.size());
    }
    out.emplace(name, std::move(t));
  }
  return out;
}

}  // namespace

std::int64_t HostTensor::count() const {
  std::int64_t n = 1;
  for (const auto d : dims)
    n *= d;
  return n;
}

std::string defaultOnnxRuntimePrefix() {
  return "/usr/local/lib/netsmith/onnxruntime";
}

std::optional<OnnxRuntimeLocation> findOnnxRuntime(std::string* whyNot) {
  const auto no = [&](const std::string& why) -> std::optional<OnnxRuntimeLocation> {
    if (whyNot) *whyNot = why;
    return std::nullopt;
  };
  const char* setting = std::getenv("NETSMITH_ONNXRUNTIME");
  if (setting && std::string(setting) == "off")
    return no("ONNX Runtime is turned off (NETSMITH_ONNXRUNTIME=off)");
  const std::string folder = setting && *setting ? setting : defaultOnnxRuntimePrefix();
  const auto package = packageIn(folder);
  if (!package) {
    return no("ONNX Runtime was not found in " + folder +
              " (install it with installer/deps-debian.sh, or `npm install --ignore-scripts "
              "onnxruntime-node` and point NETSMITH_ONNXRUNTIME at the folder)");
  }
  std::string node;
  if (const char* n = std::getenv("NETSMITH_NODE"); n && *n) {
    if (::access(n, X_OK) != 0) return no(std::string("NETSMITH_NODE (") + n + ") cannot be run");
    node = fs::absolute(n).string();
  } else {
    node = findOnPath({"node", "nodejs"});
    if (node.empty())
      return no("ONNX Runtime needs Node.js, and neither node nor nodejs is on PATH");
  }
  OnnxRuntimeLocation ort;
  ort.node = node;
  ort.package = *package;
  Json meta = Json::parse(readTextFile((fs::path(*package) / "package.json").string(), 1 << 20),
                          nullptr, false);
  ort.version = meta.is_object() && meta.contains("version") && meta["version"].is_string()
                    ? printable(meta["version"].get<std::string>())
                    : "(version unknown)";
  return ort;
}

std::vector<std::map<std::string, HostTensor>> runOnnxRuntime(
    const OnnxRuntimeLocation& ort, const std::string& modelPath,
    const std::vector<OnnxRuntimeFeed>& feeds, double timeoutSeconds) {
  PrivateFolder folder;
  Json runs = Json::array();
  int count = 0;
  for (const auto& feed : feeds) {
    Json inputs = Json::object();
    for (const auto& [name, t] : feed.inputs) {
      if (t.isInt || std::int64_t(t.values.size()) != t.count())
        throw Error("ONNX Runtime: input \"" + name + "\" does not hold its shape's floats");
      const std::string file = "input" + std::to_string(count++) + ".bin";
      writeBytes(folder.file(file), t.values.data(), t.values.size() * sizeof(float));
      inputs[name] = Json{{"file", file}, {"dims", t.dims}};
    }
    runs.push_back(Json{{"inputs", inputs}, {"outputs", feed.outputs}});
  }
  const Json request{{"model", fs::absolute(modelPath).string()}, {"threads", 0}, {"runs", runs}};
  const Json result = runScript(ort, folder, request, timeoutSeconds);
  std::vector<std::map<std::string, HostTensor>> out;
  for (const auto& run : result.at("runs"))
    out.push_back(readOutputs(folder, run));
  if (out.size() != feeds.size()) throw Error("ONNX Runtime returned too few runs");
  return out;
}

std::vector<std::map<std::string, HostTensor>> runOnnxRuntimeOnBytes(
    const OnnxRuntimeLocation& ort, const std::string& onnxBytes,
    const std::vector<OnnxRuntimeFeed>& feeds, double timeoutSeconds) {
  PrivateFolder folder;
  writeBytes(folder.file("model.onnx"), onnxBytes.data(), onnxBytes.size());
  return runOnnxRuntime(ort, folder.file("model.onnx"), feeds, timeoutSeconds);
}

OnnxRuntimeTiming timeOnnxRuntime(const OnnxRuntimeLocation& ort, const std::string& modelPath,
                                  const std::string& inputName,
                                  const std::vector<std::int64_t>& inputDims, int threads,
                                  int warmup, int runs, double seconds, double timeoutSeconds) {
  PrivateFolder folder;
  const Json request{{"model", fs::absolute(modelPath).string()},
                     {"threads", threads},
                     {"runs", Json::array()},
                     {"time", Json{{"input", inputName},
                                   {"dims", inputDims},
                                   {"warmup", warmup},
                                   {"runs", runs},
                                   {"seconds", seconds}}}};
  const Json result = runScript(ort, folder, request, timeoutSeconds);
  OnnxRuntimeTiming timing;
  timing.threads = threads;
  timing.ms = result.at("time").at("ms").get<std::vector<double>>();
  timing.memoryKiB = result.at("time").value("memory_kib", std::int64_t(-1));
  return timing;
}

}  // namespace netsmith::exporting
