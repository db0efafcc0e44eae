// Image folders: root/<class>/**/*.png|jpg|jpeg|bmp|webp|tif, classes sorted by name (as
// torchvision's ImageFolder does). Images in folders nested inside a class folder belong to
// that class (root/cat/2024/a.png is a cat). Entries whose name starts with a dot are hidden
// and ignored, at every level (.ipynb_checkpoints, .DS_Store, ._a.png). Images are decoded
// lazily.
#include <algorithm>
#include <filesystem>
#include <set>

#include "common/json.h"

#include "data/dataset_source.h"

namespace netsmith::data {

namespace {

namespace fs = std::filesystem;

bool validUtf8(const std::string& s) {
  try {
    (void)Json(s).dump();
    return true;
  } catch (const Json::type_error&) {
    return false;
  }
}

bool hidden(const fs::path& p) {
  const std::string name = p.filename().string();
  return !name.empty() && name[0] == '.';
}

class ImageFolderSource : public FileListSource {
 public:
  ImageFolderSource(const SourceSpec& spec, const std::vector<std::string>& classes) {
    const std::string where = spec.path + ".root: " + spec.root;
    const std::vector<std::string> folders = listClassFolders(spec, where);
    checkClassFolders(spec, where, classes, folders);
    m_classes = folders;
    std::vector<std::string> empty;  // reported together, with what was skipped, at the end
    for (std::size_t k = 0; k < folders.size(); ++k) {
      const fs::path dir = fs::path(spec.root) / folders[k];
      std::vector<std::string> files = listClassImages(spec, folders, dir);
      if (files.empty()) {
        empty.push_back(folders[k]);
        continue;
      }
      std::sort(files.begin(), files.end());
      for (auto& f : files) {
        m_files.push_back(std::move(f));
        m_labels.push_back(static_cast<std::int64_t>(k));
      }
    }
    if (!empty.empty()) throw Error(emptyFoldersMessage(where, empty, m_skipped));
  }

 private:
  /// The root's class folders, sorted (what else lies in the root is noted as skipped). Throws
  /// when the root is missing, not a folder, cannot be listed or has no class folders.
  std::vector<std::string> listClassFolders(const SourceSpec& spec, const std::string& where) {
    std::error_code ec;
    if (!fs::exists(spec.root, ec)) throw Error(where + ": folder not found");
    if (!fs::is_directory(spec.root, ec)) throw Error(where + ": not a folder");
    std::vector<std::string> folders;
    for (const auto& entry : fs::directory_iterator(spec.root, ec)) {
      if (hidden(entry.path())) continue;
      if (entry.is_directory()) {
        folders.push_back(entry.path().filename().string());
      } else {
        m_skipped.push_back({entry.path().string(), "not inside a class folder"});
      }
    }
    if (ec) throw Error(where + ": cannot list (" + ec.message() + ")");
    std::sort(folders.begin(), folders.end());
    if (folders.empty()) {
      throw Error(where + ": no class folders; expected " + spec.root + "/<class>/<image files>");
    }
    return folders;
  }

  /// Refuses class folders that differ from data.classes (when given) or whose names are not
  /// valid UTF-8.
  static void checkClassFolders(const SourceSpec& spec, const std::string& where,
                                const std::vector<std::string>& classes,
                                const std::vector<std::string>& folders) {
    if (!classes.empty() && classes != folders) {
      std::string list;
      for (const auto& f : folders)
        list += (list.empty() ? "" : ", ") + f;
      throw Error("data.classes: does not match the class folders of " + spec.root + " (" + list +
                  "); remove data.classes or rename the folders");
    }
    for (const auto& f : folders) {
      if (!validUtf8(f)) {
        throw Error(where + ": the class folder \"" +
                    Json(f).dump(-1, ' ', true, Json::error_handler_t::replace).substr(1) +
                    " has a name that is not valid UTF-8 (run folders, checkpoints and exports "
                    "store class names as text); rename it");
      }
    }
  }

  /// The image files anywhere under the class folder `dir`; never into the root or a class
  /// folder through a link.
  std::vector<std::string> listClassImages(const SourceSpec& spec,
                                           const std::vector<std::string>& folders,
                                           const fs::path& dir) {
    std::error_code ec;
    std::set<fs::path> visited{fs::weakly_canonical(spec.root, ec)};
    for (const auto& f : folders)
      visited.insert(fs::weakly_canonical(fs::path(spec.root) / f, ec));
    return imageFilesUnder(dir.string(), visited, m_skipped);
  }

