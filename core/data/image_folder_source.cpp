// Image folders: root/<class>/**/*.png|jpg|jpeg|bmp|webp|tif, classes sorted by name (as
// torchvision's ImageFolder does). Images in folders nested inside a class folder belong to
// that class (root/cat/2024/a.png is a cat). Entries whose name starts with a dot are hidden
// and ignored, at every level (.ipynb_checkpoints, .DS_Store, ._a.png). Images are decoded
// lazily.
#include <algorithm>
#include <filesystem>

#include "data/dataset_source.h"

namespace netsmith::data {

namespace {

namespace fs = std::filesystem;

bool hidden(const fs::path& p) {
  const std::string name = p.filename().string();
  return !name.empty() && name[0] == '.';
}

class ImageFolderSource : public FileListSource {
 public:
  ImageFolderSource(const SourceSpec& spec, const std::vector<std::string>& classes) {
    const std::string where = spec.path + ".root: " + spec.root;
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
    if (!classes.empty() && classes != folders) {
      std::string list;
      for (const auto& f : folders)
        list += (list.empty() ? "" : ", ") + f;
      throw Error("data.classes: does not match the class folders of " + spec.root + " (" + list +
                  "); remove data.classes or rename the folders");
    }
    m_classes = folders;
    for (std::size_t k = 0; k < folders.size(); ++k) {
      const fs::path dir = fs::path(spec.root) / folders[k];
      std::vector<std::string> files;
      for (auto it = fs::recursive_directory_iterator(
               dir, fs::directory_options::follow_directory_symlink, ec);
           it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (ec) break;
        if (hidden(it->path())) {
          if (it->is_directory()) it.disable_recursion_pending();
          continue;
        }
        if (!it->is_regular_file()) continue;
        const std::string path = it->path().string();
        if (isImageFileName(path)) {
          files.push_back(path);
        } else {
          m_skipped.push_back({path, "not an image file (extension)"});
        }
      }
      if (files.empty()) {
        throw Error(where + ": class folder \"" + folders[k] +
                    "\" has no images (png, jpg, jpeg, bmp, webp, tif); "
                    "add images or remove the folder");
      }
      std::sort(files.begin(), files.end());
      for (auto& f : files) {
        m_files.push_back(std::move(f));
        m_labels.push_back(static_cast<std::int64_t>(k));
      }
    }
  }
};

}  // namespace

std::shared_ptr<DatasetSource> openImageFolderSource(const SourceSpec& spec,
                                                     const std::vector<std::string>& classes,
                                                     ErrorPolicy) {
  return std::make_shared<ImageFolderSource>(spec, classes);
}

}  // namespace netsmith::data
