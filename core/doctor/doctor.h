#pragma once

// The data doctor: `netsmith-cli doctor PROJECT` and the Data page's Doctor tab. It looks at a
// classification project's training data (the whole training source: a validation split cut
// from it is examined with it) and its test and validation sources for
//  - likely label errors: out-of-sample class probabilities from k-fold cross-training (each
//    fold a short run of the project's own model, augmentation and optimizer on the other
//    folds), or from a trained checkpoint (in-sample: it hides errors it memorised, and the
//    report says so), ranked by confident learning (confident_learning.h);
//  - exact and near duplicates, within the training data and across splits (leakage), from
//    image_hash.h;
//  - outliers: far from every class in the fold models' penultimate features, or of another
//    size, channel count or brightness than the rest;
//  - class balance.
// Everything it writes goes in its folder: doctor.json (the report), report.html,
// label_ranking.csv (every sample, most suspicious first), and fold-N/ (each fold's run and
// its held-out outputs). Stopped, it keeps every finished fold and the running fold's last
// checkpoint; run again with the same settings, it goes on from there. No LibTorch here.
#include <cstdint>
#include <functional>
#include <opencv2/core/mat.hpp>
#include <string>

#include "doctor/doctor_report.h"
#include "project/project.h"
#include "registries/registries_fwd.h"
#include "task/task_registry.h"

namespace netsmith::doctor {

struct DoctorProgress {
  std::string stage;      ///< "images", "duplicates", "fold 2/3", "report"
  double fraction = 0;    ///< of the whole job, 0..1
  double seconds = 0;     ///< since this call started
  double remaining = -1;  ///< estimated seconds left (-1: not known yet)
  std::string message;
};

struct DoctorOptions {
  std::string folder;  ///< made when missing (a link there is refused)
  int folds = 3;
  std::int64_t epochs = 2;  ///< the short schedule of each fold (train.epochs)
  std::int64_t limit = 0;   ///< a stratified subset of the training data (0: all of it)
  /// Use this checkpoint's outputs for the label probabilities instead of cross-training.
  std::string checkpoint;
  bool labels = true;  ///< false: duplicates, balance and image outliers only (no training)
  std::uint64_t seed = 0;
  /// Called a few times a second; return false to stop (resumable).
  std::function<bool(const DoctorProgress&)> progress;
  std::function<void(const std::string&)> log;
  /// When set: called, before the report is returned, with a small picture (at most 64 pixels
  /// a side, RGB or grey) of every sample the report lists (the studio's galleries).
  std::function<void(const SampleRef&, const cv::Mat&)> thumbnail;
  /// The program's registries: the folds train with them, the task is looked up in them.
  RegistriesPtr registries;
};

/// Runs the doctor on `loaded` (a valid project). Writes the report files into the folder
/// (also when stopped: what was found so far, `stopped` set). Throws netsmith::Error naming the
/// place when the data cannot be read, the folder holds a doctor run of other settings, or the
/// project's task has no class labels to check (then only `labels = false` runs).
DoctorReport runDoctor(const project::LoadedProject& loaded, const DoctorOptions& options);

/// Whether the doctor checks the labels of a project of task `def`: one class per sample (the
/// other tasks get duplicates, balance and outliers, with `labels = false`).
bool checksLabelsOf(const task::TaskDef& def);

/// Where the doctor of project file `projectPath` writes by default, relative to a base folder
/// (the CLI's working folder, the studio's project folder): doctor/STEM, STEM the file's name
/// without .json and .netsmith.
std::string defaultDoctorFolder(const std::string& projectPath);

}  // namespace netsmith::doctor
