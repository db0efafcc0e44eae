#pragma once

// The JSON schema of an evaluation result (Task::evaluationSchema), for a task whose result is
// the loss, the sample count, its figures and figures per class (or per target).
#include <string>
#include <vector>

#include "common/json.h"

namespace netsmith::task {

struct FiguresSchema {
  /// "multi-label evaluation".
  std::string title;
  /// The figures the result must have (figures.<name>).
  std::vector<std::string> figures;
  /// The per-class figures it must have, and those it may have besides; each an array of a
  /// number (or null) per `perWhat`.
  std::vector<std::string> perClass;
  std::vector<std::string> perClassOptional;
  std::string perWhat = "[class]";
  /// Further properties, required too (segmentation's confusion).
  Json extra = Json::object();
};

/// The schema: loss, samples, figures, per_class_figures and the `extra` properties required.
Json figuresEvaluationSchema(const FiguresSchema& s);

}  // namespace netsmith::task
