// Placeholder registration: the policy transform family is being written.
#include "augment/transform.h"

namespace netsmith::augment {

void registerPolicyTransforms(TransformRegistry&) {}

}  // namespace netsmith::augment
