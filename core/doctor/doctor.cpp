#include "doctor/doctor.h"

#include <torch/torch.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <random>
#include <sstream>
#include <thread>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "augment/sample_rng.h"
#include "checkpoint/checkpoint.h"
#include "checkpoint/checkpoint_model.h"
#include "common/file_util.h"
#include "common/json_text.h"
#include "data/csv_table.h"
#include "data/data_loader.h"
#include "data/project_data.h"
#include "doctor/confident_learning.h"
#include "doctor/image_hash.h"
#include "graph/graph_module.h"
#include "ops/op_registry.h"
#include "registries/registries.h"
#include "resolve/open_data.h"
#include "resolve/resolved_project.h"
#include "run/run_layout.h"
#include "train/trainer.h"

namespace netsmith::doctor {

namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

/// What the doctor examines: a validation split cut from the training source goes back into
/// it (the whole source is the data a user labelled); a validation source stays its own split.
project::Project examinedProject(const project::Project& p) {
  project::Project q = p;
  if (q.data.is_object() && q.data.contains("validation") &&
      !(q.data["validation"].is_object() && q.data["validation"].contains("format")))
    q.data.erase("validation");
  return q;
}

/// Reports progress and decides whether to go on; estimates the time left from what this call
/// has done so far.
class Progress {
 public:
  explicit Progress(const DoctorOptions& o) : m_options(o) {}
  bool report(const std::string& stage, double fraction, const std::string& message = {}) {
    fraction = std::clamp(fraction, 0.0, 1.0);
    if (m_first < 0) m_first = fraction;
    const double seconds = elapsed();
    DoctorProgress p;
    p.stage = stage;
    p.fraction = fraction;
    p.seconds = seconds;
    p.message = message;
    const double gained = fraction - m_first;
    if (gained > 0.01 && seconds > 2) p.remaining = seconds / gained * (1 - fraction);
    if (m_options.progress && !m_options.progress(p)) m_stopped = true;
    return !m_stopped;
  }
  bool stopped() const { return m_stopped; }
  double elapsed() const { return std::chrono::duration<double>(Clock::now() - m_start).count(); }
  void log(const std::string& line) const {
    if (m_options.log) m_options.log(line);
  }

