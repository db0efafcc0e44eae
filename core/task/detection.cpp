#include "task/detection.h"
#include "task/evaluation_schema.h"
#include "task/prediction_csv.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>

#include <opencv2/imgcodecs.hpp>
#include <opencv2/imgproc.hpp>

#include "common/file_util.h"
#include "common/output_folder.h"
#include "data/data_module.h"
#include "data/preview_grid.h"
#include "task/coco_map.h"

namespace netsmith::task {

namespace {

/// A split's figures: every image's true boxes and detections are kept (tens of bytes a box)
/// and matched by cocoMap when the split is done, since COCO's precision needs every
/// detection's score across the split. The loss is summed per sample.
class DetectionSums : public MetricSums {
 public:
  explicit DetectionSums(const DetectionTask& task) : m_task(task) {}

  void add(const torch::Tensor& output, const torch::Tensor& target) override {
    torch::NoGradGuard noGrad;
    m_task.requireHead(output);
    const auto out = output.to(torch::kFloat);
    const auto& p = m_task.params();
    const auto n = out.size(0);
    m_loss += detectionLoss(out, target, p).total.item<double>() * double(n);
    m_samples += double(n);
    const auto cpu = out.to(torch::kCPU);
    auto detections =
        decodeDetections(cpu, p, int(cpu.size(3) * p.stride), int(cpu.size(2) * p.stride));
    auto truth = boxesFromTarget(target.to(torch::kCPU));
    truth.resize(detections.size());
    for (std::size_t i = 0; i < detections.size(); ++i) {
      m_truth.push_back(std::move(truth[i]));
      m_detections.push_back(std::move(detections[i]));
    }
  }

  std::vector<double> sums() const override { return {m_loss, m_samples}; }

  void setSums(const std::vector<double>& v) override {
    if (v.size() != 2) throw Error("detection sums of the wrong size");
    // Each process keeps its own images' boxes; the figures need them all in one place.
    if (v[1] != m_samples)
      throw Error(
          "detection: the figures of an evaluation split over several processes are not "
          "gathered yet; set train.processes to 1");
    m_loss = v[0];
  }

  EvalMetrics finish() const override {
    EvalMetrics m;
    m.samples = std::int64_t(m_samples);
    m.loss = m_samples > 0 ? m_loss / m_samples : noFigure();
    m.accuracy = noFigure();
    const auto k = m_task.params().classes;
    const CocoMap c =
        cocoMap(m_truth, m_detections, k, {static_cast<int>(m_task.params().maxDetections)});
    const auto figure = [&](double v) { return m_samples > 0 && v >= 0 ? v : noFigure(); };
    m.figures["map"] = figure(c.map);
    m.figures["map50"] = figure(c.map50);
    m.figures["map75"] = figure(c.map75);
    m.figures["map_small"] = figure(c.mapSmall);
    m.figures["map_medium"] = figure(c.mapMedium);
    m.figures["map_large"] = figure(c.mapLarge);
    m.figures["recall"] = figure(c.recall);
    const auto perClass = [&](const std::vector<double>& v) {
      std::vector<double> out(std::size_t(k), noFigure());
      for (std::size_t i = 0; i < out.size() && i < v.size(); ++i)
        if (v[i] >= 0) out[i] = v[i];
      return out;
    };
    m.perClass["ap"] = perClass(c.ap);
    m.perClass["ap50"] = perClass(c.ap50);
    m.perClass["recall"] = perClass(c.classRecall);
    return m;
  }

