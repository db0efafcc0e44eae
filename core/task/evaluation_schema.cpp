#include "task/evaluation_schema.h"

namespace netsmith::task {

Json figuresEvaluationSchema(const FiguresSchema& s) {
  const Json number{{"type", {"number", "null"}}};
  const Json perItem{{"type", "array"}, {"items", number}, {"description", s.perWhat}};
  Json required = Json::array({"loss", "samples", "figures", "per_class_figures"});
  Json perClass = Json::object();
  for (const auto* names : {&s.perClass, &s.perClassOptional})
    for (const auto& name : *names)
      perClass[name] = perItem;
  Json properties{
      {"loss", number},
      {"samples", {{"type", "integer"}, {"minimum", 0}}},
      {"figures", {{"type", "object"}, {"required", s.figures}}},
      {"per_class_figures",
       {{"type", "object"}, {"required", s.perClass}, {"properties", std::move(perClass)}}}};
  for (const auto& [name, property] : s.extra.items()) {
    required.push_back(name);
    properties[name] = property;
  }
  return Json{{"$schema", "https://json-schema.org/draft/2020-12/schema"},
              {"title", s.title},
              {"type", "object"},
              {"required", std::move(required)},
              {"properties", std::move(properties)}};
}

}  // namespace netsmith::task