 private:
  const DoctorOptions& m_options;
  Clock::time_point m_start = Clock::now();
  double m_first = -1;
  bool m_stopped = false;
};

/// The share of the whole job each stage takes (the folds take the rest).
constexpr double kImagesShare = 0.06, kDuplicatesShare = 0.02, kReportShare = 0.02;
/// Where the folds' part of the whole job starts, and its size.
constexpr double kFoldsStart = kImagesShare + kDuplicatesShare;
constexpr double kFoldsShare = 1 - kFoldsStart - kReportShare;
/// Fold models right on fewer of their held-out samples than this are too weak to rank labels.
constexpr double kWeakFoldAccuracy = 0.6;

struct Split {
  std::string name;
  data::SampleSet set;
};

struct ImageFacts {
  bool readable = false;
  std::string error;  ///< why it could not be read
  int width = 0, height = 0, channels = 0;
  double brightness = 0;  ///< mean of the grey image, 0..1
};

/// Decodes every image of `splits` once (on every core): fingerprints and facts.
void scanImages(const std::vector<Split>& splits, std::vector<ImageRef>& refs,
                std::vector<ImageFingerprint>& prints, std::vector<ImageFacts>& facts,
                Progress& progress) {
  for (std::size_t s = 0; s < splits.size(); ++s)
    for (std::int64_t k = 0; k < splits[s].set.size(); ++k)
      refs.push_back({int(s), k});
  prints.assign(refs.size(), {});
  facts.assign(refs.size(), {});
  std::atomic<std::size_t> next{0}, done{0};
  std::atomic<bool> cancel{false};
  auto work = [&] {
    for (;;) {
      const std::size_t i = next.fetch_add(1);
      if (i >= refs.size() || cancel.load()) return;
      const auto& set = splits[std::size_t(refs[i].split)].set;
      try {
        const cv::Mat image = set.source->load(set.indices[std::size_t(refs[i].index)]);
        prints[i] = fingerprint(image);
        auto& f = facts[i];
        f.readable = true;
        f.width = image.cols;
        f.height = image.rows;
        f.channels = image.channels();
        const cv::Scalar m = cv::mean(image);
        double sum = 0;
        for (int c = 0; c < image.channels() && c < 4; ++c)
          sum += m[c];
        f.brightness = sum / std::max(1, image.channels()) / 255.0;
      } catch (const std::bad_alloc&) {
        // Unreadable (a bad file, an OpenCV error, memory running out on a huge picture):
        // named and left out, as training leaves it out under on_error "skip". Nothing a
        // file does ends a worker thread (an escaped exception would end the program).
        facts[i] = ImageFacts{};
        facts[i].error = "not enough memory to decode it";
      } catch (const std::exception& e) {
        facts[i] = ImageFacts{};
        facts[i].error = *e.what() ? e.what() : "could not be decoded";
      } catch (...) {
        facts[i] = ImageFacts{};
        facts[i].error = "could not be decoded";
      }
      done.fetch_add(1);
    }
  };
  const unsigned threads = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back(work);
  while (done.load() < refs.size() && !cancel.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const double f = refs.empty() ? 1.0 : double(done.load()) / double(refs.size());
    if (!progress.report(
            "images", kImagesShare * f,
            std::to_string(done.load()) + " of " + std::to_string(refs.size()) + " images read"))
      cancel = true;
  }
  for (auto& t : pool)
    t.join();
}

SampleRef refOf(const Split& split, std::int64_t k) {
  SampleRef r;
  r.split = split.name;
  r.index = split.set.indices[std::size_t(k)];
  r.item = split.set.source->describe(r.index);
  r.label = split.set.source->label(r.index);
  return r;
}

// ---- settings and folds on disk ----

Json settingsOf(const project::Project& examined, const DoctorOptions& o, std::int64_t samples) {
  return Json{{"version", 1},
              {"project", project::projectToJson(examined)},
              {"folds", o.folds},
              {"epochs", o.epochs},
              {"limit", o.limit},
              {"seed", o.seed},
              {"checkpoint", o.checkpoint},
              {"samples", samples}};
}

/// The folder's settings.json: written when new; a folder of other settings is refused.
void checkSettings(const std::string& folder, const Json& settings) {
  const std::string path = (fs::path(folder) / "settings.json").string();
  std::error_code ec;
  if (fs::exists(fs::symlink_status(path, ec))) {
    Json theirs;
    try {
      theirs = parseJsonText(readTextFile(path, 64 << 20), printable(path));
    } catch (const Error& e) {
      throw Error(std::string(e.what()) +
                  "; not a doctor's settings file: remove the folder or choose another");
    }
    if (theirs != settings) {
      std::string differs;
      for (const char* key :
           {"project", "folds", "epochs", "limit", "seed", "checkpoint", "samples"})
        if (!theirs.is_object() || !theirs.contains(key) || theirs[key] != settings[key])
          differs += std::string(differs.empty() ? "" : ", ") + key;
      throw Error(folder + ": holds a doctor run with other settings (" + differs +
                  "); remove the folder to start again, or choose another");
    }
    return;
  }
  writeFileAtomically(path, settings.dump(1));
}

/// Fold of every position of `labels` (stratified: each class dealt round-robin after a
/// seeded shuffle).
std::vector<int> assignFolds(const std::vector<std::int64_t>& labels, int folds,
                             std::uint64_t seed) {
  std::map<std::int64_t, std::vector<std::size_t>> byClass;
  for (std::size_t i = 0; i < labels.size(); ++i)
    byClass[labels[i]].push_back(i);
  std::vector<int> fold(labels.size(), 0);
  std::mt19937_64 rng(augment::mixSeed(seed ^ 0xd0c7u, 0, 0));
  int start = 0;
  for (auto& [label, members] : byClass) {
    std::shuffle(members.begin(), members.end(), rng);
    for (std::size_t r = 0; r < members.size(); ++r)
      fold[members[r]] = int((start + int(r)) % folds);
    start = int((start + int(members.size())) % folds);
  }
  return fold;
}

/// A fold's held-out outputs: each sample's class probabilities and feature outlier score
/// (NaN for a sample that could not be read).
struct HeldOut {
  std::vector<std::int64_t> positions;  ///< into the pool
  std::vector<float> probs;             ///< positions x classes
  std::vector<float> outlier;           ///< positions
};

Json heldOutToJson(const HeldOut& h) {
  auto finite = [](const std::vector<float>& v) {
    Json a = Json::array();
    for (float x : v)
      a.push_back(std::isfinite(x) ? Json(x) : Json());
    return a;
  };
  return Json{
      {"positions", h.positions}, {"probs", finite(h.probs)}, {"outlier", finite(h.outlier)}};
}

/// Reads a fold's file back; nothing when it is missing or does not hold these positions.
std::optional<HeldOut> readHeldOut(const std::string& path,
                                   const std::vector<std::int64_t>& positions,
                                   std::int64_t classes) {
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(path, ec))) return std::nullopt;
  try {
    const std::string text = readTextFile(path, std::uint64_t(1) << 30);
    checkJsonNesting(text, path);
    const Json j = Json::parse(text);
    HeldOut h;
    h.positions = j.at("positions").get<std::vector<std::int64_t>>();
    if (h.positions != positions) return std::nullopt;
    const auto& probs = j.at("probs");
    const auto& outlier = j.at("outlier");
    if (!probs.is_array() || !outlier.is_array() ||
        probs.size() != positions.size() * std::size_t(classes) ||
        outlier.size() != positions.size())
      return std::nullopt;
    auto read = [](const Json& a, std::vector<float>& out) {
      out.reserve(a.size());
      for (const auto& x : a)
        out.push_back(x.is_number() ? x.get<float>() : NAN);
    };
    read(probs, h.probs);
    read(outlier, h.outlier);
    return h;
  } catch (const std::exception&) {
    return std::nullopt;  // written again
  }
}

/// Runs `net` over `set`: softmax probabilities over the first `classes` outputs and the
/// penultimate features (flattened; spatial ones averaged over H and W) per sample. A sample
/// the loader skipped keeps NaN.
void predict(graph::GraphModuleImpl& net, const project::Project& project,
             const data::SampleSet& set, const data::ProjectData& pd, std::int64_t classes,
             std::vector<float>& probs, std::vector<float>& features, std::int64_t& width,
             const std::function<bool(std::int64_t)>& keepGoing) {
  data::LoaderOptions lo;
  lo.batchSize = 256;
  lo.training = false;
  lo.shuffle = false;
  lo.onError = pd.data.config.onError;
  data::DataLoader loader(set, *pd.processor, lo);
  net.eval();
  torch::NoGradGuard noGrad;
  const std::string tap = project.model.penultimate(net.analysis().outputId);
  probs.assign(std::size_t(set.size() * classes), NAN);
  features.clear();
  width = 0;
  std::int64_t done = 0;
  loader.startEpoch(0);
  while (auto batch = loader.next()) {
    torch::Tensor tapped;
    torch::Tensor logits =
        tap.empty() ? net.forward(batch->images) : net.forwardTapping(batch->images, tap, tapped);
    logits = logits.to(torch::kFloat).reshape({logits.size(0), -1});
    if (logits.size(1) < classes)
      throw Error("the model gives " + std::to_string(logits.size(1)) + " outputs for " +
                  std::to_string(classes) + " classes");
    const auto p = torch::softmax(logits.slice(1, 0, classes), 1).contiguous();
    torch::Tensor f;
    if (tapped.defined()) {
      f = graph::featureRows(tapped);
      if (width == 0) {
        width = f.size(1);
        features.assign(std::size_t(set.size() * width), NAN);
      }
    }
    const float* pp = p.data_ptr<float>();
    for (std::size_t r = 0; r < batch->samples.size(); ++r) {
      const auto k = batch->samples[r];
      std::copy(pp + r * classes, pp + (r + 1) * classes, probs.begin() + k * classes);
      if (f.defined() && f.size(1) == width)
        std::copy(f.data_ptr<float>() + r * width, f.data_ptr<float>() + (r + 1) * width,
                  features.begin() + k * width);
    }
    done += std::int64_t(batch->samples.size());
    if (!keepGoing(done)) {
      loader.stop();
      return;
    }
  }
}

