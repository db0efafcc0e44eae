#pragma once

// Grad-CAM (Selvaraju et al., 2017): which parts of an image a class's score comes from. At a
// node with a K x h x w output A (by default the model's last convolution), the class score's
// gradient dS/dA is averaged over h x w into one weight per channel; the map is
// ReLU(sum_k w_k A_k), resized bilinearly to the model's input and divided by its maximum.
// `netsmith-cli eval --gradcam IMAGE` and the studio's Evaluation page both call this, so they
// draw the same map. No LibTorch in this header (see grad_cam_map.h for the tensor version).
#include <cstdint>
#include <string>
#include <vector>

#include <opencv2/core/mat.hpp>

#include "registries/registries_fwd.h"

namespace netsmith::explain {

struct GradCamOptions {
  std::string checkpoint;
  std::string node;               ///< "" : the model's last Conv2d
  std::int64_t targetClass = -1;  ///< -1 : the predicted class
  RegistriesPtr registries;       ///< the program's: its ops build the model
};

struct GradCam {
  std::string checkpoint;
  std::string node;                       ///< where the map was taken
  std::vector<std::string> featureNodes;  ///< every node a map can be taken at, in model order
  std::int64_t targetClass = 0;
  std::int64_t predicted = 0;
  std::vector<std::string> classes;
  std::vector<double> probabilities;  ///< softmax of the logits, one per class
  cv::Mat input;  ///< the image as the model saw it, 8-bit, H x W (x 3), before normalisation
  cv::Mat heat;   ///< CV_32F, H x W (the model's input size), in [0, 1]
};

/// Grad-CAM of an 8-bit image as decoded from a file (any size, 1 or 3 channels): brought to the
/// model's channels and size with the checkpoint's fit policy and normalised with its mean/std,
/// as in training. Throws netsmith::Error naming the checkpoint, the node or the class.
GradCam gradCamOfImage(const GradCamOptions& options, const cv::Mat& image);
/// The same for several classes (-1: the predicted one), the checkpoint read once; in order.
/// `options.targetClass` is not used.
std::vector<GradCam> gradCamsOfImage(const GradCamOptions& options, const cv::Mat& image,
                                     const std::vector<std::int64_t>& targetClasses);

/// The image with the map laid over it (jet colours at 50%), 8-bit BGR, its longer side
/// `side` pixels (nearest-neighbour, so small inputs stay sharp).
cv::Mat gradCamOverlay(const GradCam& cam, int side = 280);

}  // namespace netsmith::explain
