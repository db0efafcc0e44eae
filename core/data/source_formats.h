#pragma once

// The data source formats, each described once: its name in the project file, a title, what
// it reads, its keys (what each holds, whether a person picks a file, a folder or a list of
// files), whether it holds one file per image, and how it is opened. The `data` section's
// reader checks a source against its description, `openSource` opens it through it, the Data
// page builds its format list and path fields from it and `netsmith-cli formats` prints it.
// A new format is an entry in sourceFormats() and an opener. No LibTorch, no OpenCV here.
#include <memory>
#include <string>
#include <vector>

#include "common/json.h"
#include "data/data_config.h"

namespace netsmith::data {

class DatasetSource;

/// One key of a source besides "format" and "limit".
struct SourceField {
  enum class Kind { File, Folder, FileList };
  std::string key;
  Kind kind = Kind::File;
  std::string help;
  std::string SourceSpec::*path = nullptr;               ///< File, Folder: where it is kept
  std::vector<std::string> SourceSpec::*list = nullptr;  ///< FileList
};

using SourceOpener = std::shared_ptr<DatasetSource> (*)(const SourceSpec& spec,
                                                        const std::vector<std::string>& classes,
                                                        ErrorPolicy policy);

/// What data.classes does for a format, and so what a class editor may change.
enum class ClassNaming {
  None,     ///< its samples have no classes (regression targets)
  Names,    ///< data.classes names the class indices the data holds: each may be renamed
  Order,    ///< the data names its classes; data.classes is their output order: reorder only
  Folders,  ///< the class folders' names, sorted: a class is renamed by renaming its folder
  Fixed,    ///< the data names and orders its classes; data.classes may only repeat them
};

struct SourceFormatDef {
  std::string name;  ///< "image_folder"
  SourceFormat format = SourceFormat::Idx;
  std::string title;                ///< "Image folder"
  std::string help;                 ///< what it reads, one or two sentences
  std::vector<SourceField> fields;  ///< all required; the first is the one a form shows first
  bool imageFiles = false;          ///< one file per image (sizes worth a histogram)
  /// What its samples' targets are: a project's task must take this kind.
  TargetKind targets = TargetKind::ClassIndex;
  ClassNaming classNaming = ClassNaming::Names;
  Json example;  ///< a source as a project writes it
  SourceOpener open = nullptr;
};

/// Every format, in the order forms list them.
const std::vector<SourceFormatDef>& sourceFormats();
/// The format named `name`, or nullptr.
const SourceFormatDef* findSourceFormat(const std::string& name);
/// The format of a data section's training source (`data.train.format`), or nullptr when the
/// section names none it knows.
const SourceFormatDef* trainSourceFormat(const Json& data);
/// How a data section's classes are named and ordered: its training source's format says
/// (Fixed when the section names no format it knows). The Data page's class list follows it.
ClassNaming classNamingOf(const Json& data);
const SourceFormatDef& sourceFormat(SourceFormat format);
/// The help of the "limit" key every source takes.
const std::string& sourceLimitHelp();

/// Every path a source names (its files and folders), in its format's field order.
std::vector<std::string> sourcePaths(const SourceSpec& spec);

/// The formats as JSON (name, title, help, keys with kind and help, example): what
/// `netsmith-cli formats --json` prints.
Json sourceFormatsToJson();
/// One block per format, as `netsmith-cli formats` prints it.
std::string sourceFormatsToText();
std::string sourceFieldKindName(SourceField::Kind kind);

}  // namespace netsmith::data