 private:
  const DetectionTask& m_task;
  double m_loss = 0, m_samples = 0;
  std::vector<std::vector<target::Box>> m_truth;
  std::vector<std::vector<ScoredBox>> m_detections;
};

/// [x, y, w, h] as COCO writes a box.
Json cocoBox(const target::Box& b) {
  return Json::array({b.x0, b.y0, b.x1 - b.x0, b.y1 - b.y0});
}

/// `eval --predictions FILE`: FILE the detections in the COCO results format (a list of
/// {image_id, category_id, bbox [x, y, w, h], score}), and beside it FILE's stem + ".truth.json"
/// the truth as a COCO dataset (images, annotations, categories), so any COCO tool computes the
/// figures from the two. Both speak the data's own terms (data::AnnotationIds): a COCO source's
/// image and category ids and file names, so the results score against the user's own
/// annotations file; YOLO and VOC images numbered by their place in the source from 1, classes
/// from 1. Boxes are in the image's own pixels (the evaluation's fit and resizing undone with
/// data::ImageGeometry), the truth the source's own boxes; without a geometry, the model
/// input's pixels. `predict` (images without labels) writes FILE's stem + ".images.json"
/// instead: the images and categories, no annotations.
class CocoPredictionWriter : public PredictionWriter {
 public:
  CocoPredictionWriter(std::string path, const data::SampleSet& set, const DetectionTask& task,
                       std::vector<std::string> names)
      : m_path(std::move(path)), m_set(set), m_task(task) {
    const std::string suffix = ".json";
    const bool json = m_path.size() > suffix.size() &&
                      m_path.compare(m_path.size() - suffix.size(), suffix.size(), suffix) == 0;
    // Images without labels (`predict`): the images and categories alone, no annotations.
    m_labelled = set.source->labelled();
    const std::string stem = json ? m_path.substr(0, m_path.size() - suffix.size()) : m_path;
    m_truthPath = stem + (m_labelled ? ".truth.json" : ".images.json");
    if (!m_labelled) {
      // Each image with its boxes drawn, in a folder of its own (never a foreign one).
      m_drawn = std::make_unique<OutputFolder>(stem + ".drawn", "detection drawings");
      for (std::int64_t i = 0; i < set.size(); ++i)
        m_drawn->claim(pngName(i));
      m_drawn->record();
    }
    checkOutputFile(m_path);  // before the evaluation, not after it
    checkOutputFile(m_truthPath);
    m_ids = dynamic_cast<const data::AnnotationIds*>(set.source.get());
    if (m_ids) m_categoryIds = m_ids->categoryIds();
    m_truth = Json{
        {"images", Json::array()}, {"annotations", Json::array()}, {"categories", Json::array()}};
    for (std::int64_t c = 0; c < task.params().classes; ++c) {
      if (std::size_t(c) >= m_categoryIds.size()) m_categoryIds.push_back(c + 1);
      if (m_categoryIds[std::size_t(c)] < 0) continue;  // no category of the data's
      m_truth["categories"].push_back(
          {{"id", m_categoryIds[std::size_t(c)]},
           {"name", std::size_t(c) < names.size() ? names[std::size_t(c)] : std::to_string(c)}});
    }
  }

  void setImageGeometry(std::function<data::ImageGeometry(std::int64_t)> geometry) override {
    m_geometry = std::move(geometry);
  }

