#include "augment/transform.h"

namespace netsmith::augment {

TransformRegistry TransformRegistry::withBuiltins() {
  TransformRegistry r;
  registerGeometricTransforms(r);
  registerColorTransforms(r);
  registerNoiseTransforms(r);
  registerPolicyTransforms(r);
  registerNormalizeTransform(r);
  registerBatchTransforms(r);
  return r;
}

}  // namespace netsmith::augment
