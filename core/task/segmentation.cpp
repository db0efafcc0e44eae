#include "task/segmentation.h"
#include "task/evaluation_schema.h"
#include "task/prediction_csv.h"

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "common/file_util.h"
#include "common/output_folder.h"
#include "data/csv_table.h"
#include "data/data_module.h"
#include "data/preview_grid.h"

namespace netsmith::task {

namespace {

/// A model's output must hold a score per class (the head rule checks it first; this keeps the
/// confusion counts and the loss from reading a wrong width).
void requireScores(const torch::Tensor& output, std::int64_t classes) {
  if (output.dim() != 4 || output.size(1) != classes)
    throw Error("segmentation: the model's output has " +
                std::to_string(output.dim() == 4 ? output.size(1) : 0) +
                " scores per pixel but the data has " + std::to_string(classes) + " classes");
}

/// Per-sample mean cross-entropy over the valid pixels (0 for a sample without one), N.
torch::Tensor sampleCrossEntropy(const torch::Tensor& logits, const torch::Tensor& target) {
  namespace F = torch::nn::functional;
  const auto perPixel = F::cross_entropy(
      logits, target,
      F::CrossEntropyFuncOptions().ignore_index(kIgnoreIndex).reduction(torch::kNone));
  const auto valid = target.ne(kIgnoreIndex).to(torch::kFloat).flatten(1).sum(1);
  return perPixel.flatten(1).sum(1) / valid.clamp_min(1);
}

/// Loss per sample and the pixel confusion matrix [true][predicted] of a split.
class SegmentationSums : public MetricSums {
 public:
  explicit SegmentationSums(std::int64_t classes)
      : m_k(classes), m_confusion(std::size_t(classes * classes), 0.0) {}

  void add(const torch::Tensor& output, const torch::Tensor& target) override {
    torch::NoGradGuard noGrad;
    requireScores(output, m_k);
    const auto logits = output.to(torch::kFloat);
    const auto t = target.to(torch::kLong);
    m_loss += sampleCrossEntropy(logits, t).sum().item<double>();
    m_samples += double(t.size(0));
    const auto valid = t.ne(kIgnoreIndex);
    const auto truth = t.masked_select(valid);
    const auto predicted = logits.argmax(1).masked_select(valid);
    const auto counts =
        torch::bincount(truth * m_k + predicted, {}, m_k * m_k).to(torch::kCPU, torch::kDouble);
    const double* c = counts.data_ptr<double>();
    for (std::size_t i = 0; i < m_confusion.size(); ++i)
      m_confusion[i] += c[i];
  }

  std::vector<double> sums() const override {
    std::vector<double> v{m_loss, m_samples};
    v.insert(v.end(), m_confusion.begin(), m_confusion.end());
    return v;
  }

  void setSums(const std::vector<double>& v) override {
    if (v.size() != 2 + m_confusion.size()) throw Error("segmentation sums of the wrong size");
    m_loss = v[0], m_samples = v[1];
    std::copy(v.begin() + 2, v.end(), m_confusion.begin());
  }

  EvalMetrics finish() const override {
    EvalMetrics m;
    m.samples = std::int64_t(m_samples);
    m.loss = m_samples > 0 ? m_loss / m_samples : noFigure();
    m.accuracy = noFigure();
    const auto k = std::size_t(m_k);
    double total = 0, correct = 0, iouSum = 0, diceSum = 0, present = 0;
    std::vector<double> trueCount(k, 0.0), predictedCount(k, 0.0);
    m.confusion.assign(k, std::vector<std::int64_t>(k, 0));
    for (std::size_t t = 0; t < k; ++t)
      for (std::size_t p = 0; p < k; ++p) {
        const double c = m_confusion[t * k + p];
        m.confusion[t][p] = std::llround(c);
        trueCount[t] += c;
        predictedCount[p] += c;
        total += c;
        if (t == p) correct += c;
      }
    std::vector<double> iou(k), dice(k), share(k);
    for (std::size_t c = 0; c < k; ++c) {
      const double tp = m_confusion[c * k + c];
      const double fp = predictedCount[c] - tp, fn = trueCount[c] - tp;
      share[c] = total > 0 ? trueCount[c] / total : noFigure();
      if (tp + fp + fn <= 0) {
        iou[c] = dice[c] = noFigure();
        continue;
      }
      iou[c] = tp / (tp + fp + fn);
      dice[c] = 2 * tp / (2 * tp + fp + fn);
      iouSum += iou[c], diceSum += dice[c], present += 1;
    }
    m.figures["miou"] = present > 0 ? iouSum / present : noFigure();
    m.figures["dice"] = present > 0 ? diceSum / present : noFigure();
    m.figures["pixel_accuracy"] = total > 0 ? correct / total : noFigure();
    m.perClass["iou"] = iou;
    m.perClass["dice"] = dice;
    m.perClass["pixel_share"] = share;
    return m;
  }

