// Placeholder registration: the color transform family is being written.
#include "augment/transform.h"

namespace netsmith::augment {

void registerColorTransforms(TransformRegistry&) {}

}  // namespace netsmith::augment
