#pragma once

// Changing one sample's label in a CSV manifest (format csv: path,label), as the data doctor's
// "Relabel" does: only that row's label cell is rewritten, the rest of the file stays byte for
// byte, and the file is replaced atomically. Undo is the same call with the labels swapped.
// No OpenCV, no LibTorch.
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

}  // namespace netsmith::data