 private:
  std::int64_t m_k;
  double m_loss = 0, m_samples = 0;
  std::vector<double> m_confusion;
};

/// What the marker of a predictions folder says it holds.
constexpr const char* kPredictionsKind = "segmentation predictions";

/// `eval --predictions DIR`: DIR/masks/<n>.png the predicted class per pixel, DIR/truth/<n>.png
/// the truth as the model saw it (after fitting; 255: ignore), both 8-bit single-channel PNGs at
/// the model's size, and DIR/predictions.csv (path,prediction,truth) naming them, written last
/// (`predict`, on images without labels: no truth, and DIR/overlays/<n>.png each image with its
/// predicted mask over it, in the image's own pixels; predictions.csv path,prediction,overlay)
/// (flushed to disk: the step that makes the folder whole). The PNGs are each written to a
/// temporary name and renamed, not flushed one by one (thousands of fsyncs). DIR is an
/// OutputFolder: new, empty, or an earlier evaluation's (whose files alone are replaced); a data
/// set's own folder is refused before anything is written.
class MaskPredictionWriter : public PredictionWriter {
 public:
  MaskPredictionWriter(const std::string& dir, const data::SampleSet& set)
      : m_out(dir, kPredictionsKind),
        m_dir(m_out.path()),
        m_set(set),
        m_truth(set.source->labelled()) {
    m_out.folder("masks");
    m_out.folder(m_truth ? "truth" : "overlays");
    // Every name this evaluation writes, listed before the first is written.
    for (std::int64_t i = 0; i < set.size(); ++i) {
      m_out.claim("masks/" + pngName(i));
      m_out.claim((m_truth ? "truth/" : "overlays/") + pngName(i));
    }
    m_out.claim("predictions.csv");
    m_out.record();
    m_text = m_truth ? "path,prediction,truth\n" : "path,prediction,overlay\n";
  }

  void add(const torch::Tensor& output, const torch::Tensor& target,
           const std::vector<std::int64_t>& samples) override {
    const auto predicted = output.argmax(1).to(torch::kCPU, torch::kUInt8).contiguous();
    const bool truth = m_truth && target.defined();
    const auto truths = truth ? target.to(torch::kCPU).to(torch::kUInt8).contiguous() : target;
    const int h = int(predicted.size(1)), w = int(predicted.size(2));
    for (std::size_t i = 0; i < samples.size() && std::int64_t(i) < predicted.size(0); ++i) {
      const std::string name = pngName(m_count++);
      write("masks/" + name, predicted[std::int64_t(i)], h, w);
      m_text += data::csvTextCell(m_set.describe(samples[i])) + ",masks/" + name;
      if (truth) {
        write("truth/" + name, truths[std::int64_t(i)], h, w);
        m_text += ",truth/" + name;
      } else if (!m_truth) {
        const auto plane = predicted[std::int64_t(i)].contiguous();
        writeOverlay("overlays/" + name, samples[i],
                     cv::Mat(h, w, CV_8UC1, plane.data_ptr<std::uint8_t>()));
        m_text += ",overlays/" + name;
      }
      m_text += "\n";
    }
  }

  void setImageGeometry(std::function<data::ImageGeometry(std::int64_t)> geometry) override {
    m_geometry = std::move(geometry);
  }

  void finish() override { writeFileAtomically(m_dir + "/predictions.csv", m_text); }

 private:
  void write(const std::string& relative, const torch::Tensor& plane, int h, int w) {
    const auto contiguous = plane.contiguous();
    writePng(relative, cv::Mat(h, w, CV_8UC1, contiguous.data_ptr<std::uint8_t>()));
  }

