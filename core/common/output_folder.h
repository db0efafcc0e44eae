#pragma once

#include <set>
#include <string>

namespace netsmith {

/// A folder that a command fills with its outputs and may fill again on a later run (`eval
/// --predictions DIR` for segmentation). It is written only when it is new, empty, or carries
/// the marker (`.netsmith-output.json`) that an earlier output of the same kind left; only the
/// files that marker lists are ever removed, and a file that is there without being listed is
/// never replaced. So a data set's own folder (`make-dataset scenes` names its masks as
/// predictions are named) is refused as a whole and nothing in it changes.
///
///   OutputFolder out("preds", "segmentation predictions");  // refuses a foreign folder
///   out.folder("masks");                                      // preds/masks, a real folder
///   const auto path = out.claim("masks/000000.png");          // refuses a foreign file
///   ... write path ...
///   out.record();                                             // the marker lists what it wrote
class OutputFolder {
 public:
  /// Opens (creating when missing; its parent must exist) the folder `path` for outputs of
  /// `kind`, and removes the files an earlier output of that kind listed (links themselves,
  /// never what they point to). Throws netsmith::Error naming the folder when it is a link or
  /// not a folder, holds files of anything else, or carries another kind's marker.
  OutputFolder(std::string path, std::string kind);

  /// The folder's path, without a trailing slash.
  const std::string& path() const { return m_path; }

  /// Makes `relative` (one level, e.g. "masks") a real folder inside, refusing a link.
  void folder(const std::string& relative);

  /// The path of `relative` inside the folder, listed as this output's: refuses (naming it) a
  /// file or link already there that no earlier output of this kind listed.
  std::string claim(const std::string& relative);

  /// Writes the marker with every file claimed so far (atomically): the next run removes
  /// those. Call it once the names are claimed, before writing them, so that a run stopped
  /// half-way still leaves a folder the next run can replace.
  void record();

  /// The marker's file name.
  static constexpr const char* kMarker = ".netsmith-output.json";

  /// Throws netsmith::Error unless `path` could be opened as an OutputFolder of `kind` (the
  /// same checks, nothing created or removed): for commands that check before long work.
  static void check(const std::string& path, const std::string& kind);

 private:
  /// The files the marker in m_path lists ("" kind and nothing when there is no marker).
  static std::set<std::string> readMarker(const std::string& path, const std::string& kind,
                                          bool& marked);
  void writeMarker(const std::set<std::string>& files) const;

  std::string m_path;
  std::string m_kind;
  std::set<std::string> m_claimed;
};

/// Throws netsmith::Error naming `path` unless a file can be written there: not empty, its
/// folder exists, and nothing but a regular file or a link (replaced, not followed) is in its
/// place. For commands that write a file at the end of long work, checked before it starts.
void checkOutputFile(const std::string& path);

}  // namespace netsmith