  /// Every class folder without images, and what the listing skipped (often the reason: files
  /// of another extension), in one message.
  static std::string emptyFoldersMessage(const std::string& where,
                                         const std::vector<std::string>& empty,
                                         const std::vector<SkippedItem>& skipped) {
    std::string names;
    for (std::size_t i = 0; i < empty.size() && i < 8; ++i)
      names += (i ? ", \"" : "\"") + printable(empty[i]) + "\"";
    if (empty.size() > 8) names += " and " + std::to_string(empty.size() - 8) + " more";
    std::string text = where + (empty.size() == 1 ? ": class folder " : ": class folders ") +
                       names + (empty.size() == 1 ? " has" : " have") +
                       " no images (png, jpg, jpeg, bmp, webp, tif); add images or remove " +
                       (empty.size() == 1 ? "the folder" : "the folders");
    if (!skipped.empty()) {
      text += "; " + std::to_string(skipped.size()) + " file" + (skipped.size() == 1 ? "" : "s") +
              " skipped while listing:";
      for (std::size_t i = 0; i < skipped.size() && i < 5; ++i)
        text += "\n  " + printable(skipped[i].item) + ": " + skipped[i].reason;
      if (skipped.size() > 5) text += "\n  and " + std::to_string(skipped.size() - 5) + " more";
    }
    return text;
  }
};

}  // namespace

std::vector<std::string> imageFilesUnder(const std::string& dir, std::set<fs::path>& visited,
                                         std::vector<SkippedItem>& skipped) {
  std::error_code ec;
  std::vector<std::string> files;
  visited.insert(fs::weakly_canonical(dir, ec));
  for (auto it = fs::recursive_directory_iterator(dir,
                                                  fs::directory_options::follow_directory_symlink |
                                                      fs::directory_options::skip_permission_denied,
                                                  ec);
       it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (ec) {
      skipped.push_back({it->path().string(), "cannot be listed (" + ec.message() + ")"});
      break;
    }
    std::error_code sec;
    const auto status = it->status(sec);
    if (sec) {
      skipped.push_back({it->path().string(), "cannot be read (" + sec.message() + ")"});
      if (it->is_symlink(sec)) it.disable_recursion_pending();
      continue;
    }
    if (hidden(it->path())) {
      if (fs::is_directory(status)) it.disable_recursion_pending();
      continue;
    }
    if (fs::is_directory(status)) {
      if (!visited.insert(fs::weakly_canonical(it->path(), sec)).second) {
        it.disable_recursion_pending();
        skipped.push_back({it->path().string(), "a link to a folder already listed"});
      }
      continue;
    }
    if (!fs::is_regular_file(status)) continue;
    const std::string path = it->path().string();
    if (isImageFileName(path)) {
      files.push_back(path);
    } else {
      skipped.push_back({path, "not an image file (extension)"});
    }
  }
  return files;
}

namespace {

/// Images to predict on (openImageList): files without targets.
class ImageListSource : public FileListSource {
 public:
  ImageListSource(const std::vector<std::string>& inputs, const std::vector<std::string>& classes) {
    m_classes = classes;
    std::set<fs::path> visited;
    std::set<fs::path> seen;  // the same file named twice, or found under two inputs
    const auto take = [&](const std::string& path) {
      std::error_code ec;
      if (seen.insert(fs::weakly_canonical(path, ec)).second) m_files.push_back(path);
    };
    for (const auto& input : inputs) {
      std::error_code ec;
      const auto status = fs::status(input, ec);
      if (ec || !fs::exists(status)) throw Error(input + ": not found");
      if (fs::is_directory(status)) {
        auto files = imageFilesUnder(input, visited, m_skipped);
        std::sort(files.begin(), files.end());
        for (const auto& f : files)
          take(f);
      } else {
        take(input);  // named by the user: its bytes decide whether it is an image
      }
    }
    m_labels.assign(m_files.size(), -1);
    if (m_files.empty()) {
      std::string why;
      for (std::size_t i = 0; i < m_skipped.size() && i < 3; ++i)
        why +=
            (why.empty() ? " (skipped: " : "; ") + m_skipped[i].item + ": " + m_skipped[i].reason;
      if (!why.empty()) why += m_skipped.size() > 3 ? "; ...)" : ")";
      throw Error("no image to predict on in " + std::to_string(inputs.size()) + " input(s)" + why);
    }
  }
  bool labelled() const override { return false; }
};

}  // namespace

std::shared_ptr<DatasetSource> openImageList(const std::vector<std::string>& inputs,
                                             const std::vector<std::string>& classes) {
  return std::make_shared<ImageListSource>(inputs, classes);
}

std::shared_ptr<DatasetSource> openImageFolderSource(const SourceSpec& spec,
                                                     const std::vector<std::string>& classes,
                                                     ErrorPolicy) {
  return std::make_shared<ImageFolderSource>(spec, classes);
}

}  // namespace netsmith::data
