#pragma once

// An evaluation's samples laid out in 2-D (tsne.h): the rows of features to lay out, and the
// layout written as CSV (`netsmith-cli eval --embedding FILE`, what the Evaluation page's
// Embedding tab draws). No LibTorch.
#include <cstdint>
#include <string>
#include <vector>

#include "eval/tsne.h"

namespace netsmith::eval {

struct Evaluation;

/// The features of an evaluation's kept samples (eval::Evaluation::features), a row each, in
/// the order of its samples.
struct EmbeddingRows {
  std::vector<float> features;  ///< row-major, `width` a row
  std::int64_t width = 0;
  std::vector<std::size_t> samples;  ///< each row's index in Evaluation::samples
};

EmbeddingRows embeddingRows(const eval::Evaluation& evaluation);

/// One line per laid-out sample: position,sample,label,predicted,confidence,x,y,f0..f{width-1}
/// (sample: as the predictions file names it)
/// (written atomically). Throws netsmith::Error naming the file when it cannot be written.
void writeEmbeddingCsv(const std::string& path, const eval::Evaluation& evaluation,
                       const EmbeddingRows& rows, const Embedding& embedding);

}  // namespace netsmith::eval
