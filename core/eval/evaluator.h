#pragma once

// How a checkpoint of a task is evaluated (eval/evaluation.h): evaluateCheckpoint loads the
// model, the data and the task, and then the task's Evaluator runs over the split and says
// what it found, as eval's JSON and its text. Classification's evaluator gives the class view
// (top-k, per-class precision / recall / F1 / AP, calibration and temperature scaling,
// test-time augmentation, precision-recall curves, penultimate features for the embedding);
// every other task's gives its loss, figures and samples. Registered by task name in
// EvaluatorRegistry (a task without an evaluator of its own gets the figures' one), one
// bundle in Registries, so nothing outside an evaluator asks which task it evaluates. No
// LibTorch in this header.
#include <map>
#include <memory>
#include <string>

#include "common/json.h"

namespace netsmith::eval {

struct Evaluation;
struct EvaluationOptions;
struct EvaluationInput;  // eval/evaluation_input.h: the model, data and task (LibTorch)

/// Files an evaluation wrote that its report names.
struct EvaluationFiles {
  std::string predictions;  ///< eval --predictions
  std::string calibration;  ///< where a fitted temperature was recorded
};

class Evaluator {
 public:
  virtual ~Evaluator() = default;
  /// Throws netsmith::Error naming the option (as eval's flag) when `options` ask for what
  /// this evaluator cannot give the task `task` (test-time augmentation or a temperature for a
  /// task without class scores). EvaluationOptions::features is kept where an evaluator can
  /// (the class view) and left empty elsewhere.
  virtual void check(const EvaluationOptions& options, const std::string& task) const = 0;
  /// Whether it evaluates under test-time augmentation and temperature scaling
  /// (EvaluationOptions::tta, ::temperature): the Evaluation page offers them only then.
  virtual bool scalesClassScores() const { return false; }
  /// Runs the model over the split and fills `out` (its metrics, samples, and what this
  /// evaluator adds).
  virtual void evaluate(const EvaluationInput& input, Evaluation& out) const = 0;
  /// Adds what it found to `json` (evalMetricsToJson's object with the checkpoint, split and
  /// task), or takes out what does not apply to the task.
  virtual void addJson(const Evaluation& e, Json& json) const = 0;
  /// What `eval` prints after its first line (figures, per-class tables, the files written).
  virtual std::string report(const Evaluation& e, const EvaluationFiles& files) const = 0;
};

/// The class view, for tasks of one class per sample.
std::shared_ptr<const Evaluator> classViewEvaluator();
/// A task's loss, figures, per-class figures and samples (Task::evalSums, describeSamples).
std::shared_ptr<const Evaluator> figureEvaluator();

class EvaluatorRegistry {
 public:
  /// Classification's class view; every other task the figures' evaluator.
  static EvaluatorRegistry withBuiltins();
  void add(const std::string& task, std::shared_ptr<const Evaluator> evaluator);
  /// The evaluator of the task `task`: its own, else figureEvaluator().
  std::shared_ptr<const Evaluator> forTask(const std::string& task) const;

 private:
  std::map<std::string, std::shared_ptr<const Evaluator>> m_byTask;
};

}  // namespace netsmith::eval
