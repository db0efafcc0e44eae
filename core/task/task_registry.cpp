#include "task/task_registry.h"

#include "common/error.h"
#include "task/classification.h"
#include "task/task.h"

namespace netsmith::task {

TaskRegistry TaskRegistry::withBuiltins() {
  TaskRegistry r;
  r.add(TaskDef{kClassification, "single-label classification: one class per sample", "tasks",
                [](const TaskSetup& s) { return std::make_shared<ClassificationTask>(s); },
                classificationExportNotes()});
  return r;
}

ExportNotes classificationExportNotes() {
  ExportNotes notes;
  notes.output = "logits";
  notes.outputDescription = "one score per class, in the order of the classes";
  notes.postprocessing =
      "the predicted class is the highest score; softmax gives probabilities (--softmax adds "
      "them as a second output, \"probabilities\")";
  notes.classScores = true;
  return notes;
}

std::string unknownTaskMessage(const TaskRegistry& registry, const std::string& name) {
  if (registry.find(name)) return {};
  std::string known;
  for (const auto& n : registry.names())
    known += (known.empty() ? "" : ", ") + n;
  return "unknown task \"" + printable(name) + "\"; this program knows " + known;
}

std::shared_ptr<Task> TaskRegistry::make(const std::string& name, const TaskSetup& setup) const {
  const auto* def = find(name);
  if (!def) throw Error("task: " + unknownTaskMessage(*this, name));
  return def->make(setup);
}

}  // namespace netsmith::task