  /// The sample's own image with the predicted mask (at the model's size) over it, the mask
  /// taken back through the evaluation's geometry to the image's pixels.
  void writeOverlay(const std::string& relative, std::int64_t sample, const cv::Mat& mask) {
    const cv::Mat image = m_set.source->load(m_set.indices.at(std::size_t(sample)));
    cv::Mat picture;
    image.convertTo(picture, CV_32F, 1.0 / 255.0);
    data::ImageGeometry g;
    g.width = image.cols, g.height = image.rows;
    g.sx = double(mask.cols) / image.cols, g.sy = double(mask.rows) / image.rows;
    if (m_geometry) g = m_geometry(sample);
    cv::Mat rgb;
    data::overlayMask(picture, data::maskInImage(mask, g), {}).convertTo(rgb, CV_8UC3, 255.0);
    cv::cvtColor(rgb, rgb, cv::COLOR_RGB2BGR);
    writePng(relative, rgb);
  }

  void writePng(const std::string& relative, const cv::Mat& mat) {
    std::vector<uchar> png;
    const std::string path = m_dir + "/" + relative;
    if (!cv::imencode(".png", mat, png)) throw Error(path + ": cannot encode");
    // A new temporary file (never an existing one, never through a link), then renamed.
    const std::string tmp = path + ".partial";
    ::unlink(tmp.c_str());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) throw IoError(path + ": cannot write (" + std::strerror(errno) + ")");
    const bool written = ::write(fd, png.data(), png.size()) == ssize_t(png.size());
    const bool closed = ::close(fd) == 0;
    if (!written || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
      ::unlink(tmp.c_str());
      throw IoError(path + ": cannot write (" + std::strerror(errno) + ")");
    }
  }

  OutputFolder m_out;
  std::string m_dir;
  const data::SampleSet& m_set;
  bool m_truth;  ///< the set has targets: truth/ is written too (else overlays/)
  std::function<data::ImageGeometry(std::int64_t)> m_geometry;
  std::int64_t m_count = 0;
  std::string m_text;
};

}  // namespace

torch::Tensor diceLoss(const torch::Tensor& logits, const torch::Tensor& target) {
  const auto x = logits.to(torch::kFloat);
  const auto k = x.size(1);
  const auto valid = target.ne(kIgnoreIndex).unsqueeze(1).to(torch::kFloat);
  const auto probs = torch::softmax(x, 1) * valid;
  const auto y = torch::one_hot(target.masked_fill(target.eq(kIgnoreIndex), 0), k)
                     .permute({0, 3, 1, 2})
                     .to(torch::kFloat) *
                 valid;
  const std::vector<std::int64_t> dims{0, 2, 3};
  const auto inter = (probs * y).sum(dims);
  const auto denom = probs.sum(dims) + y.sum(dims);
  return 1 - ((2 * inter + 1) / (denom + 1)).mean();
}

SegmentationTask::SegmentationTask(const TaskSetup& s)
    : m_classes(s.dataClasses),
      m_names(s.classes),
      m_outputShape(s.outputShape),
      m_labelSmoothing(s.labelSmoothing) {
  if (!s.loss.empty()) {
    if (s.loss != "cross_entropy" && s.loss != "dice" && s.loss != "ce_dice")
      throw Error(
          "train.loss: the segmentation task takes \"cross_entropy\", \"dice\" or "
          "\"ce_dice\", not \"" +
          printable(s.loss) + "\"");
    m_loss = s.loss;
  }
  if (m_labelSmoothing > 0 && m_loss == "dice")
    throw Error(
        "train.label_smoothing: the dice loss has no label smoothing; use ce_dice or "
        "cross_entropy, or remove it");
  if (s.classWeights == "none") return;
  if (m_loss == "dice")
    throw Error(
        "train.class_weights: the dice loss weighs every class alike already; use "
        "ce_dice or cross_entropy, or set class_weights to \"none\"");
  std::vector<double> w(static_cast<std::size_t>(m_classes), 1.0);
  if (s.classWeights == "auto") {
    // As for classes: pixels / (classes x the class's pixels) over the training masks.
    if (s.train && s.train->source && s.train->source->hasMasks()) {
      std::vector<double> counts(w.size(), 0.0);
      double total = 0;
      for (auto i : s.train->indices) {
        cv::Mat mask;
        try {
          mask = s.train->source->loadMask(i);
        } catch (const data::SampleError&) {
          continue;  // the loader skips or reports it
        }
        for (int r = 0; r < mask.rows; ++r) {
          const uchar* row = mask.ptr<uchar>(r);
          for (int x = 0; x < mask.cols; ++x)
            if (row[x] < w.size()) counts[row[x]] += 1, total += 1;
        }
      }
      for (std::size_t c = 0; c < w.size(); ++c)
        w[c] = counts[c] > 0 ? total / (double(m_classes) * counts[c]) : 0.0;
    }
  } else {
    if (std::int64_t(s.classWeightValues.size()) != m_classes)
      throw Error("train.class_weights has " + std::to_string(s.classWeightValues.size()) +
                  " values but there are " + std::to_string(m_classes) + " classes");
    w = s.classWeightValues;
  }
  m_weights = torch::tensor(w, torch::kFloat);
}