  void add(const torch::Tensor& output, const torch::Tensor& target,
           const std::vector<std::int64_t>& samples) override {
    m_task.requireHead(output);
    const auto& p = m_task.params();
    const auto out = output.to(torch::kCPU, torch::kFloat);
    const int w = int(out.size(3) * p.stride), h = int(out.size(2) * p.stride);
    const auto detections = decodeDetections(out, p, w, h);
    const auto truth = m_labelled && target.defined() ? boxesFromTarget(target.to(torch::kCPU))
                                                      : std::vector<std::vector<target::Box>>{};
    for (std::size_t i = 0; i < samples.size() && i < detections.size(); ++i) {
      const std::int64_t index = m_set.indices.at(std::size_t(samples[i]));
      const std::int64_t id = m_ids ? m_ids->imageId(index) : samples[i] + 1;
      data::ImageGeometry g;
      g.width = w, g.height = h;
      if (m_geometry) g = m_geometry(samples[i]);
      m_truth["images"].push_back(
          {{"id", id},
           {"file_name", m_ids ? m_ids->imageFile(index) : m_set.describe(samples[i])},
           {"width", g.width},
           {"height", g.height}});
      // The truth: the source's own boxes in the image's pixels, or the batch's.
      const std::vector<target::Box> given =
          !m_labelled  ? std::vector<target::Box>{}
          : m_geometry ? m_set.source->loadBoxes(index, g.width, g.height)
                       : (i < truth.size() ? truth[i] : std::vector<target::Box>{});
      for (const auto& b : given) {
        const std::int64_t category = categoryOf(b.cls);
        if (category < 0) continue;
        m_truth["annotations"].push_back({{"id", ++m_annotations},
                                          {"image_id", id},
                                          {"category_id", category},
                                          {"bbox", cocoBox(b)},
                                          {"area", (b.x1 - b.x0) * (b.y1 - b.y0)},
                                          {"iscrowd", b.crowd ? 1 : 0},
                                          {"difficult", b.difficult ? 1 : 0}});
      }
      std::vector<target::Box> drawn;
      for (const auto& d : detections[i]) {
        const std::int64_t category = categoryOf(d.box.cls);
        if (category < 0) continue;  // a class the data's annotations cannot name
        m_results.push_back({{"image_id", id},
                             {"category_id", category},
                             {"bbox", cocoBox(data::boxInImage(d.box, g))},
                             {"score", d.score}});
        if (d.score >= kDrawnScore) drawn.push_back(data::boxInImage(d.box, g));
      }
      if (m_drawn) draw(index, drawn);
    }
  }

  /// The score from which a detection is drawn (the COCO results keep every one decoded).
  static constexpr float kDrawnScore = 0.25f;

  void finish() override {
    writeFileAtomically(m_truthPath, m_truth.dump());
    writeFileAtomically(m_path, m_results.dump());
  }

 private:
  /// Source image `index` with `boxes` (in its pixels) drawn, as drawn/<n>.png.
  void draw(std::int64_t index, const std::vector<target::Box>& boxes) {
    cv::Mat picture, bgr;
    m_set.source->load(index).convertTo(picture, CV_32F, 1.0 / 255.0);
    data::overlayBoxes(picture, boxes, {}).convertTo(bgr, CV_8UC3, 255.0);
    cv::cvtColor(bgr, bgr, cv::COLOR_RGB2BGR);
    std::vector<uchar> png;
    const std::string path = m_drawn->path() + "/" + pngName(m_count++);
    if (!cv::imencode(".png", bgr, png)) throw Error(path + ": cannot encode");
    writeFileAtomically(path, std::string(png.begin(), png.end()));
  }

  std::int64_t categoryOf(std::int64_t cls) const {
    return cls >= 0 && std::size_t(cls) < m_categoryIds.size() ? m_categoryIds[std::size_t(cls)]
                                                               : -1;
  }