/// How far each sample lies from every class in feature space: its (L2-normalised) features'
/// distance to the nearest class centre over that class's median distance. NaN where unknown.
std::vector<float> featureOutlierScores(const std::vector<float>& features, std::int64_t width,
                                        const std::vector<std::int64_t>& labels,
                                        std::int64_t classes) {
  const std::size_t n = labels.size();
  std::vector<float> score(n, NAN);
  if (width <= 0 || features.size() != n * std::size_t(width)) return score;
  std::vector<float> x(features);
  std::vector<bool> ok(n, true);
  for (std::size_t i = 0; i < n; ++i) {
    float* row = x.data() + i * width;
    double norm = 0;
    for (std::int64_t d = 0; d < width; ++d)
      norm += double(row[d]) * row[d];
    if (!std::isfinite(norm)) {
      ok[i] = false;
      continue;
    }
    norm = std::sqrt(norm) + 1e-12;
    for (std::int64_t d = 0; d < width; ++d)
      row[d] = float(row[d] / norm);
  }
  std::vector<std::vector<double>> centre(std::size_t(classes), std::vector<double>(width, 0));
  std::vector<std::int64_t> count(std::size_t(classes), 0);
  for (std::size_t i = 0; i < n; ++i) {
    if (!ok[i] || labels[i] < 0 || labels[i] >= classes) continue;
    auto& c = centre[std::size_t(labels[i])];
    for (std::int64_t d = 0; d < width; ++d)
      c[std::size_t(d)] += x[i * width + d];
    ++count[std::size_t(labels[i])];
  }
  for (std::size_t c = 0; c < centre.size(); ++c)
    for (auto& v : centre[c])
      v = count[c] ? v / double(count[c]) : 0;
  auto distance = [&](std::size_t i, std::size_t c) {
    double s = 0;
    for (std::int64_t d = 0; d < width; ++d) {
      const double e = x[i * width + d] - centre[c][std::size_t(d)];
      s += e * e;
    }
    return std::sqrt(s);
  };
  std::vector<std::vector<double>> own(static_cast<std::size_t>(classes));
  for (std::size_t i = 0; i < n; ++i)
    if (ok[i] && labels[i] >= 0 && labels[i] < classes)
      own[std::size_t(labels[i])].push_back(distance(i, std::size_t(labels[i])));
  std::vector<double> median(std::size_t(classes), 0);
  for (std::size_t c = 0; c < own.size(); ++c) {
    auto& d = own[c];
    if (d.empty()) continue;
    std::nth_element(d.begin(), d.begin() + d.size() / 2, d.end());
    median[c] = d[d.size() / 2];
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (!ok[i]) continue;
    double best = INFINITY;
    for (std::size_t c = 0; c < std::size_t(classes); ++c)
      if (count[c] > 0 && median[c] > 1e-9) best = std::min(best, distance(i, c) / median[c]);
    if (std::isfinite(best)) score[i] = float(best);
  }
  return score;
}

/// A checkpoint's model and project.
struct FoldModel {
  project::Project project;
  graph::GraphModule net{nullptr};
};

FoldModel loadFoldModel(const std::string& path, const ops::OpRegistry& registry) {
  const auto ckpt = checkpoint::readCheckpoint(path);
  FoldModel m;
  m.project = checkpoint::checkpointProject(ckpt, path).project;
  m.net = checkpoint::modelFromCheckpoint(m.project, ckpt, path, registry);
  return m;
}

/// Counts the fold run's steps for the progress bar.
class StepSink : public run::EventSink {
 public:
  void onEvent(const run::TrainingEvent& e) override {
    if (e.type == run::EventType::BatchEnd) {
      step = e.batch.step;
      total = e.batch.totalSteps;
    }
  }
  std::atomic<std::int64_t> step{0}, total{0};
};

// ---- findings ----

std::string percent(double share) {
  std::ostringstream os;
  os.precision(share < 0.1 ? 2 : 3);
  os << share * 100 << "%";
  return os.str();
}

BalanceFinding balanceOf(const std::vector<std::int64_t>& labels, std::int64_t classes,
                         const std::vector<std::string>& names) {
  BalanceFinding b;
  b.counts.assign(std::size_t(classes), 0);
  for (const auto y : labels)
    if (y >= 0 && y < classes) ++b.counts[std::size_t(y)];
  const auto total = std::accumulate(b.counts.begin(), b.counts.end(), std::int64_t(0));
  if (total == 0 || classes == 0) return b;
  const auto [lo, hi] = std::minmax_element(b.counts.begin(), b.counts.end());
  b.imbalanceRatio = *lo > 0 ? double(*hi) / double(*lo) : INFINITY;
  double entropy = 0;
  for (const auto c : b.counts)
    if (c > 0) entropy -= double(c) / double(total) * std::log(double(c) / double(total));
  b.effectiveClasses = std::exp(entropy);
  if (b.imbalanceRatio >= 3) {
    const auto rare = std::size_t(lo - b.counts.begin());
    b.advice = "the class " + (rare < names.size() ? names[rare] : std::to_string(rare)) + " has " +
               std::to_string(*lo) + " samples, the largest " + std::to_string(*hi) +
               ": weigh the classes in the loss (train.class_weights \"auto\") or draw them "
               "equally often (train.sampler \"balanced\") so the rare ones count as much";
  }
  return b;
}

