#pragma once

// What the Doctor tab does with a finding: relabel a sample (a CSV manifest's row rewritten; an
// image folder's sample added to the move list in the doctor's folder, since the studio moves
// no file itself) and exclude a sample (data.exclude). Each is one step on the document's undo
// stack (Edit > Undo), so nothing is changed behind the user's back and everything can be taken
// back. Sources whose labels live in binary files (IDX, CIFAR) cannot be relabelled: exclude.
#include <QString>

#include <cstdint>
#include <string>
#include <vector>

namespace netsmith::doctor {
struct SampleRef;
}

namespace netsmith::ui {

class ProjectDocument;

/// How a sample would be relabelled.
struct RelabelPlan {
  enum class Kind { None, Manifest, MoveList } kind = Kind::None;
  QString why;          ///< Kind::None: why not ("IDX files cannot be relabelled here...")
  std::string file;     ///< the manifest, or the move list
  std::string image;    ///< the sample's image file
  std::string before;   ///< Manifest: the label cell now
  std::string after;    ///< Manifest: the new cell; MoveList: the target path
  QString description;  ///< for the undo step and the status line
};

/// Works out how `sample` of the open project would get class `to`. Reads the manifest (to
/// write the label as it writes them: a name or an index); makes no change.
RelabelPlan planRelabel(const ProjectDocument& document, const doctor::SampleRef& sample,
                        std::int64_t to, const std::vector<std::string>& classes,
                        const QString& doctorFolder);

/// Carries the plan out as one undo step. Returns "" or the error (nothing changed then).
QString relabel(ProjectDocument* document, const RelabelPlan& plan);

/// The data.exclude entry of `sample` (relative to the project's folder when inside it).
std::string excludeEntry(const ProjectDocument& document, const doctor::SampleRef& sample);
/// Whether data.exclude lists `sample`.
bool isExcluded(const ProjectDocument& document, const doctor::SampleRef& sample);
/// Adds `sample` to data.exclude (an undoable edit of the data section). No-op when listed.
void excludeSample(ProjectDocument* document, const doctor::SampleRef& sample);

}  // namespace netsmith::ui
