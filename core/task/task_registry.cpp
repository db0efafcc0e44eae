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

void TaskRegistry::add(TaskDef def) {
  const std::string& output = def.exportNotes.output;
  if (output.empty() || output == "input" || output == "probabilities")
    throw Error("task \"" + def.name + "\": the export's output cannot be named \"" +
                printable(output) +
                "\" (the input is \"input\", --softmax adds \"probabilities\")");
  m_defs.add(std::move(def));
}

const TaskDef& TaskRegistry::get(const std::string& name) const {
  const auto* def = find(name);
  if (!def) throw Error("task: " + unknownTaskMessage(*this, name));
  return *def;
}

std::shared_ptr<Task> TaskRegistry::make(const std::string& name, const TaskSetup& setup) const {
  return get(name).make(setup);
}

}  // namespace netsmith::task