/// Images whose size, channels or brightness differ from the rest.
std::vector<OutlierFinding> imageOutliers(const std::vector<ImageRef>& refs,
                                          const std::vector<ImageFacts>& facts,
                                          const std::vector<Split>& splits) {
  std::vector<OutlierFinding> out;
  std::map<std::tuple<int, int>, std::int64_t> sizes;
  std::map<int, std::int64_t> channels;
  std::vector<double> bright;
  std::int64_t readable = 0;
  for (const auto& f : facts) {
    if (!f.readable) continue;
    ++readable;
    ++sizes[{f.width, f.height}];
    ++channels[f.channels];
    bright.push_back(f.brightness);
  }
  if (readable == 0) return out;
  const auto mode = std::max_element(sizes.begin(), sizes.end(),
                                     [](auto& a, auto& b) { return a.second < b.second; });
  const auto modeChannels = std::max_element(channels.begin(), channels.end(),
                                             [](auto& a, auto& b) { return a.second < b.second; });
  std::vector<double> sorted = bright;
  std::nth_element(sorted.begin(), sorted.begin() + sorted.size() / 2, sorted.end());
  const double median = sorted[sorted.size() / 2];
  std::vector<double> dev;
  for (double b : bright)
    dev.push_back(std::abs(b - median));
  std::nth_element(dev.begin(), dev.begin() + dev.size() / 2, dev.end());
  const double mad = 1.4826 * dev[dev.size() / 2] + 1e-3;
  const double modeShare = double(mode->second) / double(readable);
  auto sizeText = [](int w, int h) { return std::to_string(w) + "x" + std::to_string(h); };
  for (std::size_t i = 0; i < refs.size(); ++i) {
    const auto& f = facts[i];
    if (!f.readable) continue;
    const auto& split = splits[std::size_t(refs[i].split)];
    const std::tuple<int, int> size{f.width, f.height};
    const double share = double(sizes[size]) / double(readable);
    if (size != mode->first && modeShare >= 0.5 && share < 0.05) {
      out.push_back({refOf(split, refs[i].index), "size",
                     "size " + sizeText(f.width, f.height) + " where " + percent(modeShare) +
                         " are " + sizeText(std::get<0>(mode->first), std::get<1>(mode->first)),
                     modeShare / std::max(share, 1e-9)});
      continue;
    }
    if (f.channels != modeChannels->first &&
        double(channels[f.channels]) / double(readable) < 0.05) {
      out.push_back({refOf(split, refs[i].index), "channels",
                     std::to_string(f.channels) + " channel(s) where most have " +
                         std::to_string(modeChannels->first),
                     double(modeChannels->second) / double(channels[f.channels])});
      continue;
    }
    const double z = std::abs(f.brightness - median) / mad;
    if (z > 6) {
      std::ostringstream why;
      why.precision(2);
      why << "brightness " << f.brightness << " where the median is " << median;
      out.push_back({refOf(split, refs[i].index), "brightness", why.str(), z});
    }
  }
  return out;
}

