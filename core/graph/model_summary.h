#pragma once

#include <cstdint>
#include <string>

#include "common/json.h"
#include "graph/graph_analysis.h"

namespace netsmith::graph {

/// What `netsmith-cli summary` shows and the studio's model page lists.
struct ModelSummary {
  const GraphAnalysis* analysis = nullptr;
  std::int64_t batchSize = 64;
  std::string optimizer = "adam";
  MemoryEstimate memory;
};

ModelSummary makeSummary(const GraphAnalysis& analysis, std::int64_t batchSize,
                         const std::string& optimizer, double momentum);

/// {"layers":[{"id","op","output_shape":[...],"params","macs"}...],"total_params",
///  "trainable_params","total_macs","training_memory_bytes", ...}
Json summaryToJson(const ModelSummary& summary);

/// A torchinfo-like table with totals.
std::string formatSummaryTable(const ModelSummary& summary);

/// "1.2 MiB", "532 B".
std::string formatBytes(std::int64_t bytes);
/// "1,234,567"
std::string formatCount(std::int64_t n);

}  // namespace netsmith::graph
