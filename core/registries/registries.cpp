#include "registries/registries.h"

#include "common/error.h"
#include "export/exporter.h"

namespace netsmith {

std::shared_ptr<const Registries> Registries::builtins() {
  auto r = std::make_shared<Registries>();
  r->ops = ops::OpRegistry::withBuiltins();
  r->transforms = augment::TransformRegistry::withBuiltins();
  r->schedules = train::ScheduleRegistry::withBuiltins();
  r->tasks = task::TaskRegistry::withBuiltins();
  r->evaluators = eval::EvaluatorRegistry::withBuiltins();
  r->exporters =
      std::make_shared<exporting::ExporterRegistry>(exporting::ExporterRegistry::withBuiltins());
  return r;
}

const Registries& needRegistries(const RegistriesPtr& registries, const char* owner) {
  if (!registries) throw Error(std::string(owner) + ": no registries were given");
  return *registries;
}

}  // namespace netsmith