std::string base64(const std::vector<unsigned char>& bytes) {
  static const char* table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < bytes.size(); i += 3) {
    const std::uint32_t b = std::uint32_t(bytes[i]) << 16 |
                            (i + 1 < bytes.size() ? std::uint32_t(bytes[i + 1]) << 8 : 0) |
                            (i + 2 < bytes.size() ? std::uint32_t(bytes[i + 2]) : 0);
    out += table[(b >> 18) & 63];
    out += table[(b >> 12) & 63];
    out += i + 1 < bytes.size() ? table[(b >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? table[b & 63] : '=';
  }
  return out;
}

/// A sample's picture at most 64 pixels a side (as its source gives it: RGB or grey); empty
/// when unreadable.
cv::Mat smallPicture(const data::DatasetSource& source, std::int64_t index) {
  try {
    cv::Mat image = source.load(index);
    const int side = std::max(image.cols, image.rows);
    if (side <= 0) return {};
    const double scale = 64.0 / side;
    // At least one pixel a side: a 1 x 400 picture scaled by 0.16 would be 0 wide.
    const cv::Size size(std::max(1, int(std::lround(image.cols * scale))),
                        std::max(1, int(std::lround(image.rows * scale))));
    cv::Mat small;
    cv::resize(image, small, size, 0, 0, scale > 1 ? cv::INTER_NEAREST : cv::INTER_AREA);
    return small;
  } catch (const std::exception&) {
    return {};
  }
}

/// A small picture as a PNG data URI, "" when there is none.
std::string pictureUri(cv::Mat small) {
  if (small.empty()) return {};
  if (small.channels() == 3) cv::cvtColor(small, small, cv::COLOR_RGB2BGR);
  std::vector<unsigned char> png;
  if (!cv::imencode(".png", small, png)) return {};
  return "data:image/png;base64," + base64(png);
}

/// Checks the options' numbers and makes the folder the doctor writes in.
void prepareFolder(const DoctorOptions& o) {
  if (o.folds < 2 || o.folds > 20)
    throw Error("--folds: " + std::to_string(o.folds) + " is not between 2 and 20");
  if (o.epochs < 1) throw Error("--epochs: must be at least 1");
  if (o.folder.empty()) throw Error("the doctor needs a folder to write in");
  {
    // The default folder's parent (doctor/) is made on the first run. Both must be real
    // folders: a `doctor/` link planted in a received project folder would send every file
    // the doctor writes (and the studio's move list) to wherever it points.
    const auto parent = fs::path(o.folder).parent_path();
    if (!parent.empty()) makeRealFolder(parent.string());
  }
  makeRealFolder(o.folder);
}

/// One cross-training fold: its stage, where it writes, its part of the job and its samples.
struct FoldPlan {
  std::string stage;  ///< "fold 2/3"
  fs::path dir;
  std::string heldPath;                     ///< its held-out outputs (held_out.json)
  double base = 0, share = 0;               ///< where its part of the whole job starts, its size
  std::vector<std::int64_t> heldPositions;  ///< positions in the examined training samples
  std::vector<std::int64_t> trainIndices;   ///< indices into the source, sorted
};

/// One run of the doctor: the state its phases share, and the phases in the order they run.
struct DoctorJob {
  const project::LoadedProject& loaded;
  const DoctorOptions& o;
  const Registries& registries;
  Progress progress;
  DoctorReport report;
  project::Project examined;
  std::unique_ptr<data::ProjectData> pd;
  Split train;  ///< the training data examined
  std::vector<Split> splits;
  std::int64_t classes = 0;
  std::vector<std::int64_t> labels;  ///< of `train`
  std::vector<ImageRef> refs;
  std::vector<ImageFacts> facts;
  std::vector<OutlierFinding> outliers;
  std::size_t n = 0;  ///< samples examined
  ClassProbabilities probs;
  std::vector<float> featureScore;
  /// The project each fold trains, read once (crossTrain).
  std::unique_ptr<resolve::ResolvedProject> foldRun;

  DoctorJob(const project::LoadedProject& loadedProject, const DoctorOptions& options)
      : loaded(loadedProject),
        o(options),
        registries(needRegistries(options.registries, "DoctorOptions")),  // before any write
        progress(options) {
    report.project = loaded.project.name;
  }

  /// Runs every phase; the report (what was found so far when stopped).
  DoctorReport examine() {
    prepareFolder(o);
    if (!openData()) return std::move(report);
    chooseSamples();
    // Images: fingerprints and facts, duplicates and image outliers.
    compareImages(readImages());
    outliers = imageOutliers(refs, facts, splits);
    report.balance = balanceOf(labels, classes, pd->data.classes);
    labelProbabilities();
    rankLabels();
    warnIfCut(report.labelIssuesFlagged, report.labelIssues.size(), "flagged labels",
              " (label_ranking.csv ranks every sample)");
    listOutliers();
    warnIfCut(report.unreadable, report.unreadableSamples.size(), "unreadable samples", "");
    report.stopped = progress.stopped();
    report.seconds = progress.elapsed();
    writeReport();
    if (!report.stopped) progress.report("done", 1, "done");
    return std::move(report);
  }

  /// `project` (the project examined, edited for a use) read once against the program's
  /// registries.
  resolve::ResolvedProject resolvedAs(const project::Project& project) const {
    project::LoadedProject edited;
    edited.project = project;
    edited.path = loaded.path;
    return resolve::resolveProject(std::move(edited), registries);
  }

  /// Opens the data unaugmented and checks the task has labels to check; false when stopped.
  bool openData() {
    examined = examinedProject(loaded.project);
    project::Project plain = examined;
    plain.augment = Json::array();
    const auto& transforms = registries.transforms;
    progress.report("data", 0, "opening the data");
    pd = resolve::openData(resolvedAs(plain), transforms, data::userCacheDir(),
                           [&](std::int64_t, std::int64_t) {
                             return progress.report("data", 0, "computing statistics");
                           });
    if (!pd) {
      report.stopped = true;
      return false;
    }
    auto& dm = pd->data;
    report.classes = dm.classes;
    const auto& def = registries.tasks.get(loaded.project.task);
    if (o.labels && !checksLabelsOf(def))
      throw Error("the doctor checks labels of one class per sample; the task \"" +
                  loaded.project.task +
                  "\" has other targets: run it without label checks "
                  "(--no-labels) for duplicates, balance and outliers");
    return true;
  }

  /// Chooses the samples examined and their labels; checks the folder's settings against them.
  void chooseSamples() {
    auto& dm = pd->data;
    // The training data examined (a stratified subset when asked).
    train = Split{"train", dm.train};
    if (o.limit > 0 && train.set.size() > o.limit) {
      const auto& source = *train.set.source;
      train.set.indices = data::stratifiedSubset(
          train.set.indices, [&](std::int64_t i) { return source.stratum(i); }, source.numStrata(),
          o.limit, o.seed);
    }
    splits.push_back(train);
    if (!dm.validation.empty()) splits.push_back({"validation", dm.validation});
    if (!dm.test.empty()) splits.push_back({"test", dm.test});
    report.examined = train.set.size();
    report.validationSamples = dm.validation.size();
    report.testSamples = dm.test.size();
    classes = dm.numClasses();
    labels.resize(std::size_t(train.set.size()));
    for (std::int64_t k = 0; k < train.set.size(); ++k)
      labels[std::size_t(k)] = train.set.label(k);
    const Json settings = settingsOf(examined, o, train.set.size());
    checkSettings(o.folder, settings);
  }

  /// Decodes every image once (facts kept, unreadable ones listed); their fingerprints.
  std::vector<ImageFingerprint> readImages() {
    std::vector<ImageFingerprint> prints;
    scanImages(splits, refs, prints, facts, progress);
    for (std::size_t i = 0; i < refs.size(); ++i) {
      if (facts[i].readable || facts[i].error.empty()) continue;  // read, or not reached (stopped)
      ++report.unreadable;
      if (report.unreadableSamples.size() < kReportUnreadable) {
        const auto ref = refOf(splits[std::size_t(refs[i].split)], refs[i].index);
        report.unreadableSamples.push_back(
            {ref, printable(data::skippedFor(ref.item, facts[i].error).reason)});
      }
    }
    return prints;
  }

  /// Finds the duplicate pairs among the readable images and lists them, cross-split first.
  void compareImages(std::vector<ImageFingerprint> prints) {
    // Unreadable images take no part in the comparisons.
    std::vector<ImageRef> readableRefs;
    std::vector<ImageFingerprint> readablePrints;
    for (std::size_t i = 0; i < refs.size(); ++i)
      if (facts[i].readable) {
        readableRefs.push_back(refs[i]);
        readablePrints.push_back(std::move(prints[i]));
      }
    prints.clear();
    DuplicateResult dups;
    if (!progress.stopped()) {
      progress.report("duplicates", kImagesShare, "comparing images");
      dups = findDuplicates(readableRefs, readablePrints, {}, [&] {
        return !progress.report("duplicates", kImagesShare, "comparing images");
      });
    }
    report.exactDuplicates = dups.exactFound;
    report.nearDuplicates = dups.nearFound;
    report.leaks = dups.crossSplitFound;  // every one found, kept in the list or not
    for (const auto& p : dups.pairs) {
      DuplicateFinding d;
      d.a = refOf(splits[std::size_t(p.a.split)], p.a.index);
      d.b = refOf(splits[std::size_t(p.b.split)], p.b.index);
      d.exact = p.exact;
      d.distance = p.distance;
      d.similarity = p.similarity;
      report.duplicates.push_back(std::move(d));
    }
    std::stable_sort(
        report.duplicates.begin(), report.duplicates.end(),
        [](const DuplicateFinding& a, const DuplicateFinding& b) { return a.leak() > b.leak(); });
    if (report.duplicates.size() > kReportDuplicates) {
      report.warnings.push_back("the report lists the first " + std::to_string(kReportDuplicates) +
                                " of " + std::to_string(report.duplicates.size()) +
                                " duplicate pairs kept, cross-split ones first");
      report.duplicates.resize(kReportDuplicates);
    }
  }

  /// Label probabilities: cross-training folds, or a checkpoint's own outputs.
  void labelProbabilities() {
    n = std::size_t(train.set.size());
    probs.classes = classes;
    probs.values.assign(n * std::size_t(classes), NAN);
    featureScore.assign(n, NAN);
    if (o.labels && !progress.stopped()) {
      if (!o.checkpoint.empty())
        predictWithCheckpoint();
      else
        crossTrain();
    }
  }

  /// The probabilities and feature outlier scores from the checkpoint's own (in-sample) outputs.
  void predictWithCheckpoint() {
    report.inSample = true;
    report.probabilitiesFrom = "the checkpoint " + o.checkpoint + " (in-sample)";
    report.warnings.push_back(
        "the label probabilities come from a model trained on these samples: it has learnt "
        "some wrong labels, which then look right; cross-training (without --checkpoint) "
        "finds more");
    auto model = loadFoldModel(o.checkpoint, registries.ops);
    std::vector<float> features;
    std::int64_t width = 0;
    predict(*model.net, model.project, train.set, *pd, classes, probs.values, features, width,
            [&](std::int64_t done) {
              return progress.report(
                  "predicting",
                  kFoldsStart + kFoldsShare * double(done) / double(std::max<std::size_t>(1, n)));
            });
    featureScore = featureOutlierScores(features, width, labels, classes);
  }

  /// The probabilities and feature outlier scores from cross-training, fold after fold.
  void crossTrain() {
    report.probabilitiesFrom = "cross-training (" + std::to_string(o.folds) + " folds, " +
                               std::to_string(o.epochs) + " epoch" + (o.epochs == 1 ? "" : "s") +
                               " each)";
    const auto fold = assignFolds(labels, o.folds, o.seed);
    // Each fold's run: the project's model, augmentation and optimizer; a short schedule,
    // one process, no validation, the normalisation the whole data gave.
    project::Project foldProject = examined;
    foldProject.train["epochs"] = o.epochs;
    foldProject.train["monitor"] = "train_loss";
    for (const char* key : {"early_stopping", "plateau", "monitor_mode"})
      foldProject.train.erase(key);
    foldProject.train["local_processes"] = 1;
    const auto& norm = pd->normalization;
    foldProject.data["normalize"] =
        norm.mean.empty() ? Json("none") : Json{{"mean", norm.mean}, {"std", norm.std}};
    foldRun = std::make_unique<resolve::ResolvedProject>(resolvedAs(foldProject));
    Problems problems = foldRun->dataProblems;
    problems.insert(problems.end(), foldRun->trainProblems.begin(), foldRun->trainProblems.end());
    if (!problems.empty())
      throw Error("the folds' project has problems:\n" + formatProblems(problems));
    for (int f = 0; f < o.folds && !progress.stopped(); ++f)
      if (!runFold(f, fold, foldProject)) break;
  }

  /// Fold `f`'s stage, folder, part of the job and samples (`fold`: each sample's fold).
  FoldPlan planFold(int f, const std::vector<int>& fold) const {
    FoldPlan plan;
    plan.share = kFoldsShare / o.folds;
    plan.base = kFoldsStart + plan.share * f;
    plan.stage = "fold " + std::to_string(f + 1) + "/" + std::to_string(o.folds);
    plan.dir = fs::path(o.folder) / ("fold-" + std::to_string(f + 1));
    for (std::size_t i = 0; i < n; ++i)
      (fold[i] == f ? plan.heldPositions : plan.trainIndices)
          .push_back(fold[i] == f ? std::int64_t(i) : train.set.indices[i]);
    std::sort(plan.trainIndices.begin(), plan.trainIndices.end());
    plan.heldPath = (plan.dir / "held_out.json").string();
    return plan;
  }

  /// Fold `f`'s held-out outputs (read back, or trained and predicted) copied into the
  /// probabilities and scores; false when the doctor was stopped.
  bool runFold(int f, const std::vector<int>& fold, const project::Project& foldProject) {
    const FoldPlan plan = planFold(f, fold);
    auto held = readHeldOut(plan.heldPath, plan.heldPositions, classes);
    if (!held) {
      makeRealFolder(plan.dir.string());
      const fs::path last =
          run_layout::checkpointIn((plan.dir / "run").string(), run_layout::kLast);
      if (!trainFold(plan, foldProject, last)) return false;
      held = predictHeldOut(plan, last);
      if (!held) return false;
    }
    for (std::size_t r = 0; r < held->positions.size(); ++r) {
      const auto p = std::size_t(held->positions[r]);
      std::copy(held->probs.begin() + std::int64_t(r) * classes,
                held->probs.begin() + std::int64_t(r + 1) * classes,
                probs.values.begin() + std::int64_t(p) * classes);
      featureScore[p] = held->outlier[r];
    }
    return true;
  }

  /// Trains the fold's model (or resumes it) unless its run has finished its epochs; false
  /// when the run or the doctor was stopped. Throws when the run failed.
  bool trainFold(const FoldPlan& plan, const project::Project& foldProject, const fs::path& last) {
    train::TrainerConfig config;
    config.project = foldProject;
    config.options = foldRun->train;
    config.data = foldRun->data;
    config.baseDir = loaded.baseDir();
    config.runDir = (plan.dir / "run").string();
    config.trainIndices = plan.trainIndices;
    config.skipTest = true;
    config.registries = o.registries;
    std::error_code ec;
    // A fold stopped before goes on from its last checkpoint; one whose run had
    // finished its epochs only predicts.
    bool trained = false;
    if (fs::is_regular_file(fs::symlink_status(last, ec))) {
      const auto meta = checkpoint::readCheckpoint(last.string()).meta;
      trained = meta.value("epoch", std::int64_t(0)) >= o.epochs;
      if (!trained) config.resumePath = last.string();
    }
    if (trained) return true;
    progress.log(plan.stage + ": training on " + std::to_string(plan.trainIndices.size()) +
                 " samples" + (config.resumePath.empty() ? "" : " (resumed)"));
    train::Trainer trainer(std::move(config));
    auto steps = std::make_shared<StepSink>();
    trainer.addSink(steps);
    trainer.start();
    watchTraining(trainer, *steps, plan);
    trainer.wait();
    const auto result = trainer.result();
    if (result.state == run::FinishState::Failed)
      throw Error(plan.stage + " failed: " + result.reason +
                  " (its run: " + (plan.dir / "run").string() + ")");
    return !(result.state == run::FinishState::Stopped || progress.stopped());
  }

  /// Reports the fold's training steps until its run finishes; stops the run when told to.
  void watchTraining(train::Trainer& trainer, const StepSink& steps, const FoldPlan& plan) {
    bool asked = false;
    while (trainer.state() != train::RunState::Finished) {
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
      const auto total = steps.total.load();
      const double within = total > 0 ? 0.9 * double(steps.step) / double(total) : 0;
      // Before its first batch the run is opening its data: "step 0 of 0" says nothing.
      const std::string what = total > 0
                                   ? plan.stage + ": step " + std::to_string(steps.step.load()) +
                                         " of " + std::to_string(total)
                                   : plan.stage + ": preparing the fold's training";
      if (!progress.report(plan.stage, plan.base + plan.share * within, what) && !asked) {
        asked = true;
        trainer.stop();
      }
    }
  }

  /// The fold model's outputs for its held-out samples, written to the fold's folder; nothing
  /// when the doctor was stopped meanwhile.
  std::optional<HeldOut> predictHeldOut(const FoldPlan& plan, const fs::path& last) {
    // Held-out probabilities from the fold's model.
    auto model = loadFoldModel(last.string(), registries.ops);
    data::SampleSet heldSet = train.set;
    heldSet.indices.clear();
    for (const auto p : plan.heldPositions)
      heldSet.indices.push_back(train.set.indices[std::size_t(p)]);
    HeldOut h;
    h.positions = plan.heldPositions;
    std::vector<float> features;
    std::int64_t width = 0;
    predict(*model.net, model.project, heldSet, *pd, classes, h.probs, features, width,
            [&](std::int64_t done) {
              return progress.report(
                  plan.stage,
                  plan.base + plan.share * (0.9 + 0.1 * double(done) /
                                                      double(std::max<std::size_t>(
                                                          1, plan.heldPositions.size()))),
                  plan.stage + ": predicting the held-out samples");
            });
    if (progress.stopped()) return std::nullopt;
    std::vector<std::int64_t> heldLabels;
    for (const auto p : plan.heldPositions)
      heldLabels.push_back(labels[std::size_t(p)]);
    h.outlier = featureOutlierScores(features, width, heldLabels, classes);
    writeFileAtomically(plan.heldPath, heldOutToJson(h).dump());
    return h;
  }

  /// Confident learning over the samples with probabilities: label_ranking.csv and the flags.
  void rankLabels() {
    if (!o.labels || progress.stopped()) return;
    progress.report("report", 1 - kReportShare, "ranking labels");
    std::vector<std::size_t> known;
    for (std::size_t i = 0; i < n; ++i)
      if (std::isfinite(probs.values[i * std::size_t(classes)])) known.push_back(i);
    ClassProbabilities kp;
    kp.classes = classes;
    std::vector<std::int64_t> kl;
    for (const auto i : known) {
      kp.values.insert(kp.values.end(), probs.values.begin() + std::int64_t(i) * classes,
                       probs.values.begin() + std::int64_t(i + 1) * classes);
      kl.push_back(labels[i]);
    }
    if (!known.empty() && !report.inSample) warnIfFoldsWeak(kp, kl);
    if (!known.empty()) writeLabelRanking(known, kp, kl);
  }

  /// Warns when the fold models got too few of their held-out samples right to rank labels.
  void warnIfFoldsWeak(const ClassProbabilities& kp, const std::vector<std::int64_t>& kl) {
    // Fold models that have learnt little flag what they have not learnt, not wrong labels.
    std::size_t right = 0;
    for (std::size_t r = 0; r < kl.size(); ++r) {
      const float* p = kp.values.data() + r * std::size_t(classes);
      right += std::int64_t(std::max_element(p, p + classes) - p) == kl[r];
    }
    const double accuracy = double(right) / double(kl.size());
    if (accuracy < kWeakFoldAccuracy) {
      std::ostringstream w;
      w.setf(std::ios::fixed);
      w.precision(1);
      w << "the fold models got " << 100 * accuracy << "% of their held-out samples right "
        << "(under " << int(100 * kWeakFoldAccuracy) << "%): too weak for their label ranking "
        << "to mean much, as they flag what they have not learnt; give them more epochs "
        << "(--epochs) or samples (--limit), or rank with a trained checkpoint (--checkpoint)";
      report.warnings.push_back(w.str());
    }
  }

  /// Ranks the labels of the `known` samples (writes label_ranking.csv) and lists the flagged.
  void writeLabelRanking(const std::vector<std::size_t>& known, const ClassProbabilities& kp,
                         const std::vector<std::int64_t>& kl) {
    const auto& dm = pd->data;
    const auto verdicts = rankLabelIssues(kl, kp);
    std::string csv =
        "rank,split,index,item,given,given_name,suggested,suggested_name,self_confidence,"
        "suggested_probability,flagged\n";
    std::int64_t rank = 0;
    for (const auto& v : verdicts) {
      const auto pos = std::int64_t(known[std::size_t(v.sample)]);
      const SampleRef ref = refOf(train, pos);
      auto name = [&](std::int64_t c) {
        return c >= 0 && c < std::int64_t(dm.classes.size()) ? dm.classes[std::size_t(c)]
                                                             : std::to_string(c);
      };
      std::ostringstream line;
      line.precision(6);
      line << ++rank << ",train," << ref.index << "," << data::csvTextCell(ref.item) << ","
           << v.given << "," << data::csvTextCell(name(v.given)) << "," << v.suggested << ","
           << data::csvTextCell(name(v.suggested)) << "," << v.selfConfidence << ","
           << v.suggestedProbability << "," << (v.flagged ? 1 : 0) << "\n";
      csv += line.str();
      if (v.flagged) {
        ++report.labelIssuesFlagged;
        if (report.labelIssues.size() < kReportLabelIssues)
          report.labelIssues.push_back(
              {ref, v.suggested, v.selfConfidence, v.suggestedProbability, true});
      }
    }
    writeFileAtomically((fs::path(o.folder) / "label_ranking.csv").string(), csv);
  }

  /// A list cut to its length says so (the counts stay whole).
  void warnIfCut(std::int64_t found, std::size_t listed, const std::string& what,
                 const std::string& whole) {
    if (found > std::int64_t(listed))
      report.warnings.push_back("the report lists the first " + std::to_string(listed) + " of " +
                                std::to_string(found) + " " + what + whole);
  }

  /// Adds the feature outliers to the image outliers and lists the strongest first.
  void listOutliers() {
    // Feature outliers: the farthest 1% with a score of at least 2, most distant first.
    {
      std::vector<std::size_t> order;
      for (std::size_t i = 0; i < n; ++i)
        if (std::isfinite(featureScore[i]) && featureScore[i] >= 2) order.push_back(i);
      std::sort(order.begin(), order.end(),
                [&](std::size_t a, std::size_t b) { return featureScore[a] > featureScore[b]; });
      order.resize(std::min(order.size(), std::max<std::size_t>(1, n / 100)));
      for (const auto i : order) {
        std::ostringstream why;
        why.precision(3);
        why << "features " << featureScore[i]
            << "x the usual distance from the nearest class centre";
        outliers.push_back(
            {refOf(train, std::int64_t(i)), "features", why.str(), double(featureScore[i])});
      }
    }
    report.outliersFound = std::int64_t(outliers.size());
    std::stable_sort(
        outliers.begin(), outliers.end(),
        [](const OutlierFinding& a, const OutlierFinding& b) { return a.score > b.score; });
    if (outliers.size() > kReportOutliers) outliers.resize(kReportOutliers);
    report.outliers = std::move(outliers);
    warnIfCut(report.outliersFound, report.outliers.size(), "outliers", "");
  }

  /// Writes the report files (JSON, then the page with thumbnails) and sends the thumbnails.
  void writeReport() {
    // The report files: JSON, then the page with thumbnails.
    writeFileAtomically((fs::path(o.folder) / "doctor.json").string(), report.toJson().dump(1));
    std::map<std::string, const data::DatasetSource*> sources;
    for (const auto& s : splits)
      sources[s.name] = s.set.source.get();
    // Each listed sample is decoded once, for the page and the studio's galleries alike (a
    // sample can stand in several lists; at most a few thousand 64-pixel pictures are kept).
    std::map<std::pair<std::string, std::int64_t>, cv::Mat> pictures;
    const auto picture = [&](const SampleRef& r) {
      const auto key = std::make_pair(r.split, r.index);
      if (const auto hit = pictures.find(key); hit != pictures.end()) return hit->second;
      const auto it = sources.find(r.split);
      cv::Mat small = it == sources.end() ? cv::Mat() : smallPicture(*it->second, r.index);
      if (o.thumbnail) pictures.emplace(key, small);
      return small;
    };
    writeFileAtomically(
        (fs::path(o.folder) / "report.html").string(),
        reportHtml(report, [&](const SampleRef& r) { return pictureUri(picture(r)); }));
    if (o.thumbnail) {
      const auto send = [&](const SampleRef& r) {
        const cv::Mat small = picture(r);
        if (!small.empty()) o.thumbnail(r, small);
      };
      for (const auto& issue : report.labelIssues)
        send(issue.sample);
      for (const auto& d : report.duplicates) {
        send(d.a);
        send(d.b);
      }
      for (const auto& outlier : report.outliers)
        send(outlier.sample);
    }
  }
};

}  // namespace

DoctorReport runDoctor(const project::LoadedProject& loaded, const DoctorOptions& o) {
  DoctorJob job(loaded, o);
  return job.examine();
}

bool checksLabelsOf(const task::TaskDef& def) {
  return data::targetTraits(def.target).oneClassPerSample;
}

std::string defaultDoctorFolder(const std::string& projectPath) {
  std::string stem = fs::path(projectPath).filename().string();
  for (const std::string suffix : {".json", ".netsmith"})
    if (stem.size() > suffix.size() &&
        stem.compare(stem.size() - suffix.size(), std::string::npos, suffix) == 0)
      stem.resize(stem.size() - suffix.size());
  return (fs::path("doctor") / fileNameSafe(stem, "project")).string();
}

}  // namespace netsmith::doctor
