// Placeholder registration: the geometric transform family is being written.
#include "augment/transform.h"

namespace netsmith::augment {

void registerGeometricTransforms(TransformRegistry&) {}

}  // namespace netsmith::augment
