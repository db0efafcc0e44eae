// `netsmith-cli eval CHECKPOINT --gradcam IMAGE`: where in the image the class's score comes
// from (core/explain/grad_cam.h), written as the image with the heat map over it.
#include <opencv2/imgcodecs.hpp>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <vector>

#include "cli/cli_args.h"
#include "cli/cli_commands.h"
#include "common/file_util.h"
#include "common/json.h"
#include "data/dataset_source.h"
#include "explain/grad_cam.h"

namespace netsmith::cli {

int runGradCam(const Args& args, const RegistriesPtr& registries) {
  explain::GradCamOptions o;
  o.registries = registries;
  o.checkpoint = args.one("CHECKPOINT");
  o.node = args.option("--gradcam-node");
  o.targetClass = args.integer("--gradcam-class", -1, 0, 1 << 24);
  const std::string image = args.option("--gradcam");
  std::string out = args.option("--out");
  if (out.empty()) out = std::filesystem::path(image).stem().string() + "-gradcam.png";
  const auto cam = explain::gradCamOfImage(o, data::decodeImageFile(image));
  const cv::Mat overlay = explain::gradCamOverlay(cam);
  std::vector<unsigned char> png;
  if (!cv::imencode(".png", overlay, png)) throw Error(out + ": cannot encode the overlay");
  writeFileAtomically(out, std::string(png.begin(), png.end()));
  auto name = [&cam](std::int64_t c) {
    return c < std::int64_t(cam.classes.size()) ? cam.classes[std::size_t(c)] : std::to_string(c);
  };
  if (args.has("--json")) {
    Json j{{"checkpoint", cam.checkpoint},
           {"image", image},
           {"node", cam.node},
           {"class", cam.targetClass},
           {"class_name", name(cam.targetClass)},
           {"predicted", cam.predicted},
           {"predicted_name", name(cam.predicted)},
           {"probabilities", cam.probabilities},
           {"overlay", out}};
    std::cout << j.dump(2) << '\n';
    return kExitOk;
  }
  std::printf("Grad-CAM of class %lld (%s, %.1f%%) at node %s; predicted %lld (%s, %.1f%%)\n",
              static_cast<long long>(cam.targetClass), name(cam.targetClass).c_str(),
              100.0 * cam.probabilities.at(std::size_t(cam.targetClass)), cam.node.c_str(),
              static_cast<long long>(cam.predicted), name(cam.predicted).c_str(),
              100.0 * cam.probabilities.at(std::size_t(cam.predicted)));
  std::printf("%s: the image with the map over it (%dx%d px)\n", out.c_str(), overlay.cols,
              overlay.rows);
  return kExitOk;
}

}  // namespace netsmith::cli