torch::Tensor SegmentationTask::collate(const data::SampleSet& set,
                                        const std::vector<std::int64_t>&) const {
  throw Error(set.name + ": the segmentation task takes masks, which the loader makes");
}

torch::Tensor SegmentationTask::collateMasks(const torch::Tensor& masks) const {
  return masks.to(torch::kLong);
}

std::vector<FigureSpec> SegmentationTask::figureSpecs() {
  return {{"miou", true, "mean over classes of the intersection over union of their pixels"},
          {"dice", true, "mean over classes of the Dice coefficient of their pixels"},
          {"pixel_accuracy", true, "the share of pixels whose class is right"}};
}

std::optional<Problem> SegmentationTask::headProblem(const graph::GraphAnalysis& a) const {
  if (!a.ok() || m_classes <= 0) return std::nullopt;
  const std::string k = std::to_string(m_classes);
  const auto& in = a.inputShape;
  const std::string size =
      in.size() == 3 ? std::to_string(in[1]) + "x" + std::to_string(in[2]) : "the input's size";
  if (a.outputShape.size() != 3) {
    return Problem{"node \"" + a.outputId + "\"",
                   "the model's output is " + formatShape(a.outputShape) +
                       "; segmentation needs a score per class for every pixel (" + k + " x " +
                       size + ")",
                   a.outputId,
                   "end the model with a Conv2d of " + k +
                       " out_channels and kernel_size 1 at the input's size (no Flatten or "
                       "Linear)"};
  }
  if (a.outputShape[0] != m_classes) {
    std::string conv;
    for (const auto& n : a.nodes)
      if (n.op == "Conv2d" || n.op == "ConvTranspose2d") conv = n.id;
    const std::string where = conv.empty() ? a.outputId : conv;
    return Problem{"node \"" + where + "\"",
                   "the model outputs " + std::to_string(a.outputShape[0]) +
                       " scores per pixel but the data has " + k + " classes",
                   where,
                   conv.empty() ? "end the model with a Conv2d of " + k + " out_channels"
                                : "set " + conv + ".out_channels to " + k};
  }
  if (in.size() == 3 && (a.outputShape[1] != in[1] || a.outputShape[2] != in[2])) {
    return Problem{"node \"" + a.outputId + "\"",
                   "the model's output is " + std::to_string(a.outputShape[1]) + "x" +
                       std::to_string(a.outputShape[2]) + " but its input is " + size +
                       "; a mask has a class for every input pixel",
                   a.outputId,
                   "bring the output back to " + size +
                       " (Upsample or ConvTranspose2d after the pooling, or padding that keeps "
                       "the size)"};
  }
  return std::nullopt;
}

void SegmentationTask::to(const torch::Device& device) {
  if (m_weights.defined()) m_weights = m_weights.to(device);
}

torch::Tensor SegmentationTask::loss(const torch::Tensor& output, const torch::Tensor& target,
                                     const torch::Tensor&) const {
  namespace F = torch::nn::functional;
  requireScores(output, m_classes);
  const auto logits = output.to(torch::kFloat);
  torch::Tensor total;
  if (m_loss != "dice") {
    auto options =
        F::CrossEntropyFuncOptions().ignore_index(kIgnoreIndex).label_smoothing(m_labelSmoothing);
    if (m_weights.defined()) options.weight(m_weights);
    // A batch whose every pixel is ignored has no loss (not NaN).
    total = target.ne(kIgnoreIndex).any().item<bool>() ? F::cross_entropy(logits, target, options)
                                                       : logits.sum() * 0;
  }
  if (m_loss != "cross_entropy") {
    const auto dice = diceLoss(logits, target);
    total = total.defined() ? total + dice : dice;
  }
  return total;
}

std::vector<double> SegmentationTask::trainSums(const torch::Tensor& output,
                                                const torch::Tensor& target) const {
  const auto valid = target.ne(kIgnoreIndex);
  const auto right = output.argmax(1).eq(target).logical_and(valid);
  return {double(right.sum().item<std::int64_t>()), double(valid.sum().item<std::int64_t>())};
}

