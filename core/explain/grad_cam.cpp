#include "explain/grad_cam.h"

#include <opencv2/imgproc.hpp>

#include <algorithm>

#include "checkpoint/loaded_model.h"
#include "common/error.h"
#include "data/data_config.h"
#include "data/sample_processor.h"
#include "explain/grad_cam_map.h"

namespace netsmith::explain {

std::string defaultGradCamNode(const graph::GraphAnalysis& analysis) {
  std::string last;
  for (const auto& n : analysis.nodes)
    if (n.op == "Conv2d" && n.valid) last = n.id;
  return last;
}

GradCamMap gradCamMap(graph::GraphModuleImpl& net, const torch::Tensor& input,
                      const std::string& node, std::int64_t targetClass) {
  const auto* info = net.analysis().find(node);
  if (!info) throw Error("Grad-CAM: no node \"" + node + "\" in the model");
  if (info->outputShape.size() != 3)
    throw Error("Grad-CAM: node \"" + node + "\" gives " + formatShape(info->outputShape) +
                ", not channels x height x width; pick a convolution or another feature map");
  if (input.dim() != 4 || input.size(0) != 1)
    throw Error("Grad-CAM: expects one image (1 x C x H x W)");
  net.eval();
  torch::AutoGradMode enable(true);
  torch::Tensor features;
  const torch::Tensor logits = net.forwardTapping(input, node, features).to(torch::kFloat);
  if (logits.dim() != 2) throw Error("Grad-CAM: the model's output is not one score per class");
  const std::int64_t classes = logits.size(1);
  GradCamMap out;
  out.probabilities = torch::softmax(logits.detach(), 1)[0];
  out.predicted = logits.argmax(1).item<std::int64_t>();
  out.targetClass = targetClass < 0 ? out.predicted : targetClass;
  if (out.targetClass >= classes)
    throw Error("Grad-CAM: class " + std::to_string(out.targetClass) +
                " is out of range (the model has " + std::to_string(classes) + " classes)");
  // The tap starts a graph of its own where the part before it is frozen (forwardTapping).
  if (!features.requires_grad()) throw Error("Grad-CAM: no gradient reaches node \"" + node + "\"");
  const auto grads = torch::autograd::grad({logits[0][out.targetClass]}, {features})[0];
  const auto weights = grads.mean({2, 3}, /*keepdim=*/true);
  auto cam = torch::relu((weights * features).sum(1, /*keepdim=*/true)).detach();
  cam = torch::nn::functional::interpolate(
      cam, torch::nn::functional::InterpolateFuncOptions()
               .size(std::vector<std::int64_t>{input.size(2), input.size(3)})
               .mode(torch::kBilinear)
               .align_corners(false));
  cam = cam[0][0];
  const double top = cam.max().item<double>();
  out.heat = top > 0 ? cam / top : torch::zeros_like(cam);
  return out;
}

std::vector<GradCam> gradCamsOfImage(const GradCamOptions& options, const cv::Mat& image,
                                     const std::vector<std::int64_t>& targetClasses) {
  if (image.empty() || image.depth() != CV_8U || (image.channels() != 1 && image.channels() != 3))
    throw Error("Grad-CAM: the image must be 8-bit grey or colour");
  auto model = checkpoint::loadModel(options.checkpoint, options.registries);
  const auto& spec = model.project.model.input;
  const std::string node =
      options.node.empty() ? defaultGradCamNode(model.net->analysis()) : options.node;
  if (node.empty())
    throw Error(options.checkpoint + ": the model has no Conv2d for Grad-CAM; name a node");
  // The picture as in training: channels, fit policy, then mean / std.
  cv::Mat fitted = data::fitImage(data::toModelChannels(image, int(spec.channels)),
                                  int(spec.height), int(spec.width), model.fit);
  if (!fitted.isContinuous()) fitted = fitted.clone();
  const int h = fitted.rows, w = fitted.cols, c = fitted.channels();
  auto x =
      torch::from_blob(fitted.ptr<float>(), {h, w, c}, torch::kFloat).permute({2, 0, 1}).clone();
  for (int k = 0; k < c; ++k) {
    const double m = k < int(model.mean.size()) ? model.mean[std::size_t(k)] : 0.0;
    const double s = k < int(model.std.size()) ? model.std[std::size_t(k)] : 1.0;
    x[k].sub_(m).div_(s);
  }
  // What every map shares: the node, the picture, the classes.
  GradCam common;
  common.checkpoint = options.checkpoint;
  common.node = node;
  for (const auto& n : model.net->analysis().nodes)
    if (n.valid && n.outputShape.size() == 3 && n.op != "Input")
      common.featureNodes.push_back(n.id);
  common.classes = model.classes;
  fitted.convertTo(common.input, CV_8U, 255.0);
  std::vector<GradCam> out;
  for (const std::int64_t target : targetClasses) {
    const auto map = gradCamMap(*model.net, x.unsqueeze(0), node, target);
    GradCam cam = common;
    cam.targetClass = map.targetClass;
    cam.predicted = map.predicted;
    const auto p = map.probabilities.contiguous();
    cam.probabilities.assign(p.data_ptr<float>(), p.data_ptr<float>() + p.numel());
    const auto heat = map.heat.contiguous();
    cam.heat = cv::Mat(h, w, CV_32F, heat.data_ptr<float>()).clone();
    out.push_back(std::move(cam));
  }
  return out;
}

GradCam gradCamOfImage(const GradCamOptions& options, const cv::Mat& image) {
  return gradCamsOfImage(options, image, {options.targetClass}).front();
}

cv::Mat gradCamOverlay(const GradCam& cam, int side) {
  cv::Mat base;
  if (cam.input.channels() == 1)
    cv::cvtColor(cam.input, base, cv::COLOR_GRAY2BGR);
  else
    cv::cvtColor(cam.input, base, cv::COLOR_RGB2BGR);
  const double scale = double(std::max(1, side)) / double(std::max(base.rows, base.cols));
  const cv::Size size(std::max(1, int(base.cols * scale)), std::max(1, int(base.rows * scale)));
  // The image keeps its pixels; the map is smooth (cubic, clamped to [0, 1] by the 8-bit
  // conversion), as Grad-CAM's coarse map is an estimate, not a per-pixel fact.
  cv::Mat image, heat, heat8, colours, out;
  cv::resize(base, image, size, 0, 0, scale >= 1 ? cv::INTER_NEAREST : cv::INTER_AREA);
  cv::resize(cam.heat, heat, size, 0, 0, cv::INTER_CUBIC);
  heat.convertTo(heat8, CV_8U, 255.0);
  cv::applyColorMap(heat8, colours, cv::COLORMAP_JET);
  cv::addWeighted(image, 0.5, colours, 0.5, 0.0, out);
  return out;
}

}  // namespace netsmith::explain
