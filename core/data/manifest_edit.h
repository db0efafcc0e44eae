#pragma once

// Changing one sample's label in a CSV manifest (format csv: path,label), as the data doctor's
// "Relabel" does: only that row's label cell is rewritten, the rest of the file stays byte for
// byte, and the file is replaced atomically. Undo is the same call with the labels swapped.
// No OpenCV, no LibTorch.
#include <cstddef>
#include <string>

namespace netsmith::data {

struct ManifestRelabel {
  std::string manifest;
  int line = 0;        ///< the row's line (1-based)
  std::string before;  ///< the label cell as it was
  std::string after;   ///< as it is now
};

/// Sets the label cell of the row of `manifest` that names `image` (a path as the csv source's
/// describe() gives it) to `label`, when that cell holds `expected` (a manifest changed since
/// it was read is not overwritten). Throws netsmith::Error naming the manifest (and line) when
/// the file is missing or a link, no row names the image, the cell holds something else, or the
/// write fails (the file is then untouched).
ManifestRelabel relabelInManifest(const std::string& manifest, const std::string& image,
                                  const std::string& expected, const std::string& label);

/// The label cell of the row of `manifest` that names `image` (a class name or an index, as the
/// file writes it). Throws netsmith::Error naming the manifest when no row names it.
std::string manifestLabel(const std::string& manifest, const std::string& image);

/// Relabelling an image folder is a move to another class folder, which the studio does not do
/// itself: it keeps a move list, a CSV "from,to" the user applies (`mv` per row, or a file
/// manager). Adds a row (replacing an earlier row of the same `from`), or removes it when `to`
/// is empty; written atomically, a link refused. Returns the rows now in the list.
std::size_t setMove(const std::string& list, const std::string& from, const std::string& to);

}  // namespace netsmith::data