std::map<std::string, double> SegmentationTask::trainFigures(const std::vector<double>& sums,
                                                             std::int64_t) const {
  return {{"pixel_accuracy", sums.size() == 2 && sums[1] > 0 ? sums[0] / sums[1] : noFigure()}};
}

std::unique_ptr<MetricSums> SegmentationTask::evalSums() const {
  return std::make_unique<SegmentationSums>(m_classes);
}

torch::Tensor SegmentationTask::syntheticTarget(std::int64_t n) const {
  const std::int64_t h = m_outputShape.size() == 3 ? m_outputShape[1] : 1;
  const std::int64_t w = m_outputShape.size() == 3 ? m_outputShape[2] : 1;
  return torch::randint(0, std::max<std::int64_t>(1, m_classes), {n, h, w}, torch::kLong);
}

Json SegmentationTask::evaluationSchema() const {
  const Json count{{"type", "integer"}, {"minimum", 0}};
  return figuresEvaluationSchema(
      {"segmentation evaluation",
       {"miou", "dice", "pixel_accuracy"},
       {"iou", "dice", "pixel_share"},
       {},
       "[class]",
       {{"confusion",
         {{"type", "array"},
          {"description", "pixels [true class][predicted class], ignored pixels left out"},
          {"items", {{"type", "array"}, {"items", count}}}}}}});
}

std::vector<SampleView> SegmentationTask::describeSamples(const torch::Tensor& output,
                                                          const torch::Tensor& target) const {
  const auto predicted = output.argmax(1).to(torch::kCPU, torch::kUInt8).contiguous();
  const auto n = predicted.size(0);
  // Without a target (images to predict on): the predicted masks alone.
  const auto truth = target.defined()
                         ? target.to(torch::kCPU).clamp(0, 255).to(torch::kUInt8).contiguous()
                         : torch::full(predicted.sizes(), kIgnoreIndex, torch::kUInt8);
  const int h = int(predicted.size(1)), w = int(predicted.size(2));
  const std::size_t pixels = std::size_t(h) * std::size_t(w);
  const auto k = std::size_t(std::max<std::int64_t>(m_classes, output.size(1)));
  std::vector<SampleView> out(static_cast<std::size_t>(n));
  std::vector<double> inter(k), uni(k);
  for (std::int64_t i = 0; i < n; ++i) {
    auto& v = out[std::size_t(i)];
    v.height = h;
    v.width = w;
    const std::uint8_t* p = predicted.data_ptr<std::uint8_t>() + std::size_t(i) * pixels;
    const std::uint8_t* t = truth.data_ptr<std::uint8_t>() + std::size_t(i) * pixels;
    v.predictedMask.assign(p, p + pixels);
    if (target.defined()) v.trueMask.assign(t, t + pixels);
    // This sample's IoU as the split's miou counts it: ignored pixels left out, the mean over
    // the classes in its truth or its prediction.
    std::fill(inter.begin(), inter.end(), 0.0);
    std::fill(uni.begin(), uni.end(), 0.0);
    for (std::size_t j = 0; j < pixels; ++j) {
      if (t[j] == kIgnoreIndex || t[j] >= k || p[j] >= k) continue;
      if (p[j] == t[j]) {
        inter[t[j]] += 1;
        uni[t[j]] += 1;
      } else {
        uni[t[j]] += 1;
        uni[p[j]] += 1;
      }
    }
    double sum = 0;
    int present = 0;
    for (std::size_t c = 0; c < k; ++c) {
      if (uni[c] == 0) continue;
      sum += inter[c] / uni[c];
      ++present;
    }
    v.score = present ? sum / present : noFigure();
  }
  return out;
}

std::unique_ptr<PredictionWriter> SegmentationTask::predictionWriter(
    const std::string& path, const data::SampleSet& set) const {
  return std::make_unique<MaskPredictionWriter>(path, set);
}

ExportNotes segmentationExportNotes() {
  ExportNotes notes;
  notes.output = "logits";
  notes.outputDescription = "a score per class for every pixel (classes x height x width)";
  notes.postprocessing =
      "the predicted class of a pixel is the highest of its scores (argmax over the class "
      "axis); softmax over that axis gives probabilities";
  notes.classScores = false;
  return notes;
}

}  // namespace netsmith::task
