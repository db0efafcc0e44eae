// Placeholder registration: the noise transform family is being written.
#include "augment/transform.h"

namespace netsmith::augment {

void registerNoiseTransforms(TransformRegistry&) {}

}  // namespace netsmith::augment
