// Batch family: MixUp, CutMix and Mosaic. Declared here (schema, help); applied to whole batches of
// tensors by augment/batch_mix.h.
#include "augment/transform.h"

namespace netsmith::augment {

void registerBatchTransforms(TransformRegistry& registry) {
  using schema::ParamSpec;
  TransformDef mixup;
  mixup.name = "MixUp";
  mixup.group = "Batch";
  mixup.help = "blends pairs of images and their labels with a Beta(alpha, alpha) weight";
  mixup.schema = {ParamSpec::real("alpha", 0.2, "Beta distribution parameter; larger mixes more")
                      .above(0)
                      .atMost(100)};
  mixup.batchLevel = true;
  mixup.targets = TargetEffect::Breaks;  // a blended mask is no class
  registry.add(std::move(mixup));

  TransformDef cutmix;
  cutmix.name = "CutMix";
  cutmix.group = "Batch";
  cutmix.help =
      "pastes a box from another image; labels mixed by the box's area (masks: the box of the "
      "partner's mask is pasted with it)";
  cutmix.schema = {ParamSpec::real("alpha", 1.0, "Beta distribution parameter for the box area")
                       .above(0)
                       .atMost(100)};
  cutmix.batchLevel = true;
  cutmix.targets = TargetEffect::Moves;  // the loader pastes the partner's mask with the box
  registry.add(std::move(cutmix));

  TransformDef mosaic;
  mosaic.name = "Mosaic";
  mosaic.group = "Batch";
  mosaic.help =
      "four images in one: the image and three others of its batch, each at half size in a "
      "quadrant, their boxes moved with them (detection)";
  mosaic.defaultProbability = 0.5;
  mosaic.batchLevel = true;
  mosaic.targets = TargetEffect::Moves;  // the loader moves the boxes with the quadrants
  registry.add(std::move(mosaic));
}

}  // namespace netsmith::augment