  std::string m_path, m_truthPath;
  const data::SampleSet& m_set;
  bool m_labelled = true;  ///< the truth file has annotations (else: FILE.images.json, none)
  std::unique_ptr<OutputFolder> m_drawn;  ///< images without labels: FILE.drawn/<n>.png
  std::int64_t m_count = 0;
  const DetectionTask& m_task;
  const data::AnnotationIds* m_ids = nullptr;
  std::vector<std::int64_t> m_categoryIds;  ///< per class; -1: none of the data's
  std::function<data::ImageGeometry(std::int64_t)> m_geometry;
  Json m_truth;
  Json m_results = Json::array();
  std::int64_t m_annotations = 0;
};

}  // namespace

DetectionTask::DetectionTask(const TaskSetup& s) : m_names(s.classes), m_inputShape(s.inputShape) {
  if (!s.loss.empty() && s.loss != "fcos")
    throw Error(
        "train.loss: the detection task takes \"fcos\" (focal + GIoU + centre-ness), not \"" +
        printable(s.loss) + "\"");
  if (s.labelSmoothing > 0)
    throw Error("train.label_smoothing: the detection task's focal loss has none; remove it");
  if (s.classWeights != "none")
    throw Error(
        "train.class_weights: the detection task's focal loss weighs the hard examples itself; "
        "set class_weights to \"none\"");
  m_params.classes = std::max<std::int64_t>(s.dataClasses, 0);
  std::int64_t stride = 0;
  if (m_inputShape.size() == 3 && m_params.classes > 0 &&
      !detectionOutputProblem(s.outputShape, m_params.classes, m_inputShape[1], m_inputShape[2],
                              &stride))
    m_params.stride = stride;
  else
    m_params.stride = 0;  // requireHead names the problem when a batch comes
}

void DetectionTask::requireHead(const torch::Tensor& output) const {
  if (m_params.stride <= 0 || output.dim() != 4 || output.size(1) != m_params.classes + 5)
    throw Error("detection: the model's output is not a detection head for " +
                std::to_string(m_params.classes) + " classes (" +
                std::to_string(m_params.classes + 5) +
                " channels: class scores, 4 box distances, a centre-ness) on a map that divides "
                "the input evenly");
}

torch::Tensor DetectionTask::collate(const data::SampleSet& set,
                                     const std::vector<std::int64_t>&) const {
  throw Error(set.name + ": the detection task takes boxes, which the loader moves with the image");
}

torch::Tensor DetectionTask::collateBoxes(
    const std::vector<std::vector<target::Box>>& boxes) const {
  return targetFromBoxes(boxes);
}

std::vector<FigureSpec> DetectionTask::figureSpecs() {
  return {{"map", true, "COCO mAP@[.5:.95]: AP averaged over IoU 0.50 to 0.95 and the classes"},
          {"map50", true, "mAP at IoU 0.50 (Pascal VOC's measure)"},
          {"map75", true, "mAP at IoU 0.75"},
          {"map_small", true, "mAP@[.5:.95] of boxes under 32x32 pixels"},
          {"map_medium", true, "mAP@[.5:.95] of boxes from 32x32 to 96x96 pixels"},
          {"map_large", true, "mAP@[.5:.95] of boxes over 96x96 pixels"},
          {"recall", true, "recall averaged over IoU thresholds and classes, 100 per image"}};
}

std::optional<Problem> DetectionTask::headProblem(const graph::GraphAnalysis& a) const {
  const auto k = m_params.classes;
  if (!a.ok() || k <= 0 || a.inputShape.size() != 3) return std::nullopt;
  std::int64_t stride = 0;
  const auto problem =
      detectionOutputProblem(a.outputShape, k, a.inputShape[1], a.inputShape[2], &stride);
  if (!problem) return std::nullopt;
  std::string conv;
  for (const auto& n : a.nodes)
    if (n.op == "Conv2d") conv = n.id;
  const std::string channels = std::to_string(k + 5);
  if (a.outputShape.size() == 3 && a.outputShape[0] != k + 5 && !conv.empty())
    return Problem{"node \"" + conv + "\"", "the detection head: " + *problem, conv,
                   "set " + conv + ".out_channels to " + channels + " (" + std::to_string(k) +
                       " class scores, 4 box distances, 1 centre-ness)"};
  return Problem{"node \"" + a.outputId + "\"", "the detection head: " + *problem, a.outputId,
                 "end the model with a Conv2d of " + channels +
                     " out_channels on a feature map whose size divides the input's by a whole "
                     "stride (4, 8 or 16), without Flatten or Linear"};
}

torch::Tensor DetectionTask::loss(const torch::Tensor& output, const torch::Tensor& target,
                                  const torch::Tensor&) const {
  requireHead(output);
  return detectionLoss(output, target, m_params).total;
}

std::vector<double> DetectionTask::trainSums(const torch::Tensor&,
                                             const torch::Tensor& target) const {
  // The boxes trained on (after the crops' visible-area rule), for the log.
  return {double(target.numel() ? target.select(2, 0).ge(0).sum().item<std::int64_t>() : 0)};
}

std::map<std::string, double> DetectionTask::trainFigures(const std::vector<double>&,
                                                          std::int64_t) const {
  // mAP needs every detection of a split; training batches report their loss only.
  return {};
}

std::unique_ptr<MetricSums> DetectionTask::evalSums() const {
  return std::make_unique<DetectionSums>(*this);
}

torch::Tensor DetectionTask::syntheticTarget(std::int64_t n) const {
  const float h = m_inputShape.size() == 3 ? float(m_inputShape[1]) : 32.f;
  const float w = m_inputShape.size() == 3 ? float(m_inputShape[2]) : 32.f;
  std::vector<std::vector<target::Box>> boxes(static_cast<std::size_t>(n));
  for (auto& b : boxes)
    b.push_back({0, w / 4, h / 4, 3 * w / 4, 3 * h / 4, false, false});
  return targetFromBoxes(boxes);
}

Json DetectionTask::evaluationSchema() const {
  return figuresEvaluationSchema(
      {"detection evaluation",
       {"map", "map50", "map75", "map_small", "map_medium", "map_large", "recall"},
       {"ap", "ap50", "recall"},
       {}});
}

std::vector<SampleView> DetectionTask::describeSamples(const torch::Tensor& output,
                                                       const torch::Tensor& target) const {
  requireHead(output);
  const auto out = output.to(torch::kCPU, torch::kFloat);
  const auto detections = decodeDetections(out, m_params, int(out.size(3) * m_params.stride),
                                           int(out.size(2) * m_params.stride));
  const auto truth = target.defined() ? boxesFromTarget(target.to(torch::kCPU))
                                      : std::vector<std::vector<target::Box>>{};
  std::vector<SampleView> views(detections.size());
  for (std::size_t i = 0; i < views.size(); ++i) {
    auto& v = views[i];
    v.height = int(out.size(2) * m_params.stride);
    v.width = int(out.size(3) * m_params.stride);
    if (i < truth.size()) v.trueBoxes = truth[i];
    for (const auto& d : detections[i]) {
      v.predictedBoxes.push_back(d.box);
      v.predictedScores.push_back(d.score);
    }
    // Its errors as the Evaluation page counts them at its first score (coco_map.h).
    v.score = double(
        detectionErrors(v.trueBoxes, v.predictedBoxes, v.predictedScores, kErrorsScore).total());
  }
  return views;
}

std::unique_ptr<PredictionWriter> DetectionTask::predictionWriter(
    const std::string& path, const data::SampleSet& set) const {
  return std::make_unique<CocoPredictionWriter>(path, set, *this, m_names);
}

ExportNotes detectionExportNotes() {
  // The decoding's numbers are the head's own defaults (what eval and the studio use).
  const DetectionHeadParams p{};
  const auto number = [](double v) {
    std::ostringstream text;
    text << v;
    return text.str();
  };
  ExportNotes notes;
  notes.output = "head";
  notes.outputDescription =
      "per location of the head's map: a score per class (logits), 4 box distances (left, top, "
      "right, bottom as exp(min(x, 10)) x stride from the location's centre) and a centre-ness "
      "logit";
  notes.postprocessing =
      "score = sqrt(sigmoid(class) x sigmoid(centre-ness)); boxes from the distances around "
      "((column + 0.5) x stride, (row + 0.5) x stride), clipped to the image; scores >= " +
      number(p.scoreThreshold) + ", the " + std::to_string(p.preNms) +
      " best, class-aware non-maximum suppression at IoU " + number(p.nmsIou) + ", the " +
      std::to_string(p.maxDetections) + " best";
  notes.classScores = false;
  notes.boxDecoder = true;
  return notes;
}

}  // namespace netsmith::task
